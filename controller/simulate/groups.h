// All-or-nothing pod groups in `draco simulate`, decided as the controller decides them
// (controller/reconcilers/group_sync.cc, controller/group/group.h).
//
// The pods of one group (group::GroupOf: PodGroup gangs, with the input's scheduling.k8s.io
// PodGroups; draco.dev/group labels; LeaderWorkerSet, JobSet and Kueue pods) are placed in one
// decision at the position of the group's first unbound pod in input order: group::PlanGroup places
// the unbound members one after the other through RunGroup (each result committed, so the next
// member sees those devices taken; a member goes where the previous one went when it fits) and
// undoes an attempt that cannot reach the minimum (allocations cleared, placed pods removed, the
// allocator rebuilt), then tries the next value of the group's match attribute. Either at least
// the minimum of members get devices, or none does and every member is pending with the
// group's explanation (group::DescribeFailure: which member, why). Pods with spec.nodeName are
// placed already: they count against the minimum (the controller's released members) and are
// simulated on their own. A group with fewer members than its minimum, or without a known
// minimum, stays pending ("N of M member(s) exist"). Once bound members reach the minimum, the
// others join one by one, in the group's match-attribute value when one is in use.
//
// Thread-compatible, like Simulation.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "controller/group/group.h"
#include "controller/simulate/engine.h"

namespace draco::simulate {

struct PodGroupUnits {
  group::GroupRef ref;        // from the group's first pod in input order
  std::vector<size_t> units;  // unbound members: indices into Simulation::groups, input order
  std::vector<size_t> bound;  // members with spec.nodeName (simulated on their own)
};

// The pod groups among sim.groups, in order of their first unit. `group_of` gets, per unit, the
// index of its group among the result (bound members included), or -1.
std::vector<PodGroupUnits> FindPodGroups(const Simulation& sim, std::vector<int>* group_of);

struct PodGroupOutcome {
  bool placed = false;
  // "group JobSet pytorch: 4 member(s) placed at once in gpu.example.com/clique=a", or why
  // not ("group JobSet pytorch: NOT PLACED: ...").
  std::string summary;
  std::vector<GroupOutcome> members;  // parallel to PodGroupUnits::units
};

// Places the unbound members of `pg` all-or-nothing (see above); their results are committed
// when the group is placed.
PodGroupOutcome RunPodGroup(Simulation& sim, const PodGroupUnits& pg);

}  // namespace draco::simulate
