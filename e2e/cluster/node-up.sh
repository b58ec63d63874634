#!/usr/bin/env bash
# Starts N real nodes beside the local control plane's fake ones (called by up.sh --real-nodes N;
# needs root). Node real-node-I is a kubelet of the control plane's Kubernetes version, its own
# containerd 2.x (CRI with CDI on; runc from Debian; one containerd per kubelet, because a kubelet
# removes every pod sandbox of its runtime that it does not know) and upstream's DRA test driver in
# kubelet-plugin mode (driver test-driver.cdi.k8s.io, $DRACO_REAL_NODE_DEVICES devices named
# device-00.. in pool real-node-I; it prepares a claim by writing a CDI spec that injects
# claim_<claim>_<request>=true into the containers, and on 1.37 also mounts KEP-5304's device
# metadata file). Nothing comes from a registry: the pause and workload images are built by
# images/build.sh and imported.
#
# The node: taint draco-e2e/real-node=true:NoSchedule (pods of the tests written for fake nodes
# never land on it; real-node tests tolerate it), label draco-e2e/real-node=true, cgroupfs driver
# with cgroup v1 (what this machine mounts; kubelet 1.35+ needs failCgroupV1: false for that),
# cgroup root /draco-e2e-APIPORT/real-node-I. With slot S = DRACO_REAL_NODE_BASE + I, pods get
# 10.244.S.0/24 on bridge dracobrS; the kubelet listens on 127.0.0.1:10250+10*S, and its InternalIP
# 10.254.0.(S+1), a second address of the bridge, loops back to it (nat OUTPUT): that is how
# kube-apiserver reaches it for logs and exec.
# Pods reach kube-apiserver through the kubernetes Service's IP 10.0.0.1:443 (nat PREROUTING to
# 127.0.0.1, route_localnet on the bridge): the one Service route a pod needs, in place of
# kube-proxy.
# Usage: node-up.sh N   (idempotent: running healthy nodes are left alone)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
source "$here/node-lib.sh"
N=${1:?usage: node-up.sh N}
DEVICES=${DRACO_REAL_NODE_DEVICES:-8}
# Host-wide slots: a second control plane on the same machine (its own $D and ports) gives its real
# nodes other bridges, subnets, addresses and kubelet ports with DRACO_REAL_NODE_BASE (e.g. 4).
BASE=${DRACO_REAL_NODE_BASE:-0}
[[ -f $D/env ]] || die "no control plane: run e2e/cluster/up.sh first"
BIN=$(env_bin)
K=("$BIN/kubectl" --kubeconfig "$D/kubeconfig")

real_node_prereqs || exit 3
# A node that fails to come up is stopped again (containerd, kubelet, driver, their mounts):
# nothing is left half started.
starting=""
trap 'rc=$?; if ((rc)) && [[ -n $starting ]]; then stop_real_node "$starting"; log "stopped the half-started $starting"; fi' EXIT
BIN=$("$here/build.sh" --node | tail -n1)
IMAGES=$("$here/images/build.sh" | tail -n1)
CNI_BIN=/usr/lib/cni
[[ -x $CNI_BIN/bridge ]] || CNI_BIN=/opt/cni/bin
API_IP=$("${K[@]}" get service kubernetes -o jsonpath='{.spec.clusterIP}')
v2=0
[[ -f /sys/fs/cgroup/cgroup.controllers ]] && v2=1
# Without CAP_SYS_RESOURCE (a sandboxed root, like this machine's) no process may lower its OOM score
# below its parent's: the kubelet's -998 for pod sandboxes fails every pod. containerd then keeps
# scores at or above its own.
restrict_oom=false
sh -c 'echo -1 >/proc/self/oom_score_adj' 2>/dev/null || restrict_oom=true

