#!/usr/bin/env bash
# slurm.sh: a private Slurm cluster (Debian's slurm-wlm + munge) on the hosts
# of `hosts.sh up RUN_ID N`.
#
#   slurm.sh RUN_ID up              # munged, slurmctld, one slurmd per host
#   slurm.sh RUN_ID run CMD...      # CMD in the launcher ns with SLURM_CONF set,
#                                   #   e.g. slurm.sh r1 run srun -N 2 -n 2 hostname
#   slurm.sh RUN_ID down            # stop the daemons, remove their files
#
# Everything lives under STATE/slurm/ (STATE = /tmp/collhosts-RUN_ID), nothing
# in /etc: one munged with its own key and socket (path sockets are not
# confined by network namespaces, so one munged serves every host), slurmctld
# in the launcher namespace (cl-RUN_ID, SUBNET.254), and `slurmd -N ch-RUN_ID-I`
# in each host namespace with its UTS hostname. Ports are derived from RUN_ID
# (they could be fixed, since each namespace has its own ports).
# No cgroups and no accounting: proctrack/linuxproc, task/none, and a
# cgroup.conf with CgroupPlugin=cgroup/v1 and no constraints.
# MpiDefault=pmix, so `srun -n N prog` gives each task a PMIx server (PMIX_RANK etc.) and
# Open MPI's MPI_Init works without mpirun. TmpFS=STATE/slurm/tmp/%n: a temporary directory per
# host, as the hosts share /tmp and the pmix plugin makes its client directory
# (spmix_appdir_UID_JOB.STEP) under TmpFS; mpi.conf's PMIxCliTmpDirBase does not expand %n.
# The daemons run inside the run's namespaces, so `hosts.sh down` ends them too.
set -euo pipefail

here="$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"
# shellcheck source=hosts.sh source-path=SCRIPTDIR
. "$here/hosts.sh"

die() { echo "slurm.sh: $*" >&2; exit 1; }

id=${1:-}
cmd=${2:-}
shift 2 || true
_hosts_check_id "$id" || exit 2
dir=$(hosts_state_dir "$id")
sd="$dir/slurm"

