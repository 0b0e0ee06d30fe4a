#!/usr/bin/env bash
# collbench_across_hosts.sh BUILD_DIR: libcoll across emulated hosts started by Open MPI's own
# launcher (mpirun --hostfile through tests/multihost/mpirun.sh), with no COLL_* variable set,
# running what `cmake --install` puts in a prefix (not the build tree):
#   - collbench sweeps, exact (-c 1), at 2 and 4 hosts x 1 and 2 ranks, the hosts' interfaces
#     named alike or differently, several algorithms; the header counts the hosts as nodes;
#   - a model replay (GoogLeNet's gradients) and colltopo (one node per host, by its name);
#   - an unmodified mpi4py program through the installed libcoll_mpi.so, across 4 hosts;
#   - recovery across 4 hosts: a failed all-reduce, collCommAbort on every rank, a new
#     communicator that all-reduces exactly (and destroy then re-create);
#   - bad input: an interface filter that matches nothing is one line naming the variable;
#   - UCX between hosts (unauthenticated) refused in one line unless COLL_UCX_TRUST_NETWORK=1;
#   - a link pulled mid-run: every rank ends within COLL_TIMEOUT + 3 s naming the peer's host,
#     also at 2 x 2 under each of ring, tree, halving_doubling, ps and hierarchical, and
#     under a model replay's asynchronous (queued) all-reduces;
#   - every process of one host killed: the other ranks end naming the lost host's ranks;
#   - a partition (2 hosts | 2 hosts): every rank ends naming a rank on the other side.
# Exit 0: passed; 77: skipped (not root, or ip/unshare/mpirun missing); other: failed.
set -euo pipefail

build=$(readlink -f "${1:?usage: collbench_across_hosts.sh BUILD_DIR}")
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=hosts.sh
. "$here/hosts.sh"
hosts_script_begin collbench_across_hosts mpirun

cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
collbench="$scratch/prefix/bin/collbench"
colltopo="$scratch/prefix/bin/colltopo"

