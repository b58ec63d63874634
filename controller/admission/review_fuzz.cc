// libFuzzer target: HandleReview (AdmissionReview decoding, pod decoding, response encoding) on
// arbitrary bytes. Properties: never crashes; a 200 answer is a JSON AdmissionReview carrying the
// request's uid.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <rapidjson/document.h>

#include "controller/admission/review.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  draco::admission::ReviewResult r = draco::admission::HandleReview(in);
  if (r.http_code == 200) {
    auto req = draco::admission::ParseAdmissionReview(in);
    rapidjson::Document d;
    d.Parse(r.body.c_str());
    if (!req.ok() || d.HasParseError() || !d.IsObject() || !d.HasMember("response") ||
        std::string_view(d["response"]["uid"].GetString()) != req->uid) {
      std::abort();
    }
  }
  return 0;
}