# node_certs I: a client certificate for the kubelet (system:node:NAME, so the Node authorizer
# applies), one for the driver (user draco-e2e:dra-test-driver, RBAC below) and a serving
# certificate for the kubelet.
node_certs() {
  local n=$1 dir=$2 pki=$D/pki
  sign() {  # sign OUT SUBJECT EXT
    openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$dir/$1.key" -out "$dir/$1.csr" 2>/dev/null
    openssl x509 -req -in "$dir/$1.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
      -days 3650 -extfile <(echo -e "$3") -out "$dir/$1.crt" 2>/dev/null
  }
  sign kubelet-client "/O=system:nodes/CN=system:node:$n" "extendedKeyUsage=clientAuth"
  sign driver-client "/CN=draco-e2e:dra-test-driver" "extendedKeyUsage=clientAuth"
  sign kubelet-serving "/CN=$n" "subjectAltName=IP:127.0.0.1,IP:$3,DNS:$n\nextendedKeyUsage=serverAuth"
  local ca_data
  ca_data=$(base64 -w0 <"$pki/ca.crt")
  for who in kubelet driver; do
    cat >"$dir/$who.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: draco-e2e
  cluster: {server: "https://127.0.0.1:$API_PORT", certificate-authority-data: "$ca_data"}
users:
- name: $who
  user: {client-certificate: "$dir/$who-client.crt", client-key: "$dir/$who-client.key"}
contexts:
- name: draco-e2e
  context: {cluster: draco-e2e, user: $who}
current-context: draco-e2e
KC
  done
}

# The driver's rights, as a DaemonSet's service account would have them.
"${K[@]}" apply -f - >/dev/null <<'RBAC'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: draco-e2e:dra-test-driver}
rules:
- {apiGroups: [resource.k8s.io], resources: [resourceslices], verbs: [get, list, watch, create, update, patch, delete, deletecollection]}
- {apiGroups: [resource.k8s.io], resources: [resourceclaims], verbs: [get, list, watch]}
- {apiGroups: [resource.k8s.io], resources: [resourceclaims/status], verbs: [update, patch]}
- {apiGroups: [""], resources: [nodes], verbs: [get]}
- {apiGroups: [""], resources: [pods], verbs: [get, list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: draco-e2e:dra-test-driver}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: draco-e2e:dra-test-driver}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: draco-e2e:dra-test-driver}
RBAC

# rule CHAIN MATCH...: adds a nat rule once, tagged with this control plane (down.sh removes them).
rule() {
  local chain=$1; shift
  iptables -w -t nat -C "$chain" "$@" -m comment --comment "draco-e2e:$API_PORT" 2>/dev/null ||
    iptables -w -t nat -A "$chain" "$@" -m comment --comment "draco-e2e:$API_PORT"
}

for i in $(seq 0 $((N - 1))); do
  name=real-node-$i
  dir=$D/nodes/$name
  g=$((BASE + i))
  node_ip=10.254.0.$((g + 1))
  port=$((10250 + g * 10))
  br=dracobr$g
  if real_node_healthy "$name"; then
    log "$name already running"
    continue
  fi
  stop_real_node "$name"
  starting=$name
  rm -rf "$dir"
  mkdir -p "$dir"/{containerd,kubelet,cdi,cni,cni-state,logs}
  # First, so that down.sh finds what to remove even if the rest fails.
  echo "NODE_IP=$node_ip PORT=$port BRIDGE=$br DEVICES=$DEVICES" >"$dir/node.env"
  node_certs "$name" "$dir" "$node_ip"

  # Network: the pod bridge (which also carries the node's address), the two routes a pod and
  # kube-apiserver need.
  ip link show "$br" >/dev/null 2>&1 || ip link add "$br" type bridge
  ip addr replace "10.244.$g.1/24" dev "$br"
  ip addr replace "$node_ip/32" dev "$br"
  ip link set "$br" up
  rule OUTPUT -d "$node_ip" -p tcp --dport "$port" -j DNAT --to-destination "127.0.0.1:$port"
  cat >"$dir/cni/10-draco.conflist" <<CNI
{"cniVersion": "1.0.0", "name": "draco-$g", "plugins": [
  {"type": "bridge", "bridge": "$br", "isGateway": true, "isDefaultGateway": true, "ipMasq": false,
   "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$dir/cni-state",
            "ranges": [[{"subnet": "10.244.$g.0/24"}]]}},
  {"type": "loopback"}]}
