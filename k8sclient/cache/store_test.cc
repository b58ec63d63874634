#include "k8sclient/cache/store.h"

#include <algorithm>
#include <thread>

#include <gtest/gtest.h>

#include "k8sclient/cache/lister.h"
#include "k8sclient/cache/testing/fake_lister_watcher.h"

namespace draco::k8s::cache {
namespace {

using testing::Obj;
using Strings = std::vector<std::string>;

Strings Sorted(Strings v) {
  std::sort(v.begin(), v.end());
  return v;
}

Strings Keys(const std::vector<ObjectPtr>& objs) {
  Strings out;
  for (const auto& o : objs) out.push_back(o->Key());
  return Sorted(out);
}

std::vector<std::string> ByApp(const Object& o) {
  auto it = o.labels().find("app");
  if (it == o.labels().end()) return {};
  return {it->second};
}

TEST(StoreTest, AddUpdateDeleteGet) {
  auto s = NewStore();
  ASSERT_TRUE(s->Add(Obj("ns", "a", "1")).ok());
  ASSERT_TRUE(s->Add(Obj("", "cluster", "1")).ok());
  EXPECT_EQ(s->GetByKey("ns/a")->resource_version(), "1");
  EXPECT_NE(s->GetByKey("cluster"), nullptr);
  ASSERT_TRUE(s->Update(Obj("ns", "a", "2")).ok());
  EXPECT_EQ(s->GetByKey("ns/a")->resource_version(), "2");
  EXPECT_EQ(s->Size(), 2u);
  ASSERT_TRUE(s->Delete(Obj("ns", "a", "3")).ok());
  EXPECT_EQ(s->GetByKey("ns/a"), nullptr);
  EXPECT_EQ(s->ListKeys(), Strings{"cluster"});
  EXPECT_FALSE(s->Add(Object::Parse("{}").value()).ok());  // no name, no key
}

TEST(StoreTest, ReplaceSwapsEverything) {
  auto s = NewStore();
  ASSERT_TRUE(s->Add(Obj("ns", "old", "1")).ok());
  ASSERT_TRUE(s->Replace({Obj("ns", "x", "5"), Obj("ns", "y", "5")}, "5").ok());
  EXPECT_EQ(Sorted(s->ListKeys()), (Strings{"ns/x", "ns/y"}));
}

TEST(IndexerTest, IndexesFollowUpdatesAndDeletes) {
  auto idx =
      NewIndexer(MetaNamespaceKeyFunc, {{kNamespaceIndex, MetaNamespaceIndexFunc}, {"app", ByApp}});
  ASSERT_TRUE(idx->Add(Obj("ns1", "a", "1", R"({"app":"web"})")).ok());
  ASSERT_TRUE(idx->Add(Obj("ns1", "b", "1", R"({"app":"db"})")).ok());
  ASSERT_TRUE(idx->Add(Obj("ns2", "c", "1", R"({"app":"web"})")).ok());
  EXPECT_EQ(Keys(*idx->ByIndex("app", "web")), (Strings{"ns1/a", "ns2/c"}));
  EXPECT_EQ(Keys(*idx->ByIndex(kNamespaceIndex, "ns1")), (Strings{"ns1/a", "ns1/b"}));
  EXPECT_EQ(Sorted(*idx->IndexKeys("app", "db")), Strings{"ns1/b"});
  EXPECT_EQ(Sorted(idx->ListIndexFuncValues("app")), (Strings{"db", "web"}));

  // Relabel b: it moves from "db" to "web"; the empty "db" value disappears.
  ASSERT_TRUE(idx->Update(Obj("ns1", "b", "2", R"({"app":"web"})")).ok());
  EXPECT_EQ(Keys(*idx->ByIndex("app", "web")), (Strings{"ns1/a", "ns1/b", "ns2/c"}));
  EXPECT_TRUE(idx->ByIndex("app", "db")->empty());
  EXPECT_EQ(idx->ListIndexFuncValues("app"), Strings{"web"});
  EXPECT_EQ(Keys(*idx->Index("app", *Obj("x", "y", "1", R"({"app":"web"})"))),
            (Strings{"ns1/a", "ns1/b", "ns2/c"}));

  ASSERT_TRUE(idx->Delete(Obj("ns1", "a", "3")).ok());
  EXPECT_EQ(Keys(*idx->ByIndex("app", "web")), (Strings{"ns1/b", "ns2/c"}));
  EXPECT_EQ(idx->ByIndex("nope", "x").status().code(), StatusCode::kNotFound);
}

TEST(IndexerTest, ReplaceRebuildsIndexes) {
  auto idx = NewIndexer(MetaNamespaceKeyFunc, {{"app", ByApp}});
  ASSERT_TRUE(idx->Add(Obj("ns", "a", "1", R"({"app":"web"})")).ok());
  ASSERT_TRUE(idx->Replace({Obj("ns", "b", "2", R"({"app":"db"})")}, "2").ok());
  EXPECT_TRUE(idx->ByIndex("app", "web")->empty());
  EXPECT_EQ(Keys(*idx->ByIndex("app", "db")), Strings{"ns/b"});
}

TEST(IndexerTest, AddIndexersIndexesExistingObjects) {
  auto idx = NewIndexer();
  ASSERT_TRUE(idx->Add(Obj("ns", "a", "1", R"({"app":"web"})")).ok());
  ASSERT_TRUE(idx->AddIndexers({{"app", ByApp}}).ok());
  EXPECT_EQ(Keys(*idx->ByIndex("app", "web")), Strings{"ns/a"});
  EXPECT_EQ(idx->AddIndexers({{"app", ByApp}}).code(), StatusCode::kAlreadyExists);
}

TEST(IndexerTest, ConcurrentReadersAndWriters) {
  auto idx = NewIndexer(MetaNamespaceKeyFunc, {{kNamespaceIndex, MetaNamespaceIndexFunc}});
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int i = 0; i < 2000; ++i) {
      (void)idx->Add(
          Obj("ns" + std::to_string(i % 4), "o" + std::to_string(i % 50), std::to_string(i)));
      if (i % 7 == 0) (void)idx->Delete(Obj("ns0", "o0", "x"));
    }
    done = true;
  });
  std::thread reader([&] {
    while (!done.load()) {
      for (const auto& o : idx->List()) ASSERT_FALSE(o->name().empty());
      (void)idx->ByIndex(kNamespaceIndex, "ns1");
    }
  });
  writer.join();
  reader.join();
  auto keys = idx->IndexKeys(kNamespaceIndex, "ns2");
  ASSERT_TRUE(keys.ok());
  for (const auto& key : *keys) {
    EXPECT_NE(idx->GetByKey(key), nullptr);
  }
}

