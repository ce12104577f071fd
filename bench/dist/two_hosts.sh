#!/usr/bin/env bash
# Two "hosts" on this machine (issue 45 part 5; docs/distributed.md, "Two hosts"): two network
# namespaces joined by a veth pair, each with its own address and nothing else (no route out,
# so traffic flows only between them), one torchrun agent in each, rendezvous over c10d at the
# first host's address, as `torchrun --nnodes 2 --rdzv-endpoint HOST:PORT` runs on two
# machines (with `--rdzv-conf is_host=1` on the first: inside a namespace the machine's
# hostname does not name its address, so torchrun cannot tell which agent hosts the store). Trains DATASET (a dataset `directgnn partition --parts 2*K` made) once on the bare
# link, then once with the link capped by tc at RATE (default 1gbit) each way. The namespaces
# and the pair are made here and removed on exit, whatever happens.
#
#   sudo bench/dist/two_hosts.sh DATASET OUT [K] [-- extra train flags]
#
# K ranks per host (default 1). Metrics and logs: OUT/{bare,capped}-host{0,1}.{jsonl,log}
# (rank 0 writes the metrics). Needs root (ip netns, tc) and iproute2: without them it says why
# and exits 0. TORCHRUN (default .venv/bin/torchrun), DIRECTGNN (default build/directgnn),
# RATE, EPOCHS (default 3) and PORT (default 29400) as named.
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ $# -ge 2 ]] || { sed -n 2,16p "$0"; exit 2; }
dataset=$(realpath "$1") out=$2 per_host=${3:-1}
shift $(($# >= 3 ? 3 : 2))
[[ ${1:-} == -- ]] && shift
skip() { echo "two_hosts.sh: skipped: $*"; exit 0; }
[[ $(id -u) == 0 ]] || skip "needs root to make network namespaces (run it with sudo)"
command -v ip > /dev/null && command -v tc > /dev/null || skip "needs iproute2 (ip, tc)"
bin=$(realpath "${DIRECTGNN:-build/directgnn}")
torchrun=$(realpath "${TORCHRUN:-.venv/bin/torchrun}")
port=${PORT:-29400}
mkdir -p "$out"
out=$(realpath "$out")

tag=dg$$
hosts=("$tag-a" "$tag-b") links=("$tag-a" "$tag-b") addrs=(10.77.0.1 10.77.0.2)
cleanup() {
  for h in "${hosts[@]}"; do ip netns pids "$h" 2> /dev/null | xargs -r kill -9 2> /dev/null || true; done
  for h in "${hosts[@]}"; do ip netns del "$h" 2> /dev/null || true; done
}
trap cleanup EXIT
ip netns add "${hosts[0]}" || skip "this kernel refuses network namespaces"
ip netns add "${hosts[1]}"
ip link add "${links[0]}" type veth peer name "${links[1]}"
for i in 0 1; do
  ip link set "${links[$i]}" netns "${hosts[$i]}"
  ip -n "${hosts[$i]}" addr add "${addrs[$i]}/24" dev "${links[$i]}"
  ip -n "${hosts[$i]}" link set "${links[$i]}" up
  ip -n "${hosts[$i]}" link set lo up
done

# One run: an agent per host, host 0 hosting the rendezvous.
run() {
  local name=$1 pids=()
  shift
  for i in 0 1; do
    ip netns exec "${hosts[$i]}" env GLOO_SOCKET_IFNAME="${links[$i]}" OMP_NUM_THREADS=1 \
      "$torchrun" --nnodes 2 --nproc-per-node "$per_host" --node-rank "$i" \
      --rdzv-backend c10d --rdzv-endpoint "${addrs[0]}:$port" --rdzv-id "$tag-$name" \
      --local-addr "${addrs[$i]}" --rdzv-conf "is_host=$((i == 0 ? 1 : 0))" --no-python \
      "$bin" train --dataset "$dataset" --threads 1 --epochs "${EPOCHS:-3}" \
      --metrics "$out/$name.jsonl" "$@" > "$out/$name-host$i.log" 2>&1 &
    pids+=($!)
  done
  local status=0
  for p in "${pids[@]}"; do wait "$p" || status=$?; done
  echo "== $name (exit $status)"
  cat "$out/$name-host0.log" "$out/$name-host1.log" | grep -E "^(Epoch|Average|Best)" | tail -n 3 || true
  return "$status"
}

run bare "$@"
for i in 0 1; do
  tc -n "${hosts[$i]}" qdisc add dev "${links[$i]}" root tbf rate "${RATE:-1gbit}" \
    burst 256kb latency 50ms
done
run capped "$@"
