#include "controller/simulate/simulate.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace draco::simulate {
namespace {

const std::string kSamples = std::string(DRACO_SOURCE_DIR) + "/e2e/samples/simulate";

TEST(SimulateTest, SamplesAllocateAllButTheImpossibleJob) {
  Options opts;
  opts.paths = {kSamples};
  std::ostringstream out, err;
  EXPECT_EQ(RunSimulate(opts, out, err), 1) << err.str();
  std::string s = out.str();
  EXPECT_NE(s.find("pod default/train: allocated"), std::string::npos) << s;
  EXPECT_NE(s.find("part/big -> gpu.example.com/"), std::string::npos) << s;
  EXPECT_NE(s.find("pod default/big-job: NOT ALLOCATED"), std::string::npos) << s;
  EXPECT_NE(s.find("after class selectors"), std::string::npos) << s;
  // The pre-allocated gpu-0 on gpu-node-0 is never handed out again.
  EXPECT_EQ(s.find("gpu-node-0/gpu-0\n"), std::string::npos) << s;
  EXPECT_NE(s.find("3 allocated, 1 not allocated"), std::string::npos) << s;
}

TEST(SimulateTest, AllAllocatedExitsZero) {
  Options opts;
  opts.paths = {kSamples + "/00-nodes.yaml", kSamples + "/10-classes.yaml",
                kSamples + "/20-slices.yaml"};
  std::string tmp = ::testing::TempDir() + "/pod.yaml";
  std::ofstream(tmp)
      << "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: one}\n"
         "spec:\n  devices:\n    requests:\n    - name: g\n      exactly: "
         "{deviceClassName: gpu}\n";
  opts.paths.push_back(tmp);
  opts.json = true;
  std::ostringstream out, err;
  EXPECT_EQ(RunSimulate(opts, out, err), 0) << err.str() << out.str();
  EXPECT_NE(out.str().find("\"allocated\":1"), std::string::npos) << out.str();
}

TEST(SimulateTest, InputErrorsExitTwo) {
  Options opts;
  opts.paths = {"/nonexistent/path"};
  std::ostringstream out, err;
  EXPECT_EQ(RunSimulate(opts, out, err), 2);
  std::string tmp = ::testing::TempDir() + "/bad.yaml";
  std::ofstream(tmp) << "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {resourceClaims: "
                        "[{name: x}]}\n";
  opts.paths = {tmp};
  EXPECT_EQ(RunSimulate(opts, out, err), 2);
}

TEST(SimulateTest, ExplainNamesTheFunnel) {
  Options opts;
  opts.paths = {kSamples};
  opts.claim = "too-big";
  std::ostringstream out, err;
  EXPECT_EQ(RunExplain(opts, out, err), 1) << err.str();
  EXPECT_NE(out.str().find("needs 4"), std::string::npos) << out.str();
  opts.json = true;
  std::ostringstream jout;
  EXPECT_EQ(RunExplain(opts, jout, err), 1);
  EXPECT_NE(jout.str().find("\"funnel\""), std::string::npos) << jout.str();
}

}  // namespace
}  // namespace draco::simulate
