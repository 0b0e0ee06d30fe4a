#!/usr/bin/env bash
# mpirun.sh RUN_ID [mpirun args...]: Open MPI's mpirun across the emulated
# hosts of `hosts.sh up RUN_ID N`, e.g.
#   tests/multihost/mpirun.sh r1 -np 4 --map-by node ./prog args
#
# mpirun itself runs in the run's launcher namespace (cbr-RUN_ID, address
# SUBNET.254 on the bridge, hostname cl-RUN_ID), which is not in the hostfile,
# so every host is "remote": each gets an orted through rsh-agent, and all
# hosts are treated alike. Flags added, and why:
#   --allow-run-as-root          the fixture needs root, so tests run as root
#   --hostfile STATE/hostfile    ch-RUN_ID-I slots=K, one line per host
#   --mca plm_rsh_agent AGENT    "ssh" into a namespace (tests/multihost/rsh-agent)
#   --mca plm_rsh_no_tree_spawn 1  mpirun starts every orted itself (no orted
#                                launches another), so a host's fault does not
#                                take down the launch of others
#   --mca oob_tcp_if_include CIDR  orted <-> mpirun control traffic over the
#   --mca btl_tcp_if_include CIDR  test subnet only (also the MPI traffic);
#                                works whatever the interface is named
#                                (--ifname-style different)
#   --bind-to none               2 cores shared by all "hosts"
#   --oversubscribe              more ranks than slots/cores
#   -x PATH [-x LD_LIBRARY_PATH] rsh-agent gives orted a clean environment;
#                                the ranks get the caller's PATH (as if shared)
# Open MPI tells nodes apart by hostname (each orted reports its UTS name),
# so ranks on different emulated hosts are off-node to each other: the vader
# (shared memory) BTL is used only between ranks of the same host, and TCP
# between hosts. Give `--mca btl tcp,self` to keep shared memory out entirely.
# Extra mpirun args come last. mpirun rejects an MCA parameter given twice,
# so a --mca/-mca NAME (or --bind-to, --hostfile) among them replaces ours.
set -euo pipefail

here="$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"
# shellcheck source=hosts.sh source-path=SCRIPTDIR
. "$here/hosts.sh"

id=${1:-}
shift || true
_hosts_check_id "$id" || exit 2
dir=$(hosts_state_dir "$id")
[[ -f "$dir/hostfile" ]] || { echo "mpirun.sh: run $id is not up (hosts.sh up $id N)" >&2; exit 2; }
cidr=$(cat "$dir/cidr")
target=$(_hosts_target "$id" 0)
xenv=(-x PATH)
[[ -n "${LD_LIBRARY_PATH+x}" ]] && xenv+=(-x LD_LIBRARY_PATH)

# What the caller sets itself.
declare -A given=()
args=("$@")
for ((k = 0; k < ${#args[@]}; k++)); do
    case "${args[k]}" in
        --mca | -mca | --gmca | -gmca) given["mca:${args[k + 1]:-}"]=1 ;;
        --bind-to | -bind-to) given[bind]=1 ;;
        --hostfile | -hostfile | --machinefile | -machinefile | --host | -host | -H) given[hosts]=1 ;;
    esac
done
flags=(--allow-run-as-root --oversubscribe "${xenv[@]}")
[[ -n "${given[hosts]:-}" ]] || flags+=(--hostfile "$dir/hostfile")
[[ -n "${given[bind]:-}" ]] || flags+=(--bind-to none)
mca() { [[ -n "${given["mca:$1"]:-}" ]] || flags+=(--mca "$1" "$2"); }
mca plm_rsh_agent "$here/rsh-agent"
mca plm_rsh_no_tree_spawn 1
mca oob_tcp_if_include "$cidr"
mca btl_tcp_if_include "$cidr"

# exec, so a signal to this script reaches mpirun (which then stops its orteds).
_hosts_enter "${target% *}" "${target#* }" "$dir/hosts" mpirun "${flags[@]}" "$@"
