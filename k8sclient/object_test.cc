#include "k8sclient/object.h"

#include <thread>

#include <gtest/gtest.h>

namespace draco::k8s {
namespace {

TEST(ObjectTest, ExtractsMetadata) {
  auto o = Object::Parse(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a",
    "namespace":"ns","uid":"u","resourceVersion":"5","labels":{"x":"1"},
    "annotations":{"y":"2"},"deletionTimestamp":"2026-01-01T00:00:00Z"}})");
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ((*o)->Key(), "ns/a");
  EXPECT_EQ((*o)->kind(), "ConfigMap");
  EXPECT_EQ((*o)->api_version(), "v1");
  EXPECT_EQ((*o)->uid(), "u");
  EXPECT_EQ((*o)->resource_version(), "5");
  EXPECT_EQ((*o)->labels().at("x"), "1");
  EXPECT_EQ((*o)->annotations().at("y"), "2");
  EXPECT_TRUE((*o)->has_deletion_timestamp());
}

TEST(ObjectTest, ClusterScopedKeyIsName) {
  auto o = Object::Parse(R"({"metadata":{"name":"node-0"}})");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ((*o)->Key(), "node-0");
}

TEST(ObjectTest, RejectsNonObjects) {
  EXPECT_FALSE(Object::Parse("[1]").ok());
  EXPECT_FALSE(Object::Parse("{").ok());
}

TEST(ObjectTest, LazyDocIsSharedAcrossThreads) {
  auto o = Object::Parse(R"({"metadata":{"name":"a"},"data":{"k":"v"}})");
  ASSERT_TRUE(o.ok());
  ObjectPtr obj = *o;
  std::vector<std::thread> ts;
  std::vector<const rapidjson::Document*> seen(4);
  for (int i = 0; i < 4; ++i) ts.emplace_back([&, i] { seen[i] = &obj->doc(); });
  for (auto& t : ts) t.join();
  for (auto* d : seen) EXPECT_EQ(d, seen[0]);
  EXPECT_STREQ(obj->doc()["data"]["k"].GetString(), "v");
}

TEST(ObjectTest, ParsesListPages) {
  auto l = ParseObjectList(R"({"kind":"ConfigMapList","metadata":{"resourceVersion":"99",
    "continue":"tok","remainingItemCount":3},"items":[{"metadata":{"name":"a"}},
    {"metadata":{"name":"b","namespace":"n"}}]})");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->resource_version, "99");
  EXPECT_EQ(l->continue_token, "tok");
  EXPECT_EQ(l->remaining_item_count, 3);
  ASSERT_EQ(l->items.size(), 2u);
  EXPECT_EQ(l->items[1]->Key(), "n/b");
  auto reparsed = Object::Parse(l->items[1]->json());
  ASSERT_TRUE(reparsed.ok());
  EXPECT_EQ((*reparsed)->Key(), "n/b");
  auto empty = ParseObjectList(R"({"metadata":{"resourceVersion":"1"},"items":null})");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->items.empty());
}

}  // namespace
}  // namespace draco::k8s