# JSON_FILE FIELD: a top-level number of collbench's JSON.
json_number() { /usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

sweep() { # ID HOSTS RANKS_PER_HOST [collbench args]
    local id=$1 hosts=$2 per=$3
    shift 3
    local json="$scratch/$id-$per.json" out="$scratch/$id-$per.out"
    timeout 120 "$here/mpirun.sh" "$id" -np $((hosts * per)) --map-by node "$collbench" \
        -b 8 -e 1M -f 8 -n 2 -w 1 -c 1 --json "$json" "$@" >"$out" 2>&1 ||
        fail "$hosts hosts x $per: collbench failed: $(tail -5 "$out")"
    [[ "$(json_number "$json" wrong_total)" == 0 ]] || fail "$hosts x $per: wrong elements"
    grep -q "$((hosts * per)) ranks on $hosts node(s)" "$out" ||
        fail "$hosts x $per: header does not count $hosts nodes: $(grep '^# coll' "$out")"
    echo "ok: $hosts hosts x $per rank(s): exact, $(grep -c '^ ' "$out") rows ($*)"
}

a="ma$tag" b="mb$tag"
up "$a" 2 --ifname-style different
sweep "$a" 2 1
sweep "$a" 2 2 --algo ring,hierarchical,halving_doubling,tree,ps
up "$b" 4
sweep "$b" 4 1 --algo ring,halving_doubling,ps
sweep "$b" 4 2 --algo ring,hierarchical

out="$scratch/replay.out"
timeout 180 "$here/mpirun.sh" "$a" -np 4 --map-by node "$collbench" --model-gradients googlenet \
    -n 2 -w 1 -c 1 >"$out" 2>&1 || fail "googlenet replay: $(tail -5 "$out")"
echo "ok: googlenet's gradients replayed across 2 hosts x 2"

if [[ -x "$colltopo" ]]; then
    out="$scratch/topo.out"
    timeout 120 "$here/mpirun.sh" "$b" -np 4 --map-by node "$colltopo" >"$out" 2>&1 ||
        fail "colltopo: $(tail -5 "$out")"
    for i in 1 2 3 4; do
        grep -q "ch-$b-$i" "$out" || fail "colltopo does not name host ch-$b-$i: $(head -20 "$out")"
    done
    echo "ok: colltopo names the 4 hosts"
fi

# The interposer's own check (identical results with and without it, the calls it takes),
# with mpirun spreading its 2-4 ranks over the 4 hosts.
if /usr/bin/python3 -c "import mpi4py, numpy" 2>/dev/null; then
    printf '#!/bin/sh\nexec "%s" "%s" --map-by node "$@"\n' "$here/mpirun.sh" "$b" >"$scratch/mpirun"
    chmod +x "$scratch/mpirun"
    out="$scratch/interposer.out"
    timeout 600 /usr/bin/python3 "$here/../mpi_interposer/check_interposer.py" /usr/bin/python3 \
        "$scratch/mpirun" "$scratch/prefix/lib/libcoll_mpi.so" \
        "$here/../mpi_interposer/allreduce_program.py" >"$out" 2>&1 ||
        fail "mpi4py through the interposer: $(tail -5 "$out")"
    echo "ok: mpi4py through the installed interposer across 4 hosts: $(head -1 "$out")"
else
    echo "skipped: mpi4py through the interposer (no python3-mpi4py)"
fi

# Recovery: an all-reduce fails (the ranks pass different counts), every rank aborts its
# communicator and makes a new one, which all-reduces exactly; and plain destroy and re-create.
for mode in abort-recreate recreate; do
    out="$scratch/$mode.out"
    timeout 120 "$here/mpirun.sh" "$b" -np 4 --map-by node -x COLL_TIMEOUT=10 \
        "$build/tests/lifecycle_program" "$mode" >"$out" 2>&1 || fail "$mode: $(tail -5 "$out")"
    [[ $(grep -c "$mode ok" "$out") == 4 ]] || fail "$mode: not every rank ok: $(tail -5 "$out")"
done
echo "ok: across 4 hosts, communicators are aborted or destroyed and made again"

# A job of 2 ranks on 2 hosts of run $a that must be refused: collbench fails, and its output
# holds LINE (a grep pattern); WHAT names the case in messages.
expect_refusal() { # WHAT LINE [mpirun -x VARIABLE=VALUE...]
    local what=$1 line=$2 out="$scratch/refused.out"
    shift 2
    if timeout 60 "$here/mpirun.sh" "$a" -np 2 --map-by node "$@" "$collbench" \
        -b 8 -e 8 -n 1 -w 0 >"$out" 2>&1; then
        fail "accepted: $what"
    fi
    grep -q "$line" "$out" || fail "no clear line refusing $what: $(head -5 "$out")"
}

expect_refusal "a filter matching no interface" \
    "COLL_SOCKET_IFNAME='wlan' matches no interface with an IPv4 address on this host" \
    -x COLL_SOCKET_IFNAME=wlan
echo "ok: a filter matching no interface is one line naming the variable"

# UCX between hosts cannot authenticate its connections: refused unless the user trusts the
# network, and exact where they do.
expect_refusal "UCX between hosts without COLL_UCX_TRUST_NETWORK" \
    "set COLL_UCX_TRUST_NETWORK=1 where only the job's hosts reach the network" -x COLL_NET=ucx
out="$scratch/ucx.out"
timeout 120 "$here/mpirun.sh" "$a" -np 2 --map-by node -x COLL_NET=ucx -x COLL_UCX_TRUST_NETWORK=1 \
    "$collbench" -b 8 -e 1M -f 8 -n 2 -w 1 -c 1 --json "$scratch/ucx.json" >"$out" 2>&1 ||
    fail "UCX between trusted hosts: $(tail -5 "$out")"
[[ "$(json_number "$scratch/ucx.json" wrong_total)" == 0 ]] || fail "UCX between hosts: wrong elements"
echo "ok: UCX between hosts is refused in one line, and exact with COLL_UCX_TRUST_NETWORK=1"

# The fault cases: 4 MiB all-reduces in a loop at COLL_TIMEOUT=5 under mpirun (blocking calls;
# with --model-gradients, that model's replay with its queued, asynchronous all-reduces instead);
# once the communicator is made, FAULT (a command) strikes, and every rank must end within COLL_TIMEOUT + 3 s. Leaves
# the launcher's status in `status`, the time from the fault to the last rank's end in
# `ended` (seconds, 3 decimals) and the output in OUT. HEAL (a command) runs before mpirun is
# waited for: mpirun cannot reach a cut-off host's daemon, so it ends only once that is healed.
fault_run() { # ID RANKS OUT FAULT HEAL [collbench args]
    local id=$1 ranks=$2 output=$3 fault=$4 heal=$5 launcher cut_ms ended_ms
    shift 5
    local load=(-b 4M -e 4M -n 1000000 -w 1)
    [[ "${1:-}" == --model-gradients ]] && load=(-n 1000000 -w 1)
    timeout 120 "$here/mpirun.sh" "$id" -np "$ranks" --map-by node -x COLL_TIMEOUT=5 -x COLL_DEBUG=INFO "$collbench" \
        "${load[@]}" "$@" >"$output" 2>&1 &
    launcher=$!
    # Past set-up (each rank logs its communicator at COLL_DEBUG=INFO once made), so that the
    # fault strikes collectives, not Open MPI's own MPI_Init (which waits forever for a cut-off
    # host: docs/reliability.md).
    for _ in $(seq 600); do
        (($(grep -c "INFO: communicator: " "$output") >= ranks)) && break
        hosts_sleep 0.1
    done
    (($(grep -c "INFO: communicator: " "$output") >= ranks)) ||
        fail "not every communicator made 60 s after the start: $(grep -v '^ ' "$output" | head -5)"
    hosts_sleep 1
    $fault
    cut_ms=$(($(date +%s%N) / 1000000))
    while pgrep -f "^$collbench " >/dev/null; do
        (($(date +%s%N) / 1000000 - cut_ms < 8000)) || fail "ranks still running 8 s after: $fault"
        hosts_sleep 0.2
    done
    ended_ms=$(($(date +%s%N) / 1000000 - cut_ms))
    ended="$((ended_ms / 1000)).$(printf '%03d' $((ended_ms % 1000)))"
    $heal
    status=0
    wait "$launcher" || status=$?
    ((status != 0)) || fail "mpirun exited 0 after: $fault"
}
# OUT SIDE_PATTERN_OF: every report ("collbench: rank R: ...") names a rank of the other side
# (SIDE_PATTERN_OF R prints the other side's host pattern), but for a rank that reports its
# link to a rank of its own side closed: a consequence, when that rank gave up first and its
# last words could not be sent (its link was inside a message). At least one report must name
# the other side.
check_reports() {
    local output=$1 other_of=$2 report rank other named=0
    grep -q "^collbench: rank" "$output" || fail "no rank reported: $(grep -v -e '^ ' -e 'INFO:' "$output" | head)"
    while read -r report; do
        rank=$(sed -n 's/^collbench: rank \([0-9]*\):.*/\1/p' <<<"$report")
        other=$($other_of "$rank")
        if grep -q "($other)" <<<"$report"; then
            named=1
        elif ! grep -q "lost the connection to rank [0-9]* ([^)]*) (connection closed)" <<<"$report"; then
            fail "rank $rank names neither the other side nor a closed link: $report"
        fi
    done < <(grep "^collbench: rank" "$output")
    ((named)) || fail "no report names the other side: $(grep '^collbench: rank' "$output")"
}
other_host_of() { if (($1 % 2 == 0)); then echo "ch-$a-2"; else echo "ch-$a-1"; fi; }
other_pair_of() { if (($1 < 2)); then echo "ch-$b-[34]"; else echo "ch-$b-[12]"; fi; }

kill_host() { # ID I: every process of host I, its ranks and Open MPI's daemon
    local pids
    mapfile -t pids < <(ip netns pids "ch-$1-$2")
    kill -9 "${pids[@]}"
}

# A pulled link: both ranks name the other's host.
fault_run "$a" 2 "$scratch/link.out" "hosts_link $a 2 down" "hosts_link $a 2 up"
out="$scratch/link.out"
reports=$(grep "^collbench: " "$out" || true)
grep -q "within 5 s (COLL_TIMEOUT)" <<<"$reports" || fail "no timeout message: $(grep -v -e '^ ' -e 'INFO:' "$out" | head)"
grep -q "rank 1 (ch-$a-2)" <<<"$reports" || fail "the lost host is not named: $(grep -v -e '^ ' -e 'INFO:' "$out" | head)"
echo "ok: a pulled link ends every rank $ended s after the cut, naming the peer's host"

# The same cut under every algorithm that crosses hosts, at 2 hosts x 2 ranks: every rank
# ends, and the ranks name the other host (check_reports).
for algorithm in ring tree halving_doubling ps hierarchical; do
    out="$scratch/link-$algorithm.out"
    fault_run "$a" 4 "$out" "hosts_link $a 2 down" "hosts_link $a 2 up" --algo "$algorithm"
    check_reports "$out" other_host_of
    echo "ok: $algorithm: a pulled link at 2 x 2 ends every rank $ended s after the cut"
done

# The same cut under asynchronous all-reduces: GoogLeNet's replay queues each bucket's
# all-reduce during backward (the progress engine's thread runs them) and waits at the end.
out="$scratch/link-async.out"
fault_run "$a" 4 "$out" "hosts_link $a 2 down" "hosts_link $a 2 up" --model-gradients googlenet --overlap
check_reports "$out" other_host_of
echo "ok: asynchronous: a pulled link at 2 x 2 ends every rank $ended s after the cut"

# Every process of one host killed: every rank that reports names a rank of the lost host.
fault_run "$a" 4 "$scratch/kill.out" "kill_host $a 2" true
reports=$(grep "^collbench: rank" "$scratch/kill.out" || true)
[[ -n "$reports" ]] || fail "no rank reported the lost host: $(grep -v -e '^ ' -e 'INFO:' "$scratch/kill.out" | head)"
if grep -v "(ch-$a-2)" <<<"$reports"; then fail "a report does not name the lost host"; fi
echo "ok: host 2 killed: the other ranks end $ended s later, naming its ranks"

# A partition: hosts 3 and 4 still reach each other but not hosts 1 and 2; the ranks name the
# other side (check_reports).
fault_run "$b" 4 "$scratch/partition.out" "hosts_partition $b on 3 4" "hosts_partition $b off 3 4"
out="$scratch/partition.out"
check_reports "$out" other_pair_of
echo "ok: a partition (hosts 1 2 | 3 4) ends every rank $ended s later; the ranks name the other side"
echo "collbench_across_hosts: PASS"
