// SemVer: semantic versions with the semantics of github.com/blang/semver/v4 as used by the
// Kubernetes CEL semver library (semver(), isSemver(), compareTo(), ...).
//
// Value type; thread-compatible.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace draco::api {

class SemVer {
 public:
  // blang semver.Parse: strict MAJOR.MINOR.PATCH[-pre][+build], no leading zeros in numeric
  // parts. With `normalize`, first applies the Kubernetes CEL normalisation (semver(s, true)):
  // strip one leading "v", drop leading zeros of the dot-separated parts, and fill a missing
  // minor/patch with 0 (a short version may not carry pre-release/build data).
  // Errors are INVALID_ARGUMENT with upstream's message text.
  static StatusOr<SemVer> Parse(std::string_view s, bool normalize = false);

  uint64_t major() const { return major_; }
  uint64_t minor() const { return minor_; }
  uint64_t patch() const { return patch_; }

  // -1, 0 or 1 by semver precedence: pre-release sorts before release, numeric identifiers
  // before alphanumeric ones; build metadata is ignored.
  int Compare(const SemVer& o) const;
  std::string ToString() const;

  friend bool operator==(const SemVer& a, const SemVer& b) { return a.Compare(b) == 0; }
  friend std::ostream& operator<<(std::ostream& os, const SemVer& v) { return os << v.ToString(); }

 private:
  struct PreRelease {
    bool is_num = false;
    uint64_t num = 0;
    std::string str;
  };
  uint64_t major_ = 0, minor_ = 0, patch_ = 0;
  std::vector<PreRelease> pre_;
  std::vector<std::string> build_;
};

}  // namespace draco::api
