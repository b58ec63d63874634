// Conversion of older resource.k8s.io versions to resource.k8s.io/v1, the way kube-apiserver
// converts them (k8s.io/kubernetes pkg/apis/resource/v1beta1 and v1beta2 conversion), so that
// manifests written for v1beta1 (NVIDIA's quickstart templates) or v1beta2 read as the same v1
// objects the API server would store. Only the shape changes; values are not validated here.
//
// Pure functions on RapidJSON values; thread-safe for distinct values.
#pragma once

#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "base/status.h"

namespace draco::api {

// The resource.k8s.io versions draco reads from manifests, newest first.
inline constexpr std::string_view kResourceGroup = "resource.k8s.io";

// Whether `api_version` ("group/version" or "v1") is one draco can read for `kind`:
// core "v1", resource.k8s.io/{v1,v1beta2,v1beta1}, draco.dev/v1alpha1, and versions of other
// groups (ignored by callers, e.g. apps/v1). Returns an InvalidArgument error naming the version
// and the versions draco reads when it is an unknown version of a group draco models.
Status CheckApiVersion(std::string_view api_version, std::string_view kind);

// Rewrites `obj` (a whole object with apiVersion resource.k8s.io/v1beta1 or v1beta2) in place to
// its resource.k8s.io/v1 form and sets apiVersion to "resource.k8s.io/v1". Objects already in v1
// and objects of other groups are left unchanged. v1beta1: device requests' flat fields move into
// `exactly`; ResourceSlice devices' `basic` is flattened; a slice's empty nodeName and false
// allNodes are dropped. v1beta2 has the v1 shape. `alloc` must be the allocator owning `obj`.
Status ConvertResourceToV1(rapidjson::Value& obj, rapidjson::Document::AllocatorType& alloc);

}  // namespace draco::api
