#include "controller/allocator/node_selector.h"

#include <gtest/gtest.h>

namespace draco::alloc {
namespace {

NodeSelector Sel(std::vector<NodeSelectorRequirement> exprs,
                 std::vector<NodeSelectorRequirement> fields = {}) {
  NodeSelector ns;
  ns.terms.push_back({std::move(exprs), std::move(fields)});
  return ns;
}

TEST(NodeSelectorTest, NameAndAllNodesDecideFirst) {
  Node n{"node-1", {{"zone", "a"}}, {}};
  EXPECT_TRUE(*NodeMatches(n, "node-1", false, nullptr));
  EXPECT_FALSE(*NodeMatches(n, "node-2", true, nullptr));
  EXPECT_TRUE(*NodeMatches(n, "", true, nullptr));
  EXPECT_FALSE(*NodeMatches(n, "", false, nullptr));
}

TEST(NodeSelectorTest, ExpressionsAndFields) {
  Node n{"node-1", {{"zone", "a"}, {"gen", "5"}}, {}};
  auto m = [&](const NodeSelector& s) { return *NodeMatches(n, "", false, &s); };
  EXPECT_TRUE(m(Sel({{"zone", "In", {"a", "b"}}})));
  EXPECT_FALSE(m(Sel({{"zone", "NotIn", {"a"}}})));
  EXPECT_TRUE(m(Sel({{"rack", "NotIn", {"r1"}}})));
  EXPECT_TRUE(m(Sel({{"gen", "Gt", {"4"}}})));
  EXPECT_FALSE(m(Sel({{"gen", "Lt", {"4"}}})));
  EXPECT_TRUE(m(Sel({{"zone", "Exists", {}}}, {{"metadata.name", "In", {"node-1"}}})));
  EXPECT_FALSE(m(Sel({}, {{"metadata.name", "In", {"node-2"}}})));
  EXPECT_FALSE(m(NodeSelector{}));  // no terms: nothing matches
}

TEST(NodeSelectorTest, FieldsIgnoredForNamelessNode) {
  Node n{"", {}, {}};
  auto s = Sel({}, {{"metadata.name", "In", {"node-2"}}});
  EXPECT_TRUE(*NodeMatches(n, "", false, &s));
}

TEST(NodeSelectorTest, InvalidSelectorsAreErrors) {
  Node n{"node-1", {}, {}};
  for (const auto& s : {Sel({{"zone", "Like", {"a"}}}), Sel({{"zone", "In", {}}}),
                        Sel({{"bad key!", "Exists", {}}}), Sel({{"gen", "Gt", {"x"}}}),
                        Sel({}, {{"metadata.name", "In", {"a", "b"}}})}) {
    EXPECT_FALSE(NodeMatches(n, "", false, &s).ok());
  }
}

}  // namespace
}  // namespace draco::alloc
