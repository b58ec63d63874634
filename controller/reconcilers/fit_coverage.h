// FitCoversPod: whether draco's node filtering (node_fit.h) models every constraint kube-scheduler
// will check for the pod. draco pins a released pod to its devices' node (required node affinity
// in the gate removal) only when this is true: a pin cannot be taken back once the gate is gone,
// so pinning a pod with a constraint draco did not check could leave it Pending for good.
//
// MERGE NOTE: a stand-in until controller/feasibility lands; the lead replaces the body of
// FitCoversPod with `return feasibility::CoversPod(pod);` (same contract).
// Pure function; thread-safe.
#pragma once

#include "controller/api/types.h"

namespace draco::reconcilers {

// Conservative: false for a pod handled by another scheduler (schedulerName other than
// default-scheduler: its profile may add filters) and for every constraint node_fit.h does not
// model (pod affinity/anti-affinity, topology spread, host ports, volumes other than ephemeral
// local ones, requests other than cpu and memory). A false answer only costs the pin.
bool FitCoversPod(const api::Pod& pod);

}  // namespace draco::reconcilers
