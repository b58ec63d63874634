// Test helpers: objects from JSON text, snapshots, verdict lookups.
#pragma once

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "controller/api/codec.h"
#include "controller/feasibility/feasibility.h"

namespace draco::feasibility::testing {

template <class T>
std::shared_ptr<const T> Obj(const std::string& json) {
  auto r = api::Decode<T>(json);
  EXPECT_TRUE(r.ok()) << r.status().message() << " in " << json;
  return std::make_shared<T>(r.ok() ? *r : T{});
}

// A ready node with 4 cpu, 8Gi, 110 pods and the given labels (JSON object text).
inline std::shared_ptr<const api::Node> MakeNode(const std::string& name,
                                                 const std::string& labels = "{}",
                                                 const std::string& extra_spec = "{}") {
  return Obj<api::Node>(R"({"metadata":{"name":")" + name + R"(","labels":)" + labels +
                        R"(},"spec":)" + extra_spec +
                        R"(,"status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}})");
}

// A pod in namespace "ns" with the given labels and spec (JSON object text).
inline std::shared_ptr<const api::Pod> MakePod(const std::string& name, const std::string& labels,
                                               const std::string& spec) {
  return Obj<api::Pod>(R"({"metadata":{"name":")" + name + R"(","namespace":"ns","labels":)" +
                       labels + R"(},"spec":)" + spec + "}");
}

// "ok" or the rejecting plugin, per node, joined by spaces.
inline std::string Results(const api::Pod& pod, const Snapshot& s) {
  std::string out;
  for (const auto& v : Evaluate(pod, s)) {
    if (!out.empty()) out += " ";
    out += v.passed ? "ok" : (v.error ? "error" : v.plugin);
  }
  return out;
}

}  // namespace draco::feasibility::testing
