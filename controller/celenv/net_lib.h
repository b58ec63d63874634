// Kubernetes CEL libraries for network values (k8s.io/apiserver/pkg/cel/library ip.go, cidr.go,
// urls.go): `ip(...)`, `cidr(...)`, `url(...)` and their member functions, with Go net/netip and
// net/url parsing rules.
//
// Thread-safety: registration happens while the Env is built; the functions are pure.
#pragma once

#include "controller/cel/env.h"

namespace draco::celenv {

// Adds the IP, CIDR and URL libraries to `env`.
void AddNetLibraries(cel::Env& env);

}  // namespace draco::celenv