# Stop the processes whose pids are in FILES together: TERM, up to 5 s, KILL.
stop_pidfiles() {
    local f pid pids=() k
    for f in "$@"; do
        [[ -f "$f" ]] || continue
        pid=$(cat "$f" 2>/dev/null) || continue
        [[ "$pid" =~ ^[0-9]+$ ]] && kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
    done
    for ((k = 0; k < 50 && ${#pids[@]}; k++)); do
        for f in "${!pids[@]}"; do kill -0 "${pids[$f]}" 2>/dev/null || unset "pids[$f]"; done
        ((${#pids[@]})) && sleep 0.1
    done
    ((${#pids[@]} == 0)) || kill -KILL "${pids[@]}" 2>/dev/null || true
}

slurm_down() {
    [[ -d "$sd" ]] || return 0
    stop_pidfiles "$sd"/run/slurmd.*.pid "$sd/run/slurmctld.pid"
    stop_pidfiles "$sd/run/munged.pid"
    rm -rf "$sd"
}

slurm_up() {
    local n subnet h port i k states
    for t in munged slurmctld slurmd srun sinfo; do
        command -v "$t" >/dev/null || die "$t not found (apt-get install -y slurm-wlm munge)"
    done
    [[ -f "$dir/n" ]] || die "run $id is not up (hosts.sh up $id N)"
    [[ ! -e "$sd" ]] || die "slurm of run $id is up already (slurm.sh $id down)"
    n=$(cat "$dir/n")
    subnet=$(cat "$dir/subnet")
    h=$(printf '%s' "$id" | cksum | cut -d' ' -f1)
    port=$((20000 + (h % 2000) * 2)) # slurmctld; slurmd uses port+1

    mkdir -p "$sd"/{run,log,state,spool,tmp} || die "mkdir $sd"
    chmod 0755 "$sd" "$sd/run" # munged: its socket dir must be searchable by all

    # munge: own key and socket. munged refuses world-writable parent dirs
    # unless they are sticky (/tmp is), and a key readable by others.
    (umask 077 && dd if=/dev/urandom of="$sd/munge.key" bs=1024 count=1 status=none)
    hosts_exec "$id" 0 munged --socket="$sd/run/munge.sock" --key-file="$sd/munge.key" \
        --pid-file="$sd/run/munged.pid" --log-file="$sd/log/munged.log" \
        --seed-file="$sd/run/munged.seed" --num-threads=2 ||
        die "munged failed: $(tail -3 "$sd/log/munged.log" 2>/dev/null)"

    {
        echo "ClusterName=c$id"
        echo "SlurmctldHost=cl-$id($subnet.254)"
        echo "SlurmctldPort=$port"
        echo "SlurmdPort=$((port + 1))"
        echo "SlurmUser=root"
        echo "SlurmdUser=root"
        echo "AuthType=auth/munge"
        echo "CredType=cred/munge"
        echo "AuthInfo=socket=$sd/run/munge.sock"
        echo "StateSaveLocation=$sd/state"
        echo "SlurmdSpoolDir=$sd/spool/%n"
        echo "SlurmctldPidFile=$sd/run/slurmctld.pid"
        echo "SlurmdPidFile=$sd/run/slurmd.%n.pid"
        echo "SlurmctldLogFile=$sd/log/slurmctld.log"
        echo "SlurmdLogFile=$sd/log/slurmd.%n.log"
        echo "SlurmctldDebug=info"
        echo "SlurmdDebug=info"
        echo "ProctrackType=proctrack/linuxproc"
        echo "TaskPlugin=task/none"
        echo "JobAcctGatherType=jobacct_gather/none"
        echo "AccountingStorageType=accounting_storage/none"
        echo "SelectType=select/cons_tres"
        echo "SelectTypeParameters=CR_CPU"
        echo "SchedulerType=sched/builtin"
        echo "MpiDefault=pmix"
        echo "ReturnToService=2"
        echo "SlurmdTimeout=30"
        echo "InactiveLimit=0"
        echo "KillWait=5"
        for ((i = 1; i <= n; i++)); do
            echo "NodeName=ch-$id-$i NodeAddr=$subnet.$i CPUs=2 State=UNKNOWN"
        done
        echo "PartitionName=p$id Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES"
    } >"$sd/slurm.conf"
    # Without cgroup.conf slurmd does not start; nothing is constrained.
    {
        echo "CgroupPlugin=cgroup/v1"
        echo "CgroupAutomount=no"
        echo "ConstrainCores=no"
        echo "ConstrainRAMSpace=no"
        echo "ConstrainDevices=no"
    } >"$sd/cgroup.conf"
    # mpi/pmix (srun --mpi=pmix): the hosts share one /tmp, where each slurmstepd would make
    # the same client directory /tmp/spmix_appdir_UID_JOB.STEP ("File exists" on the second
    # host, the step aborts). One base directory per host (%n: the node's name); the plugin
    # falls back to TmpFS when mpi.conf has no PMIxCliTmpDirBase (which takes no %n).
    echo "TmpFS=$sd/tmp/%n" >>"$sd/slurm.conf"

    export SLURM_CONF="$sd/slurm.conf"
    # -c: a clean start (no saved state). The daemons fork into the background.
    hosts_exec "$id" 0 slurmctld -c -f "$SLURM_CONF" ||
        die "slurmctld failed: $(tail -5 "$sd/log/slurmctld.log" 2>/dev/null)"
    for ((i = 1; i <= n; i++)); do
        mkdir -p "$sd/spool/ch-$id-$i" "$sd/tmp/ch-$id-$i"
        hosts_exec "$id" "$i" slurmd -f "$SLURM_CONF" -N "ch-$id-$i" ||
            die "slurmd on host $i failed: $(tail -5 "$sd/log/slurmd.ch-$id-$i.log" 2>/dev/null)"
    done

    # Wait (30 s at most) until every node is idle.
    for ((k = 0; k < 60; k++)); do
        states=$(hosts_exec "$id" 0 sinfo -h -N -o '%T' 2>/dev/null | sort | uniq -c | tr -s ' ') || true
        if [[ "$states" == " $n idle" ]]; then return 0; fi
        sleep 0.5
    done
    die "nodes not idle after 30 s: $states; logs in $sd/log"
}

case "$cmd" in
    up)
        # A failed or interrupted `up` leaves no daemons behind.
        trap 'slurm_down; exit 130' INT
        trap 'slurm_down; exit 143' TERM
        (slurm_up) || {
            rc=$?
            # Keep the logs of a failed start for a look, unless asked not to.
            if [[ -d "$sd/log" && -z "${SLURM_SH_DROP_LOGS:-}" ]]; then
                rm -rf "$dir/slurm-failed-logs"
                cp -r "$sd/log" "$dir/slurm-failed-logs"
                echo "slurm.sh: logs kept in $dir/slurm-failed-logs" >&2
            fi
            slurm_down
            exit "$rc"
        }
        ;;
    run)
        (($#)) || die "run: no command"
        [[ -f "$sd/slurm.conf" ]] || die "slurm of run $id is not up"
        export SLURM_CONF="$sd/slurm.conf"
        t=$(_hosts_target "$id" 0)
        _hosts_enter "${t% *}" "${t#* }" "$dir/hosts" "$@"
        ;;
    down) slurm_down ;;
    *)
        sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2
        exit 2
        ;;
esac
