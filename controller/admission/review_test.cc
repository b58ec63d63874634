#include "controller/admission/review.h"

#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "controller/admission/gate.h"
#include "controller/api/codec.h"
#include "k8sclient/config.h"

namespace draco::admission {
namespace {

std::string Review(const std::string& operation, const std::string& kind, const std::string& object,
                   const std::string& api_version = "admission.k8s.io/v1") {
  return R"({"apiVersion":")" + api_version + R"(","kind":"AdmissionReview","request":{)" +
         R"("uid":"705ab4f5-6393-11e8-b7cc-42010a800002","kind":{"group":"","version":"v1","kind":")" +
         kind + R"("},"resource":{"group":"","version":"v1","resource":"pods"},)" +
         R"("namespace":"team-a","operation":")" + operation + R"(","object":)" + object + "}}";
}

const char kClaimPod[] =
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"p-","namespace":"team-a"},)"
    R"("spec":{"containers":[{"name":"c","image":"busybox","resources":{"claims":[{"name":"gpu"}]}}],)"
    R"("resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"t"}]}})";
const char kPlainPod[] =
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c"}]}})";

rapidjson::Document Parse(const std::string& s) {
  rapidjson::Document d;
  d.Parse(s.c_str());
  EXPECT_FALSE(d.HasParseError()) << s;
  return d;
}

TEST(ReviewTest, ParsesTheRequest) {
  auto r = ParseAdmissionReview(Review("CREATE", "Pod", kClaimPod));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->uid, "705ab4f5-6393-11e8-b7cc-42010a800002");
  EXPECT_EQ(r->operation, "CREATE");
  EXPECT_EQ(r->kind, "Pod");
  EXPECT_EQ(r->kind_version, "v1");
  EXPECT_EQ(r->namespace_name, "team-a");
  EXPECT_TRUE(api::Decode<api::Pod>(r->object_json).ok());
}

TEST(ReviewTest, GatesAPodWithClaims) {
  ReviewResult res = HandleReview(Review("CREATE", "Pod", kClaimPod));
  ASSERT_EQ(res.http_code, 200) << res.body;
  EXPECT_TRUE(res.gated);
  auto d = Parse(res.body);
  EXPECT_STREQ(d["apiVersion"].GetString(), "admission.k8s.io/v1");
  EXPECT_STREQ(d["kind"].GetString(), "AdmissionReview");
  const auto& resp = d["response"];
  EXPECT_STREQ(resp["uid"].GetString(), "705ab4f5-6393-11e8-b7cc-42010a800002");
  EXPECT_TRUE(resp["allowed"].GetBool());
  EXPECT_STREQ(resp["patchType"].GetString(), "JSONPatch");
  auto patch = k8s::Base64Decode(resp["patch"].GetString());
  ASSERT_TRUE(patch.ok());
  EXPECT_EQ(*patch, GatePatch(*api::Decode<api::Pod>(kClaimPod)));
}

TEST(ReviewTest, AllowsUnchangedWhatItDoesNotGate) {
  for (const auto& body : {Review("CREATE", "Pod", kPlainPod), Review("UPDATE", "Pod", kClaimPod),
                           Review("CREATE", "Binding", "{}"), Review("DELETE", "Pod", "null")}) {
    ReviewResult res = HandleReview(body);
    ASSERT_EQ(res.http_code, 200) << res.body;
    EXPECT_FALSE(res.gated);
    auto d = Parse(res.body);
    EXPECT_TRUE(d["response"]["allowed"].GetBool());
    EXPECT_FALSE(d["response"].HasMember("patch")) << body;
  }
}

TEST(ReviewTest, DeniesAPodItCannotDecode) {
  ReviewResult res =
      HandleReview(Review("CREATE", "Pod", R"({"spec":{"resourceClaims":[{"name":7}]}})"));
  ASSERT_EQ(res.http_code, 200);
  auto d = Parse(res.body);
  EXPECT_FALSE(d["response"]["allowed"].GetBool());
  EXPECT_EQ(d["response"]["status"]["code"].GetInt(), 400);
  EXPECT_NE(
      std::string(d["response"]["status"]["message"].GetString()).find("resourceClaims[0].name"),
      std::string::npos)
      << res.body;
}

TEST(ReviewTest, RejectsWhatIsNotAnAdmissionReviewV1) {
  struct Case {
    std::string body;
    std::string want;
  } cases[] = {
      {"not json", "not JSON"},
      {"[]", "expected a JSON object"},
      {Review("CREATE", "Pod", kClaimPod, "admission.k8s.io/v1beta1"), "expected apiVersion"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})", "request: expected"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{}})",
       "request.uid: required"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":5}})",
       "request.uid: expected string"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","kind":"Pod"}})",
       "request.kind: expected object"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","object":[]}})",
       "request.object: expected object"},
  };
  for (const auto& c : cases) {
    ReviewResult res = HandleReview(c.body);
    EXPECT_EQ(res.http_code, 400) << c.body;
    EXPECT_NE(res.body.find(c.want), std::string::npos) << c.body << " -> " << res.body;
  }
  EXPECT_EQ(HandleReview(std::string(kMaxReviewBytes + 1, ' ')).http_code, 413);
}

TEST(ReviewTest, DeepNestingIsAnErrorNotACrash) {
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  ReviewResult res = HandleReview(
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE","kind":{"version":"v1","kind":"Pod"},"object":{"spec":{"x":)" +
      deep + "}}}}");
  EXPECT_EQ(res.http_code, 400);
  EXPECT_NE(res.body.find("nested deeper than"), std::string::npos) << res.body;
}

}  // namespace
}  // namespace draco::admission
