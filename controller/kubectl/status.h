// `kubectl draco status`: each running draco's leader and who owns the claim lifecycle, as the
// leader recorded them on its Lease (controller/run/term.h): holderIdentity and renewTime, and
// the annotations draco.dev/claim-lifecycle (draco | upstream | undecided), -reason and -since.
//
// Leases named `lease_name` are listed in every namespace (a field selector on metadata.name),
// so it finds draco wherever the chart installed it. Thread-compatible.
#pragma once

#include <ostream>
#include <string>

#include "k8sclient/rest_client.h"

namespace draco::kubectl {

// Prints one block per Lease found (text) or a JSON array (`output` json/yaml is the caller's to
// convert). Returns 0 when at least one Lease was found, 1 when none, 2 on an API error.
int RunStatus(k8s::RestClient& client, const std::string& lease_name, const std::string& output,
              std::ostream& out, std::ostream& err);

}  // namespace draco::kubectl