CNI
  sysctl -qw "net.ipv4.conf.$br.route_localnet=1"
  rule PREROUTING -i "$br" -d "$API_IP" -p tcp --dport 443 -j DNAT --to-destination "127.0.0.1:$API_PORT"

  # containerd: its own root, state and socket; CDI specs from the driver's directory (and
  # /var/run/cdi, where the kubelet-plugin library writes the device-metadata specs).
  cat >"$dir/containerd.toml" <<TOML
version = 3
root = "$dir/containerd/root"
state = "$(real_node_run_dir "$name")/containerd"
disabled_plugins = ["io.containerd.nri.v1.nri", "io.containerd.snapshotter.v1.erofs", "io.containerd.differ.v1.erofs"]
[grpc]
  address = "$dir/containerd.sock"
[ttrpc]
  address = "$dir/containerd.sock.ttrpc"
[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "draco.local/pause:1"
[plugins.'io.containerd.cri.v1.runtime']
  enable_cdi = true
  restrict_oom_score_adj = $restrict_oom
  cdi_spec_dirs = ["$dir/cdi", "/var/run/cdi"]
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        Root = "$(real_node_run_dir "$name")/runc"
        SystemdCgroup = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["$CNI_BIN"]
    conf_dir = "$dir/cni"
[plugins.'io.containerd.grpc.v1.cri']
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
TOML
  start_real_node_containerd "$name"
  for img in pause workload; do
    "$BIN/ctr" -a "$dir/containerd.sock" -n k8s.io images import --snapshotter overlayfs \
      "$IMAGES/$img.tar" >/dev/null 2>"$dir/logs/import.log" || die "could not import $img into $name's containerd"
  done

  # kubelet
  for s in cpu cpuacct cpuset memory pids systemd; do
    ((v2)) || mkdir -p "/sys/fs/cgroup/$s$(real_node_cgroup "$name")"
  done
  if ((v2)); then
    # cgroup v2 (not this machine's layout; untested here): the root and the node's parent must
    # delegate the controllers the kubelet manages.
    cg=$(real_node_cgroup "$name")
    mkdir -p "/sys/fs/cgroup$cg"
    for c in cpu cpuset memory pids; do
      echo "+$c" >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
      echo "+$c" >"/sys/fs/cgroup${cg%/*}/cgroup.subtree_control" 2>/dev/null || true
    done
  fi
  cat >"$dir/kubelet.yaml" <<KCFG
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $port
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $((port + 1))
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$D/pki/ca.crt"}
authorization: {mode: Webhook}
tlsCertFile: "$dir/kubelet-serving.crt"
tlsPrivateKeyFile: "$dir/kubelet-serving.key"
containerRuntimeEndpoint: "unix://$dir/containerd.sock"
cgroupDriver: cgroupfs
cgroupRoot: $(real_node_cgroup "$name")
failCgroupV1: false
failSwapOn: false
oomScoreAdj: 0
resolvConf: ""
# Not the host's /var/log/pods: a kubelet removes the log directories of pods it does not know,
# those of the other real nodes on this host included.
podLogsDir: "$dir/pod-logs"
registerWithTaints: [{key: draco-e2e/real-node, value: "true", effect: NoSchedule}]
evictionHard: {memory.available: 50Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
syncFrequency: 10s
fileCheckFrequency: 10s
nodeStatusUpdateFrequency: 5s
featureGates: {$(supported_gates | sed 's/=/: /g; s/,/, /g')}
KCFG
  start_real_node_kubelet "$name"
  wait_for "$name Ready" 120 node_ready "$name" ||
    die "$name did not become Ready: $D/logs/$name-kubelet.log"
  start_real_node_driver "$name" "$DEVICES"
  starting=""
done
log "$N real node(s) Ready with the DRA test driver: ${K[*]} get nodes -l draco-e2e/real-node"
