#!/usr/bin/env bash
# Least privilege: every verb and every resource the chart's ClusterRole and Role grant is needed.
# For each verb of each rule, and each resource of each multi-resource rule, a ServiceAccount gets
# the chart's RBAC with just that element removed; the API server's RBAC authorizer must then deny
# at least one call draco makes (chart_lib.sh required_actions), and the unmodified RBAC must allow
# them all. All variants are applied at once and checked with bulk SubjectAccessReviews.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/chart_lib.sh"
find_helm || fail "no helm binary in DRACO_BIN"
NS=draco-lp
tmp=$(mktemp -d)
cleanup() {
  k delete clusterrole,clusterrolebinding -l draco-e2e=least-privilege --ignore-not-found >/dev/null 2>&1 || true
  drop_ns "$NS"
  rm -rf "$tmp"
}
trap cleanup EXIT
fresh_ns "$NS"

render -n "$NS" --show-only templates/rbac.yaml >"$tmp/rbac.yaml"
split_docs "$tmp/rbac.yaml" "$tmp/docs"
cr=$(doc_of_kind "$tmp/docs" ClusterRole) || fail "chart renders no ClusterRole"
role=$(doc_of_kind "$tmp/docs" Role) || fail "chart renders no Role"

# rules FILE: one line per rule, "verbs...|resources...".
rules() {
  k create --dry-run=client -f "$1" -o jsonpath='{range .rules[*]}{.verbs[*]}{"|"}{.resources[*]}{"\n"}{end}'
}
# variant ID CR-PATCH ROLE-PATCH: the ClusterRole, Role, bindings and ServiceAccount of one
# variant; each PATCH is a JSON-patch op list (may be empty) applied to the chart's object.
variant() {
  local id=$1 crp=$2 rp=$3 d=$tmp/v/$1
  mkdir -p "$d"
  local meta='{"op":"replace","path":"/metadata/labels","value":{"draco-e2e":"least-privilege"}}'
  k patch --local -f "$cr" --type=json -o yaml \
    -p "[{\"op\":\"replace\",\"path\":\"/metadata/name\",\"value\":\"$NS-$id\"},$meta${crp:+,$crp}]" >"$d/cr.yaml"
  k patch --local -f "$role" --type=json -o yaml \
    -p "[{\"op\":\"replace\",\"path\":\"/metadata/name\",\"value\":\"$id\"},{\"op\":\"replace\",\"path\":\"/metadata/namespace\",\"value\":\"$NS\"},$meta${rp:+,$rp}]" >"$d/role.yaml"
  cat >"$d/bind.yaml" <<YAML
apiVersion: v1
kind: ServiceAccount
metadata: {name: $id, namespace: $NS}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: $NS-$id, labels: {draco-e2e: least-privilege}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: $NS-$id}
subjects: [{kind: ServiceAccount, name: $id, namespace: $NS}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: $id, namespace: $NS}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: $id}
subjects: [{kind: ServiceAccount, name: $id, namespace: $NS}]
YAML
}

# removal_ops RULES-LINE INDEX KIND(verb|resource) J: the JSON-patch op removing element J.
removal_op() {
  local line=$1 i=$2 kind=$3 j=$4 verbs resources n
  verbs=${line%%|*}; resources=${line#*|}
  if [[ $kind == verb ]]; then n=$(wc -w <<<"$verbs"); else n=$(wc -w <<<"$resources"); fi
  if ((n == 1)); then echo "{\"op\":\"remove\",\"path\":\"/rules/$i\"}"
  else echo "{\"op\":\"remove\",\"path\":\"/rules/$i/${kind}s/$j\"}"; fi
}

variant full "" ""
declare -A what
ids=()
for target in cr role; do
  file=$cr; [[ $target == role ]] && file=$role
  i=0
  while IFS= read -r line; do
    verbs=${line%%|*}; resources=${line#*|}
    j=0
    for v in $verbs; do
      id=$target-r$i-v$j
      op=$(removal_op "$line" $i verb $j)
      if [[ $target == cr ]]; then variant "$id" "$op" ""; else variant "$id" "" "$op"; fi
      what[$id]="$(basename "$target") rule $i ($resources): verb $v"
      ids+=("$id"); j=$((j + 1))
    done
    if (($(wc -w <<<"$resources") > 1)); then
      j=0
      for r in $resources; do
        id=$target-r$i-res$j
        op=$(removal_op "$line" $i resource $j)
        if [[ $target == cr ]]; then variant "$id" "$op" ""; else variant "$id" "" "$op"; fi
        what[$id]="$target rule $i ($verbs): resource $r"
        ids+=("$id"); j=$((j + 1))
      done
    fi
    i=$((i + 1))
  done < <(rules "$file")
done
k apply -R -f "$tmp/v" >/dev/null
pass "applied the chart's RBAC and ${#ids[@]} variants with one verb or resource removed"
# The RBAC authorizer sees each of its four object types in creation order. A second unmodified
# copy created after everything else is therefore visible only once every variant is.
rm -rf "$tmp/v"
variant sentinel "" ""
k apply -R -f "$tmp/v" >/dev/null

all_allowed() { ! required_actions | can_batch "system:serviceaccount:$NS:$1" "$NS" | grep -q '^no '; }
eventually 30 "the unmodified chart RBAC allows every call draco makes (and every variant is in effect)" \
  all_allowed sentinel
all_allowed full || fail "the first unmodified copy denies a call draco makes"

superfluous=()
for id in "${ids[@]}"; do
  denied=$(required_actions | can_batch "system:serviceaccount:$NS:$id" "$NS" | sed -n 's/^no //p')
  if [[ -z $denied ]]; then
    superfluous+=("${what[$id]}")
    echo "  ${what[$id]}: nothing draco needs is denied" >&2
  else
    echo "  without ${what[$id]} -> denied: $(tr -s ' ' <<<"$denied" | paste -sd';')"
  fi
done
((${#superfluous[@]} == 0)) || fail "superfluous grants: ${superfluous[*]}"
pass "each of the ${#ids[@]} removals denies at least one call draco makes: the RBAC is least-privilege"
