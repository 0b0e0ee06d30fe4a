#!/usr/bin/env bash
# torch_across_hosts.sh BUILD_DIR [CASE...]: the torch.distributed backend "coll" across
# emulated hosts (hosts.sh), started as users start it: one torchrun per host,
#   torchrun --nnodes N --node_rank R --master_addr <host 1> --master_port P \
#            --nproc_per_node K --redirects 1 --tee 1 torch_ddp_step.py ...
# (torch 1.13's torchrun spells its options with underscores; on Debian 12's Python 3.11 it
# fails at start for every backend unless --redirects and --tee are other than 0 or 3.)
# The module is the one `cmake --install` puts under a prefix (PREFIX/lib/python3.X/dist-packages).
# torch_ddp_step.py checks coll all-reduces exactly and that DDP over coll ends with the same
# parameters as over gloo (max abs difference < 1e-6), and reports both step times.
#
# CASE is HOSTSxRANKS[:different] (':different': the hosts' interfaces get different names,
# ens3/eth0/...), or 'linkdown': 2 hosts x 1 rank queue asynchronous all-reduces
# (torch_link_fault.py, COLL_TIMEOUT=5) and host 2's link is pulled; each rank's wait() must
# raise RuntimeError naming the other host within COLL_TIMEOUT + 3 s, and both torchruns must
# exit non-zero; or 'restart': an elastic torchrun (c10d rendezvous, --max_restarts 1) on 2
# hosts x 1 rank whose last rank dies at step 10 of the first attempt (as a lost host's would):
# every worker starts again, forms its coll group afresh and must end DDP with gloo's parameters,
# both torchruns exiting 0; or 'absent': a host that never starts (issue 42, 3c): only host 1's
# elastic torchrun (c10d, --rdzv_conf join_timeout=10) of 2 starts, and it must exit non-zero
# with torch's RendezvousTimeoutError within 40 s, leaving no process on host 1 (the static
# rendezvous of --master_addr has no such bound: it waited past 120 s). Default: 2x1
# 2x2:different linkdown restart absent. No COLL_* variable reaches the ranks (all are
# unset), nor a developer's tuning file (HOME is a fresh directory), so the backend must find
# its interface by itself. Prints one line per case; exit 0: all passed, 77: skipped (not root,
# ip/unshare/python3-torch/torchrun or the coll_torch module missing), 1: a case failed, 2: usage.
# Every command is bounded by `timeout`; the hosts are removed on exit, failure or signal.
set -euo pipefail

here="$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"
me=torch_across_hosts

build=${1:-}
if [[ -z "$build" || "$build" == -* ]]; then
    echo "usage: $0 BUILD_DIR [HOSTSxRANKS[:different]...]" >&2
    exit 2
