#include "controller/allocator/features.h"

#include <gtest/gtest.h>

namespace draco::alloc {
namespace {

TEST(FeaturesTest, DefaultsFollowTheServerVersion) {
  Features v34 = DefaultFeatures(34);
  EXPECT_TRUE(v34.admin_access);
  EXPECT_TRUE(v34.prioritized_list);
  EXPECT_FALSE(v34.partitionable_devices);
  EXPECT_FALSE(v34.device_taints);
  EXPECT_FALSE(v34.device_taint_rules);
  EXPECT_FALSE(v34.consumable_capacity);
  EXPECT_FALSE(v34.device_binding);

  Features v36 = DefaultFeatures(36);
  EXPECT_TRUE(v36.partitionable_devices);
  EXPECT_TRUE(v36.device_taints);
  EXPECT_FALSE(v36.device_taint_rules);  // beta, but its API is off by default
  EXPECT_TRUE(v36.consumable_capacity);
  EXPECT_TRUE(v36.device_binding);
  EXPECT_FALSE(v36.list_type_attributes);

  Features v37 = DefaultFeatures(37);
  EXPECT_TRUE(v37.device_taint_rules);
  EXPECT_FALSE(v37.fractional_capacity_range);
  EXPECT_FALSE(v37.compatibility_groups);
  EXPECT_FALSE(v37.derived_attributes);
  // The allocator's own defaults are kube-scheduler 1.37's.
  EXPECT_EQ(FeatureGatesString(v37), FeatureGatesString(Features{}));
  // Versions outside the table get the nearest known defaults.
  EXPECT_EQ(FeatureGatesString(DefaultFeatures(31)), FeatureGatesString(v34));
  EXPECT_EQ(FeatureGatesString(DefaultFeatures(40)), FeatureGatesString(v37));
}

// Each version's own pkg/features/kube_features.go (k8s.io/kubernetes v1.34.4, v1.35.4, v1.36.3,
// v1.37.2), transcribed: the default of every DRA gate the allocator reads, in FeatureGateNames()
// order. A gate the version does not have yet reads false.
TEST(FeaturesTest, DefaultsMatchEachVersionsKubeFeatures) {
  EXPECT_EQ(
      FeatureGatesString(DefaultFeatures(34)),
      "DRAAdminAccess=true,DRAConsumableCapacity=false,DRADerivedAttributes=false,"
      "DRADeviceBindingConditions=false,DRADeviceCompatibilityGroups=false,"
      "DRADeviceTaintRules=false,DRADeviceTaints=false,DRAExtendedResource=false,"
      "DRAFractionalCapacityRange=false,"
      "DRAListTypeAttributes=false,DRAOptionalNodeOperations=false,"
      "DRAPartitionableDevices=false,DRAPrioritizedList=true,DRAWorkloadResourceClaims=false");
  EXPECT_EQ(
      FeatureGatesString(DefaultFeatures(35)),
      "DRAAdminAccess=true,DRAConsumableCapacity=false,DRADerivedAttributes=false,"
      "DRADeviceBindingConditions=false,DRADeviceCompatibilityGroups=false,"
      "DRADeviceTaintRules=false,DRADeviceTaints=false,DRAExtendedResource=false,"
      "DRAFractionalCapacityRange=false,"
      "DRAListTypeAttributes=false,DRAOptionalNodeOperations=false,"
      "DRAPartitionableDevices=false,DRAPrioritizedList=true,DRAWorkloadResourceClaims=false");
  EXPECT_EQ(FeatureGatesString(DefaultFeatures(36)),
            "DRAAdminAccess=true,DRAConsumableCapacity=true,DRADerivedAttributes=false,"
            "DRADeviceBindingConditions=true,DRADeviceCompatibilityGroups=false,"
            "DRADeviceTaintRules=false,DRADeviceTaints=true,DRAExtendedResource=true,"
            "DRAFractionalCapacityRange=false,"
            "DRAListTypeAttributes=false,DRAOptionalNodeOperations=false,"
            "DRAPartitionableDevices=true,DRAPrioritizedList=true,DRAWorkloadResourceClaims=false");
  EXPECT_EQ(FeatureGatesString(DefaultFeatures(37)),
            "DRAAdminAccess=true,DRAConsumableCapacity=true,DRADerivedAttributes=false,"
            "DRADeviceBindingConditions=true,DRADeviceCompatibilityGroups=false,"
            "DRADeviceTaintRules=true,DRADeviceTaints=true,DRAExtendedResource=true,"
            "DRAFractionalCapacityRange=false,"
            "DRAListTypeAttributes=false,DRAOptionalNodeOperations=false,"
            "DRAPartitionableDevices=true,DRAPrioritizedList=true,DRAWorkloadResourceClaims=false");
}

// Which gates each version knows (kube-scheduler refuses the others) and which it locks.
TEST(FeaturesTest, GatesExistAndLockPerVersion) {
  struct Case {
    int minor;
    const char* gate;
    bool accepted;
  };
  const Case cases[] = {
      // DRADeviceTaintRules split from DRADeviceTaints in 1.35 (alpha), beta (off) in 1.36.
      {34, "DRADeviceTaintRules=true", false},
      {35, "DRADeviceTaintRules=true", true},
      {36, "DRADeviceTaintRules=true", true},
      // DRAListTypeAttributes: alpha from 1.36.
      {35, "DRAListTypeAttributes=true", false},
      {36, "DRAListTypeAttributes=true", true},
      // DRAAdminAccess: beta in 1.34 and 1.35, GA and locked from 1.36.
      {35, "DRAAdminAccess=false", true},
      {36, "DRAAdminAccess=false", false},
      {36, "DRAAdminAccess=true", true},
      // DRAPrioritizedList: GA in 1.36 but settable; locked from 1.37.
      {35, "DRAPrioritizedList=false", true},
      {36, "DRAPrioritizedList=false", true},
      {37, "DRAPrioritizedList=false", false},
      // 1.37's new alpha gates are unknown to 1.36.
      {36, "DRADerivedAttributes=true", false},
      {36, "DRADeviceCompatibilityGroups=true", false},
      {36, "DRAOptionalNodeOperations=true", false},
      {36, "DRAFractionalCapacityRange=true", false},
  };
  for (const Case& c : cases) {
    Features f = DefaultFeatures(c.minor);
    EXPECT_EQ(ApplyFeatureGates(c.gate, c.minor, f).ok(), c.accepted)
        << c.gate << " on 1." << c.minor;
  }
}

TEST(FeaturesTest, GatesOverrideDefaults) {
  Features f = DefaultFeatures(34);
  ASSERT_TRUE(
      ApplyFeatureGates(" DRAPartitionableDevices=true, DRAConsumableCapacity = true,", 34, f)
          .ok());
  EXPECT_TRUE(f.partitionable_devices);
  EXPECT_TRUE(f.consumable_capacity);
  EXPECT_FALSE(f.device_taints);
  ASSERT_TRUE(ApplyFeatureGates("", 34, f).ok());
}

TEST(FeaturesTest, BadGatesAreRejectedAndChangeNothing) {
  Features f = DefaultFeatures(37);
  Status s = ApplyFeatureGates("DRAListTypeAttributes=true,NoSuchGate=true", 37, f);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("unknown feature gate NoSuchGate"), std::string::npos) << s;
  EXPECT_FALSE(f.list_type_attributes);
  // Not yet in 1.34.
  EXPECT_FALSE(ApplyFeatureGates("DRADeviceCompatibilityGroups=true", 34, f).ok());
  EXPECT_TRUE(ApplyFeatureGates("DRADeviceCompatibilityGroups=true", 37, f).ok());
  // Locked in 1.37, settable in 1.36.
  s = ApplyFeatureGates("DRAPrioritizedList=false", 37, f);
  EXPECT_NE(s.message().find("locked to true"), std::string::npos) << s;
  Features g = DefaultFeatures(36);
  EXPECT_TRUE(ApplyFeatureGates("DRAPrioritizedList=false", 36, g).ok());
  EXPECT_FALSE(g.prioritized_list);
  EXPECT_FALSE(ApplyFeatureGates("DRADeviceTaints", 37, f).ok());
  EXPECT_FALSE(ApplyFeatureGates("DRADeviceTaints=yes", 37, f).ok());
}

TEST(FeaturesTest, ExtendedResourceAndWorkloadClaimGates) {
  EXPECT_FALSE(DefaultFeatures(34).extended_resource);  // alpha in 1.34 and 1.35
  EXPECT_FALSE(DefaultFeatures(35).extended_resource);
  EXPECT_TRUE(DefaultFeatures(36).extended_resource);
  EXPECT_TRUE(DefaultFeatures(37).extended_resource);
  for (int minor = 34; minor <= 37; ++minor) {
    EXPECT_FALSE(DefaultFeatures(minor).workload_resource_claims) << minor;
  }
  Features f = DefaultFeatures(37);
  // GA and locked in 1.37.
  Status s = ApplyFeatureGates("DRAExtendedResource=false", 37, f);
  EXPECT_NE(s.message().find("locked to true"), std::string::npos) << s;
  Features g = DefaultFeatures(35);
  ASSERT_TRUE(ApplyFeatureGates("DRAExtendedResource=true", 35, g).ok());
  EXPECT_TRUE(g.extended_resource);
  // DRAWorkloadResourceClaims exists from 1.36 (alpha) on; beta but off in 1.37.
  EXPECT_FALSE(ApplyFeatureGates("DRAWorkloadResourceClaims=true", 35, g).ok());
  ASSERT_TRUE(ApplyFeatureGates("DRAWorkloadResourceClaims=true", 37, f).ok());
  EXPECT_TRUE(f.workload_resource_claims);
}

TEST(FeaturesTest, EveryDraSchedulingGateIsKnown) {
  // The gates kube-scheduler 1.37 reads for DRA allocation and claim handling.
  const std::string names = FeatureGateNames();
  for (const char* gate :
       {"DRAAdminAccess", "DRAConsumableCapacity", "DRADerivedAttributes",
        "DRADeviceBindingConditions", "DRADeviceCompatibilityGroups", "DRADeviceTaintRules",
        "DRADeviceTaints", "DRAExtendedResource", "DRAFractionalCapacityRange",
        "DRAListTypeAttributes", "DRAPartitionableDevices", "DRAPrioritizedList",
        "DRAWorkloadResourceClaims"}) {
    EXPECT_NE(names.find(gate), std::string::npos) << gate;
  }
}

}  // namespace
}  // namespace draco::alloc
