#!/usr/bin/env bash
# `draco simulate` on e2e/samples/simulate-workloads (#17): a Deployment, StatefulSet, Job, JobSet
# and LeaderWorkerSet using v1beta1 ResourceClaimTemplates expand into their pods, each gets a GPU
# (8 GPUs, 8 asked for; the JobSet and the LeaderWorkerSet group are placed all-or-nothing), and
# the Service and ConfigMap are listed as ignored. Needs only the draco binary, no control plane.
set -euo pipefail
E2E_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DRACO=${DRACO_BUILD_DIR:-$E2E_ROOT/../build}/controller/draco
[[ -x $DRACO ]] || { echo "SKIP: $DRACO not built" >&2; exit 77; }
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
SAMPLE=$E2E_ROOT/samples/simulate-workloads

rc=0
out=$("$DRACO" simulate -f "$SAMPLE") || rc=$?
[[ $rc == 0 ]] || fail "draco simulate exited $rc: $out"
for want in "workload Deployment gpu-test4/inference: 2 pods" \
  "workload StatefulSet gpu-test4/db: 1 pods" "workload Job gpu-test4/train: 2 pods" \
  "workload JobSet gpu-test4/sweep: 2 pods" "workload LeaderWorkerSet gpu-test4/serve: 2 pods" \
  "pod gpu-test4/db-0: allocated on node-" "pod gpu-test4/serve-0: allocated (no resource claims)" \
  "pod gpu-test4/serve-0-1: allocated on node-" \
  "ignored: 2 objects of unknown kinds: Service/db, ConfigMap/settings" \
  "9 allocated, 0 not allocated"; do
  grep -qF -- "$want" <<<"$out" || fail "simulate output lacks '$want': $out"
done
pass "workloads expand into 9 pods, all allocated; unknown kinds listed"
# Every GPU is handed out exactly once.
gpus=$(grep -oE -- '-> gpu.nvidia.com/node-[ab]/gpu-[0-3]' <<<"$out" | sort)
[[ $(wc -l <<<"$gpus") == 8 && -z $(uniq -d <<<"$gpus") ]] || fail "GPUs not 8 distinct: $gpus"
pass "8 distinct GPUs allocated"
# Names follow the controllers: <deployment>-<hash>-<suffix>, <job>-<suffix>, <jobset>-<rjob>-<n>-<i>-<suffix>.
grep -qE "pod gpu-test4/inference-[bcdfghjklmnpqrstvwxz2456789]{10}-[bcdfghjklmnpqrstvwxz2456789]{5}: allocated" <<<"$out" \
  || fail "Deployment pod names do not look like ReplicaSet pods: $out"
grep -qE "pod gpu-test4/sweep-worker-1-0-[bcdfghjklmnpqrstvwxz2456789]{5}: allocated" <<<"$out" \
  || fail "JobSet pod names are not <jobset>-<rjob>-<n>-<index>-<suffix>"
pass "pod names look like the controllers' names"

# Three more inference replicas than GPUs: simulate says which pods stay pending, exit 1.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$SAMPLE"/*.yaml "$tmp"/
sed -i '0,/replicas: 2$/s//replicas: 5/' "$tmp/10-workloads.yaml"  # the Deployment
rc=0
out=$("$DRACO" simulate -f "$tmp") || rc=$?
[[ $rc == 1 ]] || fail "simulate with 11 GPU pods for 8 GPUs exited $rc, want 1: $out"
# The JobSet and the LeaderWorkerSet group are all-or-nothing (#19): neither fits, so the GPU-less
# leader stays pending with its worker.
grep -qF "8 allocated, 4 not allocated" <<<"$out" || fail "want 8 allocated, 4 not (2 groups pending): $out"
grep -qF "group JobSet sweep: NOT PLACED: JobSet sweep needs 2 member(s) placed at once" <<<"$out" \
  || fail "no group line for the JobSet: $out"
grep -qF "pod gpu-test4/serve-0: NOT ALLOCATED (cannot place the group: LeaderWorkerSet serve group 0 needs 2" <<<"$out" \
  || fail "the leader is not pending with its group: $out"
pass "more replicas than GPUs: 4 pods not allocated (two whole groups), exit 1"

# Only unknown kinds: an input error, not a silent success.
printf 'apiVersion: v1\nkind: Service\nmetadata: {name: foo}\n' >"$tmp/only.yaml"
rc=0
err=$("$DRACO" simulate -f "$tmp/only.yaml" 2>&1) || rc=$?
[[ $rc == 2 ]] || fail "simulate of a Service only exited $rc, want 2: $err"
grep -qF "ignored: 1 object of an unknown kind: Service/foo" <<<"$err" || fail "no ignored line: $err"
pass "only unknown kinds: exit 2 naming them"
