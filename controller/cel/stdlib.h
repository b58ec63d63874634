// The standard CEL library as Kubernetes 1.37 configures it for stored expressions: cel-go's
// standard functions and operators (with cross-type numeric comparisons), ext.Strings v2,
// ext.Sets, ext.Lists v3, optional types, two-variable comprehension helpers, the Kubernetes
// regex (find/findAll) and lists (isSorted, sum, min, max, indexOf, lastIndexOf, includes)
// libraries. Costs follow cel-go's CostTracker and Kubernetes' library CostEstimator.
#pragma once

#include "controller/cel/env.h"

namespace draco::cel {

// Adds every standard declaration to `env`. Call once while building the Env.
void AddStandardLibrary(Env& env);

}  // namespace draco::cel
