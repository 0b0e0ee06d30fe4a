#!/usr/bin/env bash
# slurm_across_hosts.sh BUILD_DIR: libcoll across 2 emulated hosts started by Slurm
# (tests/multihost/slurm.sh: munged, slurmctld, one slurmd per host), with no COLL_* variable:
#   - srun -N 2 -n 2 collbench ...                     (2 hosts x 1 rank, srun alone)
#   - srun -N 2 -n 4 --ntasks-per-node 2 --mpi=pmix collbench ...   (2 hosts x 2 ranks)
#     srun starts the ranks directly: Slurm's mpi/pmix plugin (MpiDefault=pmix in slurm.sh's
#     slurm.conf) gives each a PMIx server, Open MPI's MPI_Init connects to it and libcoll takes
#     the MPI bootstrap (PMIX_RANK is set; there is no OMPI_COMM_WORLD_RANK);
#   - salloc -N 2 -n 4 mpirun collbench ...            (Open MPI's daemons started by srun).
# Each case: exit 0, "wrong_total": 0 in --json, the header counts the ranks on 2 node(s).
# Exit 0: passed; 77: skipped (not root, or ip/unshare/munged/slurmctld/slurmd/srun missing);
# other: failed.
set -euo pipefail

build=$(readlink -f "${1:?usage: slurm_across_hosts.sh BUILD_DIR}")
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
if [[ $(id -u) != 0 ]]; then echo "slurm_across_hosts: SKIP: needs root (network namespaces)"; exit 77; fi
for tool in ip unshare munged slurmctld slurmd srun; do
    command -v "$tool" >/dev/null || { echo "slurm_across_hosts: SKIP: $tool not found"; exit 77; }
done
collbench="$build/bench/collbench"
[[ -x "$collbench" ]] || { echo "slurm_across_hosts: FAIL: no $collbench" >&2; exit 1; }
# shellcheck source=hosts.sh source-path=SCRIPTDIR
. "$here/hosts.sh"
while read -r variable; do unset "$variable"; done < <(env | sed -n 's/^\(\(COLL\|SLURM\|PMIX\|OMPI\)_[A-Z0-9_]*\)=.*/\1/p')

scratch=$(mktemp -d)
id="sl$(printf '%05d' $(($$ % 100000)))"
fail() { echo "slurm_across_hosts: FAIL: $*" >&2; exit 1; }
cleanup() {
    local rc=$?
    trap - EXIT
    trap '' INT TERM # a second signal must not cut the clean-up short
    "$here/slurm.sh" "$id" down >/dev/null 2>&1 || true
    hosts_down "$id"
    rm -rf "$scratch"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

hosts_up "$id" 2 >/dev/null || fail "could not make 2 hosts"
SLURM_SH_DROP_LOGS=1 timeout 90 "$here/slurm.sh" "$id" up >"$scratch/up.out" 2>&1 ||
    fail "slurm.sh $id up: $(tail -5 "$scratch/up.out")"

json_number() { /usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# NAME RANKS LAUNCHER... : run `LAUNCHER... collbench ARGS` in the launcher namespace and check it.
case_() {
    local name=$1 ranks=$2
    shift 2
    local json="$scratch/$name.json" out="$scratch/$name.out"
    timeout 120 "$here/slurm.sh" "$id" run "$@" "$collbench" -b 8 -e 1M -f 8 -n 2 -w 1 -c 1 \
        --json "$json" >"$out" 2>&1 || fail "$name: exit $?: $(tail -5 "$out")"
    if grep -q '1 ranks on 1 node(s)' "$out"; then
        fail "$name: $(grep -c '1 ranks on 1 node(s)' "$out") singleton job(s) instead of one job of $ranks ranks" \
            "(collbench did not take the srun task as a rank process; PMIX_RANK is set, OMPI_COMM_WORLD_RANK is not)"
    fi
    grep -q "$ranks ranks on 2 node(s)" "$out" ||
        fail "$name: header does not count $ranks ranks on 2 nodes: $(grep '^# coll' "$out" || tail -3 "$out")"
    [[ "$(json_number "$json" wrong_total)" == 0 ]] || fail "$name: wrong elements"
    echo "ok: $name: $ranks ranks on 2 node(s), exact, $(grep -c '^ ' "$out") rows"
}

case_ "srun -N 2 -n 2" 2 srun -N 2 -n 2
case_ "srun -N 2 -n 4 --ntasks-per-node 2 --mpi=pmix" 4 srun -N 2 -n 4 --ntasks-per-node 2 --mpi=pmix
if command -v mpirun >/dev/null && command -v salloc >/dev/null; then
    case_ "salloc -N 2 -n 4 mpirun" 4 salloc -N 2 -n 4 mpirun --allow-run-as-root --bind-to none
else
    echo "skipped: salloc -N 2 -n 4 mpirun (no mpirun or salloc)"
fi
echo "slurm_across_hosts: PASS"
