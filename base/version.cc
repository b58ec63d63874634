#include "base/version.h"

// Set on this file only by base/CMakeLists.txt, so a new revision recompiles one file.
#ifndef DRACO_VERSION
#define DRACO_VERSION "0.0.0"
#endif
#ifndef DRACO_REVISION
#define DRACO_REVISION "unknown"
#endif

namespace draco {

std::string_view Version() { return DRACO_VERSION; }

std::string_view Revision() { return DRACO_REVISION; }

std::string_view Platform() {
#if defined(__linux__) && defined(__x86_64__)
  return "linux/amd64";
#elif defined(__linux__) && defined(__aarch64__)
  return "linux/arm64";
#elif defined(__linux__)
  return "linux/unknown";
#else
  return "unknown/unknown";
#endif
}

std::string VersionLine() {
  return "draco " + std::string(Version()) + " (revision " + std::string(Revision()) + ", " +
         std::string(Platform()) + ")";
}

std::string UserAgent(std::string_view binary) {
  // client-go's adjustCommit: the first 7 characters of the commit.
  return std::string(binary) + "/" + std::string(Version()) + " (" + std::string(Platform()) +
         ") kubernetes/" + std::string(Revision().substr(0, 7));
}

}  // namespace draco
