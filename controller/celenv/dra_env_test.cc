#include "controller/celenv/dra_env.h"

#include <gtest/gtest.h>

namespace draco::celenv {
namespace {

std::shared_ptr<const DeviceData> Gpu() {
  return DeviceDataBuilder("dra.example.com")
      .String("model", "a100")
      .Int("cores", 108)
      .Version("driverVersion", "1.2.3")
      .StringList("ext.example.com/features", {"mig", "nvlink"})
      .Capacity("memory", *api::Quantity::Parse("40Gi"))
      .Build();
}

std::string Select(const std::string& expr, const DeviceData& d, uint64_t* cost = nullptr) {
  auto sel = CompileSelector(expr);
  if (!sel.ok()) return "compile: " + sel.status().message();
  auto m = (*sel)->Matches(d, cost);
  if (!m.ok()) return "error: " + m.status().message();
  return *m ? "true" : "false";
}

TEST(DraEnvTest, DeviceVariable) {
  auto d = Gpu();
  EXPECT_EQ(Select(R"(device.driver == "dra.example.com")", *d), "true");
  EXPECT_EQ(Select(R"(device.attributes["dra.example.com"].model == "a100")", *d), "true");
  EXPECT_EQ(Select(R"("mig" in device.attributes["ext.example.com"].features)", *d), "true");
  EXPECT_EQ(Select(R"(device.attributes["ext.example.com"].features.includes("nvlink"))", *d),
            "true");
  EXPECT_EQ(Select(R"(device.allowMultipleAllocations)", *d), "false");
  EXPECT_EQ(Select(R"(device.attributes["other.io"].size() == 0)", *d), "true");
  EXPECT_EQ(Select(R"("other.io" in device.attributes)", *d), "false");
  EXPECT_EQ(Select(R"(device.attributes["dra.example.com"].missing == 1)", *d),
            "error: no such key: missing");
  EXPECT_EQ(Select(R"(has(device.attributes["dra.example.com"].missing))", *d), "false");
  EXPECT_EQ(Select(R"(device.attributes["dra.example.com"].model)", *d),
            "error: CEL result of type string could not be converted to bool");
  EXPECT_EQ(Select("device.foo", *d).rfind("compile:", 0), 0u);
  EXPECT_EQ(Select("1", *d), "compile: must evaluate to bool or the unknown type, not int");
}

TEST(DraEnvTest, QuantityAndSemver) {
  auto d = Gpu();
  EXPECT_EQ(
      Select(R"(device.capacity["dra.example.com"].memory.compareTo(quantity("32Gi")) >= 0)", *d),
      "true");
  EXPECT_EQ(Select(R"(device.capacity["dra.example.com"].memory == quantity("40Gi"))", *d), "true");
  EXPECT_EQ(Select(R"(quantity("1.5").isInteger() || quantity("2k").asInteger() == 2000)", *d),
            "true");
  EXPECT_EQ(Select(R"(quantity("1Gi").add(quantity("1Gi")).isGreaterThan(quantity("2G")))", *d),
            "true");
  EXPECT_EQ(
      Select(R"(device.attributes["dra.example.com"].driverVersion.isGreaterThan(semver("1.2.0")))",
             *d),
      "true");
  EXPECT_EQ(Select(R"(device.attributes["dra.example.com"].driverVersion.major() == 1)", *d),
            "true");
  EXPECT_EQ(Select(R"(isSemver("1.0") || !isQuantity("x"))", *d), "true");
  EXPECT_EQ(Select(R"(semver("v1") == semver("1.0.0"))", *d).rfind("error:", 0), 0u);
}

TEST(DraEnvTest, InvalidVersionAttributeFailsEveryEvaluation) {
  auto d = DeviceDataBuilder("d.io").Version("v", "not-a-version").Build();
  EXPECT_EQ(Select("true", *d).rfind("error: attribute v: parse semantic version", 0), 0u);
}

TEST(DraEnvTest, CostLimit) {
  auto d = Gpu();
  EXPECT_EQ(Select("lists.range(1000).all(i, lists.range(1000).all(j, i + j >= 0))", *d),
            "error: operation cancelled: actual cost limit exceeded");
  uint64_t cost = 0;
  EXPECT_EQ(Select(R"(device.driver == "dra.example.com")", *d, &cost), "true");
  EXPECT_EQ(cost, 4u);  // ident 1 + select 1 + equality ceil(15 * 0.1) = 2
}

}  // namespace
}  // namespace draco::celenv
