#include "controller/api/validation.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "controller/api/codec.h"

namespace draco::api {
namespace {

template <class T>
T Load(const std::string& name) {
  std::ifstream in(std::string(DRACO_SOURCE_DIR) + "/tests/golden/api/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  StatusOr<T> obj = DecodeYaml<T>(ss.str());
  EXPECT_TRUE(obj.ok()) << obj.status();
  return obj.ok() ? *obj : T{};
}

std::vector<std::string> Strings(const FieldErrors& errors) {
  std::vector<std::string> out;
  for (const FieldError& e : errors) out.push_back(e.ToString());
  return out;
}

bool HasError(const FieldErrors& errors, std::string_view needle) {
  for (const FieldError& e : errors) {
    if (e.ToString().find(needle) != std::string::npos) return true;
  }
  return false;
}

TEST(ValidationTest, GoldenObjectsAreValid) {
  EXPECT_EQ(Strings(ValidateDeviceClass(Load<DeviceClass>("deviceclass.input.yaml"))),
            std::vector<std::string>{});
  EXPECT_EQ(Strings(ValidateResourceClaim(Load<ResourceClaim>("resourceclaim.input.yaml"))),
            std::vector<std::string>{});
  EXPECT_EQ(Strings(ValidateResourceClaimTemplate(
                Load<ResourceClaimTemplate>("resourceclaimtemplate.input.yaml"))),
            std::vector<std::string>{});
  EXPECT_EQ(Strings(ValidateResourceSlice(Load<ResourceSlice>("resourceslice.input.yaml"))),
            std::vector<std::string>{});
  EXPECT_EQ(
      Strings(ValidateResourceSlice(Load<ResourceSlice>("resourceslice-counters.input.json"))),
      std::vector<std::string>{});
  EXPECT_EQ(Strings(ValidateDeviceTaintRule(Load<DeviceTaintRule>("devicetaintrule.input.yaml"))),
            std::vector<std::string>{});
}

TEST(ValidationTest, ClaimRequestLimits) {
  ResourceClaim c;
  c.metadata.name = "c";
  for (int i = 0; i < 33; ++i) {
    DeviceRequest r;
    r.name = "r" + std::to_string(i);
    r.exactly.emplace().device_class_name = "gpu";
    c.spec.devices.requests.push_back(r);
  }
  EXPECT_EQ(
      Strings(ValidateResourceClaim(c)),
      std::vector<std::string>{"spec.devices.requests: Too many: 33: must have at most 32 items"});
  c.spec.devices.requests.resize(2);
  c.spec.devices.requests[1].name = "r0";
  c.spec.devices.requests[0].exactly->count = 0;
  c.spec.devices.requests[0].exactly->device_class_name = "";
  c.spec.devices.requests[0].exactly->allocation_mode = "Some";
  FieldErrors errs = ValidateResourceClaim(c);
  EXPECT_TRUE(HasError(errs, "spec.devices.requests[1].name: Duplicate value: \"r0\""));
  EXPECT_TRUE(HasError(errs, "spec.devices.requests[0].exactly.deviceClassName: Required value"));
  EXPECT_TRUE(HasError(errs, "spec.devices.requests[0].exactly.allocationMode: Unsupported value"));
  c.spec.devices.requests[0].exactly->allocation_mode = "ExactCount";
  errs = ValidateResourceClaim(c);
  EXPECT_TRUE(HasError(errs,
                       "spec.devices.requests[0].exactly.count: Invalid value: \"0\": "
                       "must be greater than zero"));
  c.spec.devices.requests[0].exactly->allocation_mode = "All";
  c.spec.devices.requests[0].exactly->count = 2;
  EXPECT_TRUE(HasError(ValidateResourceClaim(c), "must not be specified when allocationMode"));
}

TEST(ValidationTest, ClaimStructureRules) {
  ResourceClaim c;
  c.metadata.name = "c";
  DeviceRequest r;
  r.name = "Bad_Name";
  c.spec.devices.requests.push_back(r);
  DeviceRequest sub;
  sub.name = "s";
  for (int i = 0; i < 9; ++i) {
    DeviceSubRequest s;
    s.name = "x" + std::to_string(i);
    s.device_class_name = "c";
    sub.first_available.push_back(s);
  }
  c.spec.devices.requests.push_back(sub);
  DeviceConstraint dc;
  dc.requests = {"s/x1", "nope", "s/x1/y"};
  dc.match_attribute = "noDomain";
  c.spec.devices.constraints.push_back(dc);
  DeviceClaimConfiguration cfg;
  cfg.opaque.emplace().driver = "Example.COM";
  cfg.opaque->parameters.json = "[1]";
  c.spec.devices.config.push_back(cfg);
  DeviceSelector sel;
  sel.cel.emplace().expression = std::string(10 * 1024 + 1, 'x');
  c.spec.devices.requests[1].first_available.resize(1);
  c.spec.devices.requests[1].first_available[0].selectors.push_back(sel);
  FieldErrors errs = ValidateResourceClaim(c);
  EXPECT_TRUE(HasError(errs, "spec.devices.requests[0].name: Invalid value: \"Bad_Name\""));
  EXPECT_TRUE(HasError(errs, "exactly one of `exactly` or `firstAvailable` is required"));
  EXPECT_TRUE(HasError(errs, "spec.devices.constraints[0].requests[1]: Invalid value: \"nope\""));
  EXPECT_TRUE(HasError(errs, "spec.devices.constraints[0].requests[2]: Invalid value"));
  EXPECT_TRUE(HasError(errs,
                       "spec.devices.constraints[0].matchAttribute: Invalid value: "
                       "\"noDomain\": must include a domain"));
  EXPECT_TRUE(HasError(errs, "spec.devices.config[0].opaque.parameters: Invalid value"));
  EXPECT_TRUE(HasError(errs,
                       "spec.devices.requests[1].firstAvailable[0].selectors[0].cel."
                       "expression: Too long: may not be more than 10240 bytes"));
  EXPECT_FALSE(HasError(errs, "config[0].opaque.driver"));  // drivers are case-insensitive
  sub.first_available.resize(9);
  c.spec.devices.requests[1] = sub;
  EXPECT_TRUE(
      HasError(ValidateResourceClaim(c),
               "spec.devices.requests[1].firstAvailable: Too many: 9: must have at most 8"));
}

TEST(ValidationTest, Tolerations) {
  ExactDeviceRequest e;
  e.device_class_name = "c";
  DeviceToleration t;
  t.operator_ = "Equal";  // empty key requires Exists
  e.tolerations.push_back(t);
  DeviceToleration t2;
  t2.key = "k";
  t2.operator_ = "Exists";
  t2.value = "v";
  t2.effect = "Sometimes";
  e.tolerations.push_back(t2);
  ResourceClaimSpec spec;
  DeviceRequest r;
  r.name = "r";
  r.exactly = e;
  spec.devices.requests.push_back(r);
  FieldErrors errs = ValidateResourceClaimSpec(spec, "spec");
  EXPECT_TRUE(HasError(errs, "tolerations[0].operator: Invalid value"));
  EXPECT_TRUE(HasError(errs, "tolerations[1].operator: Invalid value: \"v\""));
  EXPECT_TRUE(HasError(errs, "tolerations[1].effect: Unsupported value: \"Sometimes\""));
}

TEST(ValidationTest, StatusRules) {
  ResourceClaim c = Load<ResourceClaim>("resourceclaim.input.yaml");
  c.status.allocation->devices.results[0].request = "missing";
  c.status.devices[0].device = "gpu-9";
  c.status.reserved_for.push_back(c.status.reserved_for[0]);
  FieldErrors errs = ValidateResourceClaim(c);
  EXPECT_TRUE(HasError(errs, "status.allocation.devices.results[0].request: Invalid value"));
  EXPECT_TRUE(HasError(errs, "status.devices[0]: Invalid value"));
  EXPECT_TRUE(HasError(errs, "status.reservedFor[1].uid: Duplicate value"));
  c.status.allocation.reset();
  EXPECT_TRUE(HasError(ValidateResourceClaim(c), "status.reservedFor: Forbidden"));
}

TEST(ValidationTest, SliceRules) {
  ResourceSlice s = Load<ResourceSlice>("resourceslice.input.yaml");
  s.spec.node_name = "node-1";  // two node-selection fields
  Device& d = s.spec.devices[0];
  d.attributes["bad"].int_value = 1;
  d.attributes["bad"].string_value = "x";
  d.attributes["v"].version_value = "1.02.3";
  d.attributes["long"].string_value = std::string(65, 'a');
  d.binding_failure_conditions.reset();
  d.allow_multiple_allocations = false;
  d.taints[0].effect = "";
  FieldErrors errs = ValidateResourceSlice(s);
  EXPECT_TRUE(HasError(errs, "spec: Invalid value: \"\": exactly one of `nodeName`"));
  EXPECT_TRUE(HasError(errs, "spec.devices[0].attributes.bad: Invalid value: \"\": exactly one"));
  EXPECT_TRUE(HasError(errs, "spec.devices[0].attributes.v.version: Invalid value: \"1.02.3\""));
  EXPECT_TRUE(HasError(errs, "spec.devices[0].attributes.long.string: Too long"));
  EXPECT_TRUE(HasError(errs, "must both be set or both be empty"));
  EXPECT_TRUE(HasError(errs, "spec.devices[0].capacity.cores.requestPolicy: Forbidden"));
  EXPECT_TRUE(HasError(errs, "spec.devices[0].taints[0].effect: Required value"));

  ResourceSlice many;
  many.metadata.name = "s";
  many.spec.driver = "d.example.com";
  many.spec.pool = {"p", 0, 1, {}};
  many.spec.all_nodes = true;
  for (int i = 0; i < 129; ++i) {
    Device dev;
    dev.name = "d" + std::to_string(i);
    many.spec.devices.push_back(dev);
  }
  EXPECT_EQ(Strings(ValidateResourceSlice(many)),
            std::vector<std::string>{"spec.devices: Too many: 129: must have at most 128 items"});
  many.spec.devices.resize(65);
  many.spec.devices[0].taints.push_back({"k", "", "NoSchedule", std::nullopt, {}});
  EXPECT_EQ(Strings(ValidateResourceSlice(many)),
            std::vector<std::string>{"spec.devices: Too many: 65: must have at most 64 items"});
  many.spec.devices.resize(1);
  for (int i = 0; i < 33; ++i)
    many.spec.devices[0].attributes["a" + std::to_string(i)].bool_value = true;
  EXPECT_TRUE(HasError(ValidateResourceSlice(many),
                       "the total number of attributes and "
                       "capacities must not exceed 32"));
}

TEST(ValidationTest, CapacityPolicy) {
  ResourceSlice s = Load<ResourceSlice>("resourceslice.input.yaml");
  DeviceCapacity& slots = s.spec.devices[0].capacity["slots"];
  slots.request_policy->valid_values = {*Quantity::Parse("2"), *Quantity::Parse("1"),
                                        *Quantity::Parse("8")};
  DeviceCapacity& cores = s.spec.devices[0].capacity["cores"];
  cores.request_policy->default_ = *Quantity::Parse("0");
  cores.request_policy->valid_range->step = *Quantity::Parse("3");
  FieldErrors errs = ValidateResourceSlice(s);
  EXPECT_TRUE(HasError(errs,
                       "capacity.slots.requestPolicy.validValues[1]: Invalid value: \"1\": "
                       "values must be sorted"));
  EXPECT_TRUE(HasError(errs, "validValues[2]: Invalid value: \"8\": option is larger"));
  EXPECT_TRUE(HasError(errs,
                       "capacity.cores.requestPolicy.default: Invalid value: \"0\": "
                       "default is less than min"));
  EXPECT_TRUE(HasError(errs,
                       "capacity.cores.requestPolicy.validRange.max: Invalid value: "
                       "\"128\": max is not on a step"));
}

TEST(ValidationTest, NameFormats) {
  EXPECT_TRUE(IsDnsLabel("a-1"));
  EXPECT_FALSE(IsDnsLabel("-a"));
  EXPECT_FALSE(IsDnsLabel(std::string(64, 'a')));
  EXPECT_TRUE(IsDnsSubdomain("gpu.example.com"));
  EXPECT_FALSE(IsDnsSubdomain("gpu..example"));
  EXPECT_TRUE(IsQualifiedName("model"));
  EXPECT_TRUE(IsQualifiedName("Example.com/Model_1"));
  EXPECT_FALSE(IsQualifiedName("1model"));
  EXPECT_FALSE(IsQualifiedName(std::string(33, 'a')));
  EXPECT_TRUE(IsFullyQualifiedName("a.b/c"));
  EXPECT_FALSE(IsFullyQualifiedName("c"));
  EXPECT_TRUE(IsLabelName("example.com/a.b_c-d"));
  EXPECT_FALSE(IsLabelName("example.com/"));
  EXPECT_TRUE(IsStrictSemver("1.2.3-rc.1+build.01"));
  EXPECT_FALSE(IsStrictSemver("1.2"));
  EXPECT_FALSE(IsStrictSemver("1.2.3-01"));
  EXPECT_FALSE(IsStrictSemver("v1.2.3"));
  EXPECT_EQ(ToStatus({{"a", "x"}, {"b", "y"}}).message(), "a: x; b: y");
  EXPECT_TRUE(ToStatus({}).ok());
}

}  // namespace
}  // namespace draco::api