fi
shift
cases=("$@")
((${#cases[@]})) || cases=(2x1 2x2:different linkdown restart absent)
for c in "${cases[@]}"; do
    [[ "$c" =~ ^([1-9])x([1-9])(:different)?$|^linkdown$|^restart$|^absent$ ]] ||
        { echo "$me: bad case '$c' (HOSTSxRANKS[:different], linkdown, restart or absent)" >&2; exit 2; }
done

python=${PYTHON:-/usr/bin/python3}  # Debian's, with python3-torch
if [[ $(id -u) != 0 ]]; then echo "$me: SKIP: needs root (network namespaces)"; exit 77; fi
for tool in ip unshare timeout; do
    command -v "$tool" >/dev/null || { echo "$me: SKIP: $tool not found"; exit 77; }
done
if ! timeout 120 "$python" -c 'import torch.distributed.run' 2>/dev/null; then
    echo "$me: SKIP: $python cannot import torch.distributed.run (python3-torch missing)"
    exit 77
fi
torchrun=$(command -v torchrun || true)
[[ -n "$torchrun" ]] || { echo "$me: SKIP: torchrun not found (python3-torch)"; exit 77; }
module_dir=$(readlink -f "$build")/libcoll/torch
if ! compgen -G "$module_dir/coll_torch*.so" >/dev/null; then
    echo "$me: SKIP: no coll_torch module in $module_dir (not built)"
    exit 77
fi

# No COLL_* setting, and nothing of an outer torch job, reaches the ranks.
while read -r var; do unset "$var"; done < <(compgen -e | grep -E '^(COLL_|TORCHELASTIC_)' || true)
unset RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE GROUP_RANK MASTER_ADDR MASTER_PORT \
    GLOO_SOCKET_IFNAME OMP_NUM_THREADS

# shellcheck source=hosts.sh source-path=SCRIPTDIR
. "$here/hosts.sh"

tmp=$(mktemp -d)
# Run ids unique to this process (tr + 5 digits + case index), so runs may go side by side.
tag=$(printf '%05d' $(($$ % 100000)))
ids=()
for ((k = 0; k < ${#cases[@]}; k++)); do ids+=("tr$tag$k"); done
hosts_auto_down "${ids[@]}"
# shellcheck disable=SC2317  # run by the EXIT trap
_tah_exit() {
    local rc=$?
    rm -rf "$tmp"
    _hosts_on_exit "$rc"
}
trap '_tah_exit' EXIT
# The ranks load the module `cmake --install` puts in a prefix, as a cluster node would.
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
module_dir=$(dirname "$(find "$tmp/prefix/lib" -path '*/dist-packages/coll_torch*.so' | head -1)")

export HOME="$tmp/home"
mkdir -p "$HOME"
case_timeout=${TORCH_ACROSS_HOSTS_TIMEOUT:-240}  # seconds, one torchrun
# One torchrun per host of run ID (NHOSTS hosts x NRANKS ranks) running SCRIPT ARGS..., with
# ENV set, each writing $tmp/ID-I.log; leaves their process ids in `pids`. The rendezvous is
# static (--master_addr) unless `elastic` is 1: c10d on host 1, one restart allowed.
elastic=0
start_torchruns() { # ID NHOSTS NRANKS [ENV=VALUE...] -- SCRIPT [ARGS...]
    local id=$1 nhosts=$2 nranks=$3 master node rendezvous
    shift 3
    local environment=()
    while [[ $1 != -- ]]; do environment+=("$1"); shift; done
    shift
    master=$(awk 'NR == 1 {print $2}' "$(hosts_state_dir "$id")/addresses")
    pids=()
    for ((node = 1; node <= nhosts; node++)); do
        if ((elastic)); then
            rendezvous=(--rdzv_backend c10d --rdzv_endpoint "$master:29400" --rdzv_id "$id"
                --max_restarts 1)
        else
            rendezvous=(--node_rank $((node - 1)) --master_addr "$master" --master_port 29500)
        fi
        hosts_exec "$id" "$node" env "${environment[@]}" timeout -k 10 "$case_timeout" \
            "$torchrun" --nnodes "$nhosts" "${rendezvous[@]}" --nproc_per_node "$nranks" \
            --redirects 1 --tee 1 --log_dir "$tmp/torchelastic-$id-$node" \
            "$@" >"$tmp/$id-$node.log" 2>&1 &
        pids+=($!)
    done
}

# The 'restart' case (see the header): prints one line, returns 1 on failure.
restart_case() { # ID
    local id=$1 node rcs=() result
    hosts_up "$id" 2 || { echo "$me: case restart: FAIL: hosts.sh up"; return 1; }
    elastic=1
    start_torchruns "$id" 2 1 -- "$here/torch_ddp_step.py" --module-dir "$module_dir" \
        --steps 30 --fail-once-at-step 10
    elastic=0
    for pid in "${pids[@]}"; do
        if wait "$pid"; then rcs+=(0); else rcs+=($?); fi
    done
    result=$(cat "$tmp/$id-1.log" "$tmp/$id-2.log" | grep -h -o 'RESULT {.*}' | head -n 1 |
        cut -c8- || true)
    if [[ "${rcs[*]}" == "0 0" && "$result" == *'"attempt": 1'* ]] &&
        grep -q "dying at step 10 of attempt 0" "$tmp/$id-1.log" "$tmp/$id-2.log"; then
        echo "$me: case restart: PASS: the last rank died at step 10, torchrun restarted every" \
            "worker, the new coll group trained to gloo's parameters: $result"
        return 0
    fi
    echo "$me: case restart: FAIL (torchrun exit codes ${rcs[*]}; result: ${result:-none})"
    for node in 1 2; do
        grep -v -e '^\*\*\*\*' -e 'OMP_NUM_THREADS' "$tmp/$id-$node.log" | tail -n 12 | sed 's/^/    /'
    done
    return 1
}

# The 'absent' case (see the header): prints one line, returns 1 on failure.
absent_case() { # ID
    local id=$1 master rc start took left
    hosts_up "$id" 2 || { echo "$me: case absent: FAIL: hosts.sh up"; return 1; }
    master=$(awk 'NR == 1 {print $2}' "$(hosts_state_dir "$id")/addresses")
    start=$(date +%s)
    rc=0
    hosts_exec "$id" 1 timeout -k 10 60 "$torchrun" --nnodes 2 --rdzv_backend c10d \
        --rdzv_endpoint "$master:29400" --rdzv_id "$id" --rdzv_conf join_timeout=10 \
        --nproc_per_node 1 --redirects 1 --tee 1 --log_dir "$tmp/torchelastic-$id-1" \
        "$here/torch_ddp_step.py" --module-dir "$module_dir" >"$tmp/$id-1.log" 2>&1 || rc=$?
    took=$(($(date +%s) - start))
    left=$(ip netns pids "$(hosts_host_ns "$id" 1)" 2>/dev/null | wc -l)
    if ((rc != 0 && rc != 124 && took < 40 && left == 0)) &&
        grep -q RendezvousTimeoutError "$tmp/$id-1.log"; then
        echo "$me: case absent: PASS: host 2 never started; host 1's torchrun exited $rc after" \
            "$took s with RendezvousTimeoutError, nothing left on host 1"
        return 0
    fi
    echo "$me: case absent: FAIL (torchrun exit $rc after $took s, $left process(es) left on host 1)"
    tail -n 5 "$tmp/$id-1.log" | sed 's/^/    /'
    return 1
}

# The 'linkdown' case (see the header): prints one line, returns 1 on failure.
link_down_case() { # ID
    local id=$1 cut_ms waited_ms rc node log caught
    hosts_up "$id" 2 || { echo "$me: case linkdown: FAIL: hosts.sh up"; return 1; }
    start_torchruns "$id" 2 1 COLL_TIMEOUT=5 -- "$here/torch_link_fault.py" --module-dir "$module_dir"
    for _ in $(seq 600); do
        (($(cat "$tmp/$id-1.log" "$tmp/$id-2.log" | grep -c READY) >= 2)) && break
        hosts_sleep 0.1
    done
    hosts_link "$id" 2 down
    cut_ms=$(($(date +%s%N) / 1000000))
    while (($(cat "$tmp/$id-1.log" "$tmp/$id-2.log" | grep -c -E 'CAUGHT|FAIL') < 2)); do
        (($(date +%s%N) / 1000000 - cut_ms < 8000)) || break
        hosts_sleep 0.1
    done
    waited_ms=$(($(date +%s%N) / 1000000 - cut_ms))
    hosts_link "$id" 2 up
    local rcs=()
    for pid in "${pids[@]}"; do
        if wait "$pid"; then rcs+=(0); else rcs+=($?); fi
    done
    for node in 1 2; do
        log="$tmp/$id-$node.log"
        caught=$(grep -h -o 'CAUGHT RuntimeError.*' "$log" | head -n 1 || true)
        if [[ "$caught" != *"(ch-$id-$((3 - node)))"* ]]; then
            echo "$me: case linkdown: FAIL: host $node's rank raised no RuntimeError naming" \
                "ch-$id-$((3 - node)) within 8 s of the cut; last lines:"
            grep -v -e '^\*\*\*\*' -e 'OMP_NUM_THREADS' "$log" | tail -n 10 | sed 's/^/    /'
            return 1
        fi
    done
    for rc in "${rcs[@]}"; do
        ((rc != 0)) || { echo "$me: case linkdown: FAIL: a torchrun exited 0 (${rcs[*]})"; return 1; }
    done
    echo "$me: case linkdown: PASS: both ranks' wait() raised RuntimeError naming the other" \
        "host, the last $((waited_ms / 1000)).$(printf '%03d' $((waited_ms % 1000))) s after the" \
        "cut; torchrun exit codes ${rcs[*]}; host 2's: $caught"
}

failed=0
for ((k = 0; k < ${#cases[@]}; k++)); do
    c=${cases[k]} id=${ids[k]}
    if [[ "$c" == linkdown || "$c" == restart || "$c" == absent ]]; then
        if [[ "$c" == linkdown ]]; then link_down_case "$id" || failed=1; fi
        if [[ "$c" == restart ]]; then restart_case "$id" || failed=1; fi
        if [[ "$c" == absent ]]; then absent_case "$id" || failed=1; fi
        hosts_down "$id"
        continue
    fi
    [[ "$c" =~ ^([1-9])x([1-9])(:different)?$ ]]
    nhosts=${BASH_REMATCH[1]} nranks=${BASH_REMATCH[2]} style=same
    [[ -n "${BASH_REMATCH[3]}" ]] && style=different
    hosts_up "$id" "$nhosts" --ifname-style "$style" || { echo "$me: case $c: FAIL: hosts.sh up"; failed=1; continue; }
    ifnames=$(awk '{print $3}' "$(hosts_state_dir "$id")/addresses" | paste -sd/)
    start=$(date +%s%N)
    start_torchruns "$id" "$nhosts" "$nranks" -- "$here/torch_ddp_step.py" --module-dir "$module_dir"
    rcs=()
    for pid in "${pids[@]}"; do
        if wait "$pid"; then rcs+=(0); else rcs+=($?); fi
    done
    seconds=$((($(date +%s%N) - start) / 1000000000))

    what="case $c ($nhosts hosts x $nranks ranks, interfaces $ifnames)"
    result=$(grep -h -o 'RESULT {.*}' "$tmp/$id-1.log" | head -n 1 | cut -c8- || true)
    if [[ "${rcs[*]}" =~ ^(0 )*0$ && -n "$result" ]]; then
        line=$(timeout 60 "$python" -c '
import json, sys
r = json.loads(sys.argv[1])
coll, gloo = r["step_ms_coll"], r["step_ms_gloo"]
print("%d ranks on %d hosts, %d all-reduces exact, DDP %d steps max |coll-gloo| %.3g, "
      "step median (slowest rank) coll %.3f ms, gloo %.3f ms%s"
      % (r["world_size"], len(set(r["hosts"])), r["all_reduce_checks"], r["steps"],
         r["max_abs_diff_coll_vs_gloo"], coll, gloo,
         "  (coll SLOWER than gloo)" if coll > gloo else ""))' "$result")
        echo "$me: $what: PASS: $line [${seconds} s]"
    else
        failed=1
        echo "$me: $what: FAIL (torchrun exit codes per host: ${rcs[*]}; 124/137: timed out after ${case_timeout} s)"
        for ((node = 1; node <= nhosts; node++)); do
            echo "--- host $node (ch-$id-$node), last lines of torchrun's output:"
            log="$tmp/$id-$node.log"
            # The ranks' own lines (FAIL, libcoll's errors) say more than torchrun's traceback.
            if grep -q -E 'FAIL:|coll backend|\[coll rank' "$log"; then
                grep -E 'FAIL:|coll backend|\[coll rank|Error:' "$log" | head -n 20
            else
                grep -v -e '^\*\*\*\*' -e 'OMP_NUM_THREADS' "$log" | tail -n 20
            fi | sed 's/^/    /'
        done
    fi
    hosts_down "$id"
done

exit "$failed"
