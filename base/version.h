// The build's identity, for `draco --version`, the draco_build_info metric and the User-Agent of
// every API request.
//
// Version() is CMake's project version (project(draco VERSION ...) in CMakeLists.txt). Revision()
// is the source revision the binary was built from: the cache variable DRACO_REVISION
// (-DDRACO_REVISION=...; the Dockerfile passes its REVISION build-arg), or when that is empty
// `git rev-parse --short HEAD` at configure time, or "unknown" (no git, no .git, as in the image
// build's context). Both are fixed at build time; all functions are thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace draco {

// "0.1.0".
std::string_view Version();
// "3f2a9c1", a full commit id, or "unknown".
std::string_view Revision();
// Go's GOOS/GOARCH spelling of the build target: "linux/amd64", "linux/arm64".
std::string_view Platform();
// What `draco --version` prints: "draco 0.1.0 (revision 3f2a9c1, linux/amd64)".
std::string VersionLine();
// client-go's DefaultKubernetesUserAgent form: "<binary>/<version> (<os>/<arch>)
// kubernetes/<revision, first 7 characters>", e.g. "draco/0.1.0 (linux/amd64) kubernetes/3f2a9c1".
std::string UserAgent(std::string_view binary);

}  // namespace draco
