// libFuzzer target for the API decoders (JSON, YAML manifests) and Quantity/SemVer parsing.
//
// The first input byte picks the mode; the rest is the document. Properties checked:
//   - decoding never crashes, hangs or throws (errors are Status values);
//   - round trip: decode -> encode -> decode gives an equal object, and encoding that object
//     again gives byte-identical JSON;
//   - Quantity: Parse(s) -> ToString() -> Parse gives an equal quantity with the same text;
//   - validation of any decoded object does not crash.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>

#include "controller/api/codec.h"
#include "controller/api/quantity.h"
#include "controller/api/semver.h"
#include "controller/api/validation.h"

namespace {

using namespace draco::api;  // NOLINT(google-build-using-namespace): fuzz harness

[[noreturn]] void Fail(const char* what, std::string_view detail) {
  std::fprintf(stderr, "property violated: %s\n%.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

void Validate(const ResourceClaim& o) { (void)ValidateResourceClaim(o); }
void Validate(const ResourceSlice& o) { (void)ValidateResourceSlice(o); }
void Validate(const DeviceClass& o) { (void)ValidateDeviceClass(o); }
void Validate(const ResourceClaimTemplate& o) { (void)ValidateResourceClaimTemplate(o); }
void Validate(const DeviceTaintRule& o) { (void)ValidateDeviceTaintRule(o); }
void Validate(const Pod&) {}
void Validate(const Node&) {}

template <class T>
void CheckRoundTrip(const T& obj) {
  std::string first = Encode(obj);
  draco::StatusOr<T> again = Decode<T>(first);
  if (!again.ok()) Fail("re-decode failed", first + "\n" + again.status().ToString());
  if (!(*again == obj)) Fail("decode(encode(x)) != x", first);
  std::string second = Encode(*again);
  if (second != first) Fail("encode not stable", first + "\n" + second);
  Validate(obj);
}

template <class T>
void JsonMode(std::string_view doc) {
  draco::StatusOr<T> obj = Decode<T>(doc);
  if (obj.ok()) CheckRoundTrip(*obj);
}

void QuantityMode(std::string_view s) {
  draco::StatusOr<Quantity> q = Quantity::Parse(s);
  if (!q.ok()) return;
  std::string text = q->ToString();
  draco::StatusOr<Quantity> again = Quantity::Parse(text);
  if (!again.ok()) Fail("quantity text does not re-parse", text);
  if (again->Compare(*q) != 0) Fail("quantity changed value", std::string(s) + " -> " + text);
  if (again->ToString() != text) Fail("quantity text not stable", text);
  // Exercise arithmetic and accessors on the parsed value.
  Quantity sum = q->Add(*again).Sub(*q);
  if (sum.Compare(*q) != 0) Fail("q + q - q != q", text);
  (void)q->AsInt64();
  (void)q->AsApproximateFloat64();
  (void)SemVer::Parse(s, s.size() % 2 == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view doc(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 9) {
    case 0: {
      draco::StatusOr<std::vector<Manifest>> m = DecodeManifests(doc);
      if (!m.ok()) return 0;
      for (const Manifest& man : *m) {
        std::visit(
            [](const auto& obj) {
              if constexpr (!std::is_same_v<std::decay_t<decltype(obj)>, std::monostate>) {
                CheckRoundTrip(obj);
              }
            },
            man.object);
      }
      return 0;
    }
    case 1:
      JsonMode<ResourceClaim>(doc);
      return 0;
    case 2:
      JsonMode<ResourceSlice>(doc);
      return 0;
    case 3:
      JsonMode<DeviceClass>(doc);
      return 0;
    case 4:
      JsonMode<ResourceClaimTemplate>(doc);
      return 0;
    case 5:
      JsonMode<DeviceTaintRule>(doc);
      return 0;
    case 6:
      JsonMode<Pod>(doc);
      return 0;
    case 7:
      JsonMode<Node>(doc);
      return 0;
    default:
      QuantityMode(doc);
      return 0;
  }
}
