#!/usr/bin/env bash
# CRD upgrades on the real control plane. Helm installs charts/draco/crds/ once and never upgrades
# them; the platform guide ("Upgrading") says to apply them first with
#   kubectl apply --server-side --force-conflicts -f charts/draco/crds/
# This test installs an older chart (its CRD lacks spec.priority and has another description) the
# way Helm does, shows that `helm upgrade` to the current chart leaves that CRD old (a policy's
# priority is pruned), then runs the documented command and shows the CRD current: the field is
# kept, the description new, the applier owns the schema. The CRD is deleted first when no
# AllocationPolicy exists (so Helm creates it), and is left current at the end.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/chart_lib.sh"
find_helm || fail "no helm binary in DRACO_BIN"
command -v python3 >/dev/null && python3 -c 'import yaml' 2>/dev/null ||
  { echo "SKIP: needs python3 with yaml (python3-yaml)" >&2; exit 77; }
REL=draco-crdup
NS=draco-crdup-system
CRD=allocationpolicies.draco.dev
POLICY=crdup-priority
tmp=$(mktemp -d)
cleanup() {
  helm uninstall "$REL" -n "$NS" --wait=false >/dev/null 2>&1 || true
  k delete allocationpolicy "$POLICY" --ignore-not-found >/dev/null 2>&1 || true
  # Whatever happened, leave the current CRD behind for the other tests.
  k apply --server-side --force-conflicts -f "$CHART_DIR/crds/" >/dev/null 2>&1 || true
  drop_ns "$NS"
  rm -rf "$tmp"
}
trap cleanup EXIT
on_fail() {
  k get crd "$CRD" -o yaml | head -40
  k get crd "$CRD" -o jsonpath='{range .metadata.managedFields[*]}{.manager} {.operation}{"\n"}{end}'
}

# The older chart: a copy whose CRD has no spec.priority (and no Priority column) and an older
# description.
cp -r "$CHART_DIR" "$tmp/old-chart"
python3 - "$CHART_DIR/crds/draco.dev_allocationpolicies.yaml" "$tmp/old-chart/crds/draco.dev_allocationpolicies.yaml" <<'EOF'
import sys, yaml
crd = yaml.safe_load(open(sys.argv[1]))
v = crd["spec"]["versions"][0]
spec = v["schema"]["openAPIV3Schema"]["properties"]["spec"]
del spec["properties"]["priority"]
v["additionalPrinterColumns"] = [c for c in v["additionalPrinterColumns"] if c["name"] != "Priority"]
v["schema"]["openAPIV3Schema"]["description"] = "AllocationPolicy (older chart)."
yaml.safe_dump(crd, open(sys.argv[2], "w"), sort_keys=False)
EOF
desc() { k get crd "$CRD" -o jsonpath='{.spec.versions[0].schema.openAPIV3Schema.description}'; }
has_priority() {
  [[ -n $(k get crd "$CRD" -o jsonpath='{.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.priority.type}') ]]
}
policy() {
  cat <<YAML
apiVersion: draco.dev/v1alpha1
kind: AllocationPolicy
metadata: {name: $POLICY}
spec:
  deviceClassSelector: {names: [crdup.draco.dev]}
  strategy: BinPack
  priority: 7
YAML
}

fresh_ns "$NS"
common=(-n "$NS" --set admission.enabled=false --set claimLifecycle=draco --set replicas=0)
if [[ -z $(k get allocationpolicies -o name 2>/dev/null) ]]; then
  k delete crd "$CRD" --ignore-not-found --wait=true >/dev/null
  helm install "$REL" "$tmp/old-chart" "${common[@]}" >/dev/null || fail "helm install of the older chart"
  pass "helm install of the older chart created its CRD (the way Helm installs crds/)"
else
  # Other AllocationPolicies exist: do not delete them with the CRD; put the older CRD in place.
  k replace -f "$tmp/old-chart/crds/" >/dev/null || fail "replacing the CRD with the older one"
  helm install "$REL" "$tmp/old-chart" "${common[@]}" >/dev/null || fail "helm install of the older chart"
  pass "older CRD in place (kubectl replace: AllocationPolicies exist, the CRD was kept)"
fi
k wait --for=condition=Established "crd/$CRD" --timeout=60s >/dev/null
[[ $(desc) == "AllocationPolicy (older chart)." ]] && ! has_priority || fail "the older CRD is not installed"

helm upgrade "$REL" "$CHART_DIR" "${common[@]}" >/dev/null || fail "helm upgrade to the current chart"
[[ $(desc) == "AllocationPolicy (older chart)." ]] && ! has_priority ||
  fail "helm upgrade changed the CRD (Helm is documented to leave crds/ alone)"
policy | k apply --validate=warn -f - >/dev/null 2>"$tmp/warn" || fail "creating a policy on the older CRD"
[[ -z $(k get allocationpolicy "$POLICY" -o jsonpath='{.spec.priority}') ]] ||
  fail "the older CRD kept spec.priority"
pass "helm upgrade leaves the older CRD: spec.priority is pruned ($(grep -o 'unknown field[^,]*' "$tmp/warn" | head -1))"

# The documented step, before helm upgrade.
if out=$(k apply --server-side -f "$CHART_DIR/crds/" 2>&1); then
  echo "note: --server-side without --force-conflicts succeeded here: $out"
else
  grep -qi conflict <<<"$out" || fail "kubectl apply --server-side failed for another reason: $out"
  pass "without --force-conflicts the apply conflicts with the fields Helm created ($(grep -o 'conflict[^:]*' <<<"$out" | head -1))"
fi
k apply --server-side --force-conflicts -f "$CHART_DIR/crds/" >/dev/null || fail "the documented CRD upgrade failed"
k wait --for=condition=Established "crd/$CRD" --timeout=60s >/dev/null
want=$(python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["description"])' \
  "$CHART_DIR/crds/draco.dev_allocationpolicies.yaml")
[[ $(desc) == "$want" ]] || fail "description not upgraded: $(desc)"
has_priority || fail "spec.priority not in the upgraded CRD"
cols=$(k get crd "$CRD" -o jsonpath='{.spec.versions[0].additionalPrinterColumns[*].name}')
[[ $cols == *Priority* ]] || fail "Priority column missing after the upgrade: $cols"
policy | k apply -f - >/dev/null || fail "applying the policy on the upgraded CRD"
[[ $(k get allocationpolicy "$POLICY" -o jsonpath='{.spec.priority}') == 7 ]] ||
  fail "spec.priority not kept after the CRD upgrade"
pass "kubectl apply --server-side --force-conflicts -f charts/draco/crds/ upgrades the CRD (schema, columns, description)"
helm upgrade "$REL" "$CHART_DIR" "${common[@]}" >/dev/null || fail "helm upgrade after the CRD upgrade"
pass "helm upgrade runs after the CRD upgrade"
