// Plain C++ model of the core/v1 and storage.k8s.io/v1 objects kube-scheduler's volume and
// namespace-aware filters read: PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode
// and Namespace (the parts the scheduler uses; everything else is kept in `unknown`). Same
// conventions as types.h; the codec (codec.h) decodes and encodes them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "controller/api/types.h"

namespace draco::api {

struct ObjectReference {  // core/v1 ObjectReference (PV claimRef)
  std::string kind;
  std::string namespace_;  // "namespace"
  std::string name;
  std::string uid;
  UnknownFields unknown;
  friend bool operator==(const ObjectReference&, const ObjectReference&) = default;
};

struct VolumeNodeAffinity {
  std::optional<NodeSelector> required;
  UnknownFields unknown;
  friend bool operator==(const VolumeNodeAffinity&, const VolumeNodeAffinity&) = default;
};

struct CSIPersistentVolumeSource {
  std::string driver;
  std::string volume_handle;
  UnknownFields unknown;
  friend bool operator==(const CSIPersistentVolumeSource&,
                         const CSIPersistentVolumeSource&) = default;
};

struct PersistentVolumeSpec {
  ResourceList capacity;
  std::vector<std::string> access_modes;
  std::optional<ObjectReference> claim_ref;
  std::string storage_class_name;
  std::optional<VolumeNodeAffinity> node_affinity;
  std::optional<std::string> volume_mode;  // Filesystem (default) | Block
  std::optional<CSIPersistentVolumeSource> csi;
  std::optional<GCEPersistentDiskVolumeSource> gce_persistent_disk;
  std::optional<AWSElasticBlockStoreVolumeSource> aws_elastic_block_store;
  UnknownFields unknown;
  friend bool operator==(const PersistentVolumeSpec&, const PersistentVolumeSpec&) = default;
};

struct PersistentVolumeStatus {
  std::string phase;
  UnknownFields unknown;
  friend bool operator==(const PersistentVolumeStatus&, const PersistentVolumeStatus&) = default;
};

struct PersistentVolume {
  std::string api_version = "v1";
  std::string kind = "PersistentVolume";
  ObjectMeta metadata;
  PersistentVolumeSpec spec;
  PersistentVolumeStatus status;
  UnknownFields unknown;
  friend bool operator==(const PersistentVolume&, const PersistentVolume&) = default;
};

struct VolumeResourceRequirements {
  ResourceList limits;
  ResourceList requests;
  UnknownFields unknown;
  friend bool operator==(const VolumeResourceRequirements&,
                         const VolumeResourceRequirements&) = default;
};

struct PersistentVolumeClaimSpec {
  std::vector<std::string> access_modes;
  std::optional<LabelSelector> selector;
  VolumeResourceRequirements resources;
  std::string volume_name;
  std::optional<std::string> storage_class_name;
  std::optional<std::string> volume_mode;
  UnknownFields unknown;
  friend bool operator==(const PersistentVolumeClaimSpec&,
                         const PersistentVolumeClaimSpec&) = default;
};

struct PersistentVolumeClaimStatus {
  std::string phase;
  UnknownFields unknown;
  friend bool operator==(const PersistentVolumeClaimStatus&,
                         const PersistentVolumeClaimStatus&) = default;
};

struct PersistentVolumeClaim {
  std::string api_version = "v1";
  std::string kind = "PersistentVolumeClaim";
  ObjectMeta metadata;
  PersistentVolumeClaimSpec spec;
  PersistentVolumeClaimStatus status;
  UnknownFields unknown;
  friend bool operator==(const PersistentVolumeClaim&, const PersistentVolumeClaim&) = default;
};

struct TopologySelectorLabelRequirement {
  std::string key;
  std::vector<std::string> values;
  UnknownFields unknown;
  friend bool operator==(const TopologySelectorLabelRequirement&,
                         const TopologySelectorLabelRequirement&) = default;
};

struct TopologySelectorTerm {
  std::vector<TopologySelectorLabelRequirement> match_label_expressions;
  UnknownFields unknown;
  friend bool operator==(const TopologySelectorTerm&, const TopologySelectorTerm&) = default;
};

struct StorageClass {
  std::string api_version = "storage.k8s.io/v1";
  std::string kind = "StorageClass";
  ObjectMeta metadata;
  std::string provisioner;
  std::optional<std::string> volume_binding_mode;  // Immediate (default) | WaitForFirstConsumer
  std::vector<TopologySelectorTerm> allowed_topologies;
  UnknownFields unknown;
  friend bool operator==(const StorageClass&, const StorageClass&) = default;
};

struct VolumeNodeResources {
  std::optional<int64_t> count;
  UnknownFields unknown;
  friend bool operator==(const VolumeNodeResources&, const VolumeNodeResources&) = default;
};

struct CSINodeDriver {
  std::string name;
  std::string node_id;  // "nodeID"
  std::vector<std::string> topology_keys;
  std::optional<VolumeNodeResources> allocatable;
  UnknownFields unknown;
  friend bool operator==(const CSINodeDriver&, const CSINodeDriver&) = default;
};

struct CSINodeSpec {
  std::vector<CSINodeDriver> drivers;
  UnknownFields unknown;
  friend bool operator==(const CSINodeSpec&, const CSINodeSpec&) = default;
};

struct CSINode {
  std::string api_version = "storage.k8s.io/v1";
  std::string kind = "CSINode";
  ObjectMeta metadata;
  CSINodeSpec spec;
  UnknownFields unknown;
  friend bool operator==(const CSINode&, const CSINode&) = default;
};

struct Namespace {
  std::string api_version = "v1";
  std::string kind = "Namespace";
  ObjectMeta metadata;
  UnknownFields unknown;  // spec, status
  friend bool operator==(const Namespace&, const Namespace&) = default;
};

}  // namespace draco::api
