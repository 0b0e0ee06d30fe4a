#!/usr/bin/env bash
# uniqueid_across_hosts.sh BUILD_DIR: the NCCL-shaped start-up across emulated hosts under Open
# MPI's mpirun, with no COLL_* variable set: rank 0 calls collGetUniqueId, the id goes to the
# other ranks by MPI_Bcast, every rank calls collCommInitRank (tests/programs/uniqueid_program.c).
#   - init: exact all-reduces (1 element, counts the rank count does not divide, 1 MiB);
#   - abort-recreate: an all-reduce fails on every rank (rank 0 passes another count), every
#     rank calls collCommAbort, rank 0 makes a new id, the ranks init again and all-reduce
#     exactly.
# At 2 hosts x 1 rank (interfaces named differently), 2 x 2 and 4 x 1. Each id must name host
# 1's address on the hosts' network (not loopback), and the new id a new store. Prints how long
# the failure, the abort and the re-init took (the slowest rank).
# Exit 0: passed; 77: skipped (not root, or ip/unshare/mpirun missing); other: failed.
set -euo pipefail

build=$(readlink -f "${1:?usage: uniqueid_across_hosts.sh BUILD_DIR}")
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=hosts.sh
. "$here/hosts.sh"
hosts_script_begin uniqueid_across_hosts mpirun

program="$build/tests/uniqueid_program"
[[ -x "$program" ]] || fail "no $program"

# What the ranks printed, then the end of what mpirun printed (its MPI_ABORT banner hides them).
printed() { # OUT
    grep '^rank [0-9]*:' "$1" || true
    tail -3 "$1"
}

# The largest of the numbers after WORD ("init 0.123 s") in the ranks' lines.
slowest() { # OUT WORD
    grep -o "$2 [0-9.]* s" "$1" | awk '{ if ($2 > m) m = $2 } END { printf "%.3f", m }'
}

run() { # ID HOSTS RANKS_PER_HOST MODE
    local id=$1 hosts=$2 per=$3 mode=$4 ranks start_ms took_ms address
    ranks=$((hosts * per))
    local out="$scratch/$id-$per-$mode.out"
    address=$(awk -v h="ch-$id-1" '$1 == h {print $2}' "$(hosts_state_dir "$id")/addresses")
    start_ms=$(($(date +%s%N) / 1000000))
    timeout 120 "$here/mpirun.sh" "$id" -np "$ranks" --map-by node "$program" "$mode" \
        >"$out" 2>&1 || fail "$hosts x $per: $mode: $(printed "$out")"
    took_ms=$(($(date +%s%N) / 1000000 - start_ms))
    [[ $(grep -c "^rank [0-9]*: $mode ok" "$out") == "$ranks" ]] ||
        fail "$hosts x $per: $mode: not every rank ok: $(printed "$out")"
    # Every id names host 1's address (rank 0 runs there) on the hosts' network.
    local pattern="store $address:[0-9]*[ ,]"
    [[ $mode == init ]] || pattern+="then $address:[0-9]*;"
    [[ $(grep "^rank [0-9]*: $mode ok" "$out" | grep -c "$pattern") == "$ranks" ]] ||
        fail "$hosts x $per: $mode: an id does not name $address: $(grep "$mode ok" "$out")"
    if [[ $mode == init ]]; then
        echo "ok: $hosts hosts x $per: init from an id on $address, exact; init took" \
            "$(slowest "$out" init) s at most; mpirun $((took_ms / 1000)).$(printf '%03d' $((took_ms % 1000))) s"
    else
        echo "ok: $hosts hosts x $per: abort-recreate: every rank failed within" \
            "$(grep -o 'failed [0-9.]* s' "$out" | awk '{ if ($2 > m) m = $2 } END { printf "%.3f", m }') s," \
            "aborted within $(slowest "$out" abort) s; new id to a working communicator within" \
            "$(slowest "$out" communicator) s (init $(slowest "$out" init) s), exact;" \
            "mpirun $((took_ms / 1000)).$(printf '%03d' $((took_ms % 1000))) s"
    fi
}

a="ua$tag" b="ub$tag"
up "$a" 2 --ifname-style different
run "$a" 2 1 init
run "$a" 2 1 abort-recreate
run "$a" 2 2 init
run "$a" 2 2 abort-recreate
hosts_down "$a"
up "$b" 4
run "$b" 4 1 init
run "$b" 4 1 abort-recreate
echo "uniqueid_across_hosts: PASS"
