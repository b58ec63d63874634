#include "controller/api/pod_claims.h"

#include <gtest/gtest.h>

namespace draco::api {
namespace {

TEST(ResolveClaimNameTest, FollowsUpstreamRules) {
  api::Pod pod;
  api::PodResourceClaim direct;
  direct.name = "a";
  direct.resource_claim_name = "user-claim";
  auto r = ResolveClaimName(pod, direct);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->name, "user-claim");
  EXPECT_FALSE(r->must_check_owner);

  api::PodResourceClaim tmpl;
  tmpl.name = "b";
  tmpl.resource_claim_template_name = "t";
  r = ResolveClaimName(pod, tmpl);
  EXPECT_TRUE(r->not_created_yet);
  api::PodResourceClaimStatus st;
  st.name = "b";
  st.resource_claim_name = "gen-b";
  pod.status.resource_claim_statuses.push_back(st);
  r = ResolveClaimName(pod, tmpl);
  EXPECT_EQ(r->name, "gen-b");
  EXPECT_TRUE(r->must_check_owner);

  api::PodResourceClaim neither;
  neither.name = "c";
  EXPECT_FALSE(ResolveClaimName(pod, neither).ok());
}

}  // namespace
}  // namespace draco::api
