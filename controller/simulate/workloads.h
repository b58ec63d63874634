// Workload expansion for `draco simulate` and `draco explain`: the pods the workload controllers
// would create for Deployments, ReplicaSets, StatefulSets, Jobs, JobSets and LeaderWorkerSets.
//
// Each pod is spec.template's metadata (labels, annotations) and spec, in the workload's
// namespace, as a v1 Pod manifest in JSON, so that the caller decodes it like any Pod (its
// resourceClaims and templates handled as for plain pods). How many and which names:
//   apps/v1 Deployment      spec.replicas (default 1) pods "<deployment>-<hash>-<suffix>"
//   apps/v1 ReplicaSet      spec.replicas (default 1) pods "<replicaset>-<suffix>"
//   apps/v1 StatefulSet     spec.replicas (default 1) pods "<statefulset>-<ordinal>", ordinals
//                           from spec.ordinals.start (default 0)
//   batch/v1 Job            spec.parallelism (default 1) capped by spec.completions, 0 when
//                           spec.suspend; "<job>-<suffix>", Indexed jobs "<job>-<index>-<suffix>"
//   jobset.x-k8s.io/v1alpha2 JobSet  per spec.replicatedJobs[]: replicas (default 1) Jobs
//                           "<jobset>-<replicatedJob>-<n>" expanded as Jobs (Indexed by default)
//   leaderworkerset.x-k8s.io/v1 LeaderWorkerSet  spec.replicas (default 1) groups of
//                           leaderWorkerTemplate.size (default 1) pods: leader "<lws>-<group>"
//                           from leaderTemplate (else workerTemplate), workers
//                           "<lws>-<group>-<worker>" (worker 1 .. size-1) from workerTemplate.
// Pods carry the labels and annotations their controllers set, so that they form the
// all-or-nothing groups the controller forms (controller/group/group.h):
//   Job pods: job-name, batch.kubernetes.io/job-completion-index (Indexed).
//   JobSet pods: jobset.sigs.k8s.io/jobset-name, replicatedjob-name, job-index and
//     global-replicas (the number of Jobs; labels and annotations). Simulate knows each Job's
//     parallelism, so it also annotates draco.dev/group-min-members with the JobSet's total pod
//     count (sum of replicas x pods per Job) unless the pod template sets that key. The live
//     controller cannot know the parallelism from a pod and falls back to global-replicas (one
//     pod per Job): users with parallel Jobs set draco.dev/group-min-members on the template.
//   LeaderWorkerSet pods: leaderworkerset.sigs.k8s.io/name, group-index, worker-index,
//     group-key (a deterministic hash of namespace and "<lws>-<group>"; the real controller's
//     is a SHA-1) and annotation leaderworkerset.sigs.k8s.io/size.
// The real controllers use random suffixes; here <hash> (10 characters) hashes the pod template
// and <suffix> (5 characters) hashes the owner name and the pod's index, both in Kubernetes'
// safe alphabet, so names are deterministic and look like the real ones.
//
// Thread-safe (pure functions).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "base/status.h"

namespace draco::simulate {

// True for the (apiVersion, kind) pairs ExpandWorkload handles.
bool IsWorkloadKind(std::string_view api_version, std::string_view kind);

// The pods of one workload object `doc` (a parsed manifest of a kind IsWorkloadKind accepts), as
// compact JSON Pod manifests. Errors: a missing or malformed pod template, a negative count.
StatusOr<std::vector<std::string>> ExpandWorkload(const rapidjson::Value& doc);

}  // namespace draco::simulate
