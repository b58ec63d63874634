// Small UTF-8 helpers shared by the parser and the string functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace draco::cel {

// True if `s` is well-formed UTF-8 (no surrogates, no overlongs).
bool IsValidUtf8(std::string_view s);

// Appends the UTF-8 encoding of code point `cp`.
void AppendUtf8(std::string& out, uint32_t cp);

// Decodes `s` into code points (invalid bytes become U+FFFD, one per byte).
std::vector<uint32_t> DecodeUtf8(std::string_view s);

// Byte offsets of each code point start, plus s.size() at the end.
std::vector<size_t> CodePointOffsets(std::string_view s);

}  // namespace draco::cel
