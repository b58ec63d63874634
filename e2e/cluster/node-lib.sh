# Helpers for the local real nodes (node-up.sh), sourced after lib.sh: also what tests use to
# restart a node's kubelet or driver (restart-node.sh).

# Host-wide names of a real node: its runtime state and its cgroup root carry the control plane's
# API port, so two control planes on one machine (test.sh runs two) never share them.
real_node_run_dir() { echo "/run/draco-e2e/$API_PORT/$1"; }
real_node_cgroup() { echo "/draco-e2e-$API_PORT/$1"; }

# real_node_package CMD: the Debian package that provides CMD.
real_node_package() {
  case $1 in
    ip) echo iproute2 ;;
    gcc) echo "gcc libc6-dev" ;;
    *) echo "$1" ;;
  esac
}

# real_node_prereqs: checks what a real node needs from the host before anything starts; on a miss
# prints each missing piece with how to get it and returns 1.
real_node_prereqs() {
  local missing=() c s
  ((EUID == 0)) || missing+=("root (a kubelet and containerd need it): run as root")
  for c in runc iptables ip gcc python3; do
    command -v "$c" >/dev/null || missing+=("$c: apt-get install $(real_node_package "$c")")
  done
  [[ -x /usr/lib/cni/bridge || -x /opt/cni/bin/bridge ]] ||
    missing+=("CNI plugins (bridge, host-local, loopback): apt-get install containernetworking-plugins")
  [[ -x /bin/busybox ]] || missing+=("busybox-static (the workload image): apt-get install busybox-static")
  grep -qw overlay /proc/filesystems || missing+=("overlayfs in the kernel (containerd's snapshotter): modprobe overlay")
  for s in cpu cpuacct cpuset memory pids; do
    [[ -d /sys/fs/cgroup/$s || -f /sys/fs/cgroup/cgroup.controllers ]] ||
      missing+=("cgroup controller $s: mount cgroup v1 $s under /sys/fs/cgroup, or boot with cgroup v2")
  done
  ((${#missing[@]})) || return 0
  printf '[cluster] ERROR: a real node needs (scripts/install-deps.sh installs the packages):\n' >&2
  printf '  - %s\n' "${missing[@]}" >&2
  return 1
}

# node_ready NAME: the Node reports Ready.
node_ready() {
  [[ $("$BIN/kubectl" --kubeconfig "$D/kubeconfig" get node "$1" \
    -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) == True ]]
}

# real_node_healthy NAME: containerd, kubelet and driver of NAME run and the Node is Ready.
real_node_healthy() {
  local c
  for c in containerd kubelet driver; do
    [[ -f $D/pids/$1-$c.pid ]] && kill -0 "$(cat "$D/pids/$1-$c.pid")" 2>/dev/null || return 1
  done
  node_ready "$1"
}

# start_real_node_kubelet NAME: NAME's kubelet, from what node-up.sh wrote to its directory.
start_real_node_kubelet() {
  local name=$1 dir=$D/nodes/$1 NODE_IP PORT BRIDGE DEVICES
  source "$dir/node.env"
  start_bg "$name-kubelet" "$BIN/kubelet" --config="$dir/kubelet.yaml" \
    --kubeconfig="$dir/kubelet.kubeconfig" --root-dir="$dir/kubelet" \
    --hostname-override="$name" --node-ip="$NODE_IP" \
    --node-labels="draco-e2e/real-node=true" --v=2
}

# start_real_node_containerd NAME: NAME's containerd, with the node's bin directory on PATH (where
# it finds containerd-shim-runc-v2); waits until it answers.
start_real_node_containerd() {
  local name=$1 dir=$D/nodes/$1
  PATH="$BIN:$PATH" start_bg "$name-containerd" "$BIN/containerd" --config "$dir/containerd.toml"
  wait_for "$name containerd" 60 "$BIN/ctr" -a "$dir/containerd.sock" version ||
    die "containerd did not start: $D/logs/$name-containerd.log"
}

# start_real_node_driver NAME DEVICES: upstream's DRA test driver as NAME's kubelet plugin; waits
# until it is registered with the kubelet and its ResourceSlice is published.
start_real_node_driver() {
  local name=$1 devices=$2 dir=$D/nodes/$1 extra=()
  # The driver creates the parent of its socket directory, not the directory itself.
  mkdir -p "$dir/kubelet/plugins/test-driver.cdi.k8s.io" "$dir/kubelet/plugins_registry"
  local help
  help=$("$BIN/dra-test-driver" kubelet-plugin --help 2>&1 || true)
  [[ $help == *--enable-device-metadata* ]] && extra+=(--enable-device-metadata)
  start_bg "$name-driver" "$BIN/dra-test-driver" --kubeconfig="$dir/driver.kubeconfig" -v=3 \
    kubelet-plugin --node-name="$name" --num-devices="$devices" --cdi-dir="$dir/cdi" \
    --datadir="$dir/kubelet/plugins" --plugin-registration-path="$dir/kubelet/plugins_registry" \
    "${extra[@]}"
  wait_for "$name DRA driver" 60 real_node_slice "$name" "$devices" ||
    die "the DRA test driver on $name published no ResourceSlice: $D/logs/$name-driver.log"
}

# real_node_slice NAME DEVICES: NAME's ResourceSlice of test-driver.cdi.k8s.io lists DEVICES devices.
real_node_slice() {
  [[ $("$BIN/kubectl" --kubeconfig "$D/kubeconfig" get resourceslices \
    --field-selector "spec.nodeName=$1,spec.driver=test-driver.cdi.k8s.io" \
    -o jsonpath='{range .items[*]}{range .spec.devices[*]}{.name}{"\n"}{end}{end}' 2>/dev/null |
    grep -c .) == "$2" ]]
}

# stop_real_node NAME: stops NAME's driver, kubelet and containerd, and every pod container that
# containerd's shims still run (the shims outlive containerd).
stop_real_node() {
  local name=$1 dir=$D/nodes/$1 pid
  stop_bg "$name-driver"
  stop_bg "$name-kubelet"
  if [[ -S $dir/containerd.sock && -x $BIN/ctr ]]; then
    local ctr=("$BIN/ctr" -a "$dir/containerd.sock" -n k8s.io)
    for c in $("${ctr[@]}" tasks ls -q 2>/dev/null); do "${ctr[@]}" tasks kill -s KILL "$c" >/dev/null 2>&1 || true; done
  fi
  stop_bg "$name-containerd"
  # Shims whose containerd is gone: they carry the node's socket path in their command line.
  for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address $dir/containerd.sock" || true); do
    kill -9 "$pid" 2>/dev/null || true
  done
  umount_under "$dir/kubelet"
  umount_under "$(real_node_run_dir "$name")"
  umount_under "$dir/containerd"
  # The runtime state under /run (lazily unmounted above: nothing is mounted there any more).
  rm -rf "$(real_node_run_dir "$name")"
  rmdir "$(dirname "$(real_node_run_dir "$name")")" 2>/dev/null || true
}

# umount_under DIR: lazily unmounts every mount point under DIR, deepest first.
umount_under() {
  local m
  for m in $(awk -v p="$1" 'index($2, p) == 1 {print $2}' /proc/mounts | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
}

# remove_real_node_network: deletes what node-up.sh added to the host's network (the bridges, the
# dummy interface, the nat rules it tagged draco-e2e) and the nodes' cgroups.
remove_real_node_network() {
  local f NODE_IP PORT BRIDGE DEVICES rules
  for f in "$D"/nodes/*/node.env; do
    [[ -f $f ]] || continue
    source "$f"
    ip link del "$BRIDGE" 2>/dev/null || true
    find /sys/fs/cgroup -depth -type d -path "*$(real_node_cgroup "$(basename "$(dirname "$f")")")*" \
      -exec rmdir {} + 2>/dev/null || true
  done
  find /sys/fs/cgroup -maxdepth 2 -type d -name "draco-e2e-$API_PORT" -exec rmdir {} + 2>/dev/null || true
  if command -v iptables-save >/dev/null; then
    rules=$(iptables-save -t nat 2>/dev/null || true)
    # iptables-save quotes the comment: -m comment --comment "draco-e2e:PORT".
    { grep -F -- "--comment \"draco-e2e:$API_PORT\"" <<<"$rules" || true; } | sed 's/^-A/-D/' |
      while read -r r; do eval "iptables -w -t nat $r" 2>/dev/null || true; done
  fi
}