TEST(LabelSelectorTest, ParsesAndMatches) {
  std::map<std::string, std::string> labels{{"app", "web"}, {"tier", "front"}};
  auto m = [&](const std::string& sel) {
    auto s = LabelSelector::Parse(sel);
    EXPECT_TRUE(s.ok()) << sel << ": " << s.status();
    return s.ok() && s->Matches(labels);
  };
  EXPECT_TRUE(m(""));
  EXPECT_TRUE(m("app=web"));
  EXPECT_TRUE(m("app==web"));
  EXPECT_FALSE(m("app=db"));
  EXPECT_TRUE(m("app!=db"));
  EXPECT_TRUE(m("app"));
  EXPECT_FALSE(m("!app"));
  EXPECT_TRUE(m("!missing"));
  EXPECT_TRUE(m("app in (db, web)"));
  EXPECT_FALSE(m("app notin (db,web)"));
  EXPECT_TRUE(m("app=web, tier in (front,back)"));
  EXPECT_FALSE(m("app=web,tier=back"));
  EXPECT_TRUE(m("missing notin (x)"));
  EXPECT_FALSE(LabelSelector::Parse("app in web").ok());
  EXPECT_FALSE(LabelSelector::Parse("app=web,,").ok());
}

TEST(ListerTest, GetListAndNamespaceList) {
  auto idx = NewIndexer(MetaNamespaceKeyFunc, {{kNamespaceIndex, MetaNamespaceIndexFunc}});
  ASSERT_TRUE(idx->Add(Obj("ns1", "a", "1", R"({"app":"web"})")).ok());
  ASSERT_TRUE(idx->Add(Obj("ns1", "b", "1", R"({"app":"db"})")).ok());
  ASSERT_TRUE(idx->Add(Obj("ns2", "c", "1", R"({"app":"web"})")).ok());
  ASSERT_TRUE(idx->Add(Obj("", "node", "1")).ok());
  Lister lister(*idx);
  EXPECT_EQ(lister.Get("ns1", "a")->Key(), "ns1/a");
  EXPECT_EQ(lister.Get("", "node")->Key(), "node");
  EXPECT_EQ(lister.Get("ns1", "zzz"), nullptr);
  EXPECT_EQ(lister.List().size(), 4u);
  EXPECT_EQ(Keys(lister.List(*LabelSelector::Parse("app=web"))), (Strings{"ns1/a", "ns2/c"}));
  EXPECT_EQ(Keys(lister.ListNamespace("ns1")), (Strings{"ns1/a", "ns1/b"}));
  EXPECT_EQ(Keys(lister.ListNamespace("ns1", *LabelSelector::Parse("app!=web"))), Strings{"ns1/b"});
  // Without a namespace index the lister filters.
  auto plain = NewIndexer();
  ASSERT_TRUE(plain->Add(Obj("ns1", "a", "1")).ok());
  ASSERT_TRUE(plain->Add(Obj("ns2", "b", "1")).ok());
  EXPECT_EQ(Keys(Lister(*plain).ListNamespace("ns2")), Strings{"ns2/b"});
}

}  // namespace
}  // namespace draco::k8s::cache
