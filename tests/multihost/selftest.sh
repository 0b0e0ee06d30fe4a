#!/usr/bin/env bash
# selftest.sh: checks the multi-host fixture (hosts.sh, rsh-agent, mpirun.sh,
# and slurm.sh when Slurm is installed). Root only.
# Exit 0: passed; 77: skipped (not root, or ip/unshare missing); other: failed.
# Every wait is bounded; every run it makes is torn down, also on failure,
# Ctrl-C or SIGTERM.
set -euo pipefail

here="$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"

if [[ $(id -u) != 0 ]]; then echo "selftest: SKIP: needs root (network namespaces)"; exit 77; fi
for tool in ip unshare; do
    command -v "$tool" >/dev/null || { echo "selftest: SKIP: $tool not found"; exit 77; }
done

# shellcheck source=hosts.sh source-path=SCRIPTDIR
. "$here/hosts.sh"

# Run ids unique to this process, so selftests may run side by side.
tag=$(printf '%05d' $(($$ % 100000)))
A="sa$tag" B="sb$tag" C="sc$tag" D="sd$tag"
hosts_auto_down "$A" "$B" "$C" "$D"
# slurm.sh's daemons live in the run's namespaces, so hosts_down ends them;
# also drop its state, if any, on exit.
_st_exit() {
    local rc=$?
    [[ ! -x "$here/slurm.sh" ]] || "$here/slurm.sh" "$D" down >/dev/null 2>&1 || true
    _hosts_on_exit "$rc"
}
trap '_st_exit' EXIT

fail() { echo "selftest: FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }
have_mpirun=1
command -v mpirun >/dev/null || have_mpirun=0

addr_of() { awk -v h="ch-$1-$2" '$1 == h {print $2}' "$(hosts_state_dir "$1")/addresses"; }

# Host I reaches ADDR? (ping if present, else a TCP connect by bash, which
# reports "refused" quickly when the host is there and nobody listens.)
reach() { # ID I ADDR
    if command -v ping >/dev/null; then
        hosts_exec "$1" "$2" ping -c1 -W2 -q "$3" >/dev/null 2>&1
    else
        local out
        out=$(hosts_exec "$1" "$2" timeout 3 bash -c "exec 3<>/dev/tcp/$3/9" 2>&1) && return 0
        [[ "$out" == *"refused"* ]]
    fi
}

check_run() { # ID N
    local id=$1 n=$2 i j name out expect
    step "$id: every host reaches every other"
    for ((i = 1; i <= n; i++)); do
        for ((j = 1; j <= n; j++)); do
            ((i == j)) && continue
            reach "$id" "$i" "$(addr_of "$id" "$j")" || fail "host $i of $id cannot reach host $j"
        done
    done
    step "$id: each host has its own hostname"
    for ((i = 1; i <= n; i++)); do
        name=$(hosts_exec "$id" "$i" hostname)
        [[ "$name" == "ch-$id-$i" ]] || fail "host $i of $id says hostname '$name'"
    done
    [[ "$(hostname)" != ch-* ]] || fail "the machine's own hostname was changed to $(hostname)"

    if ((have_mpirun == 0)); then
        echo "   (mpirun not found: MPI checks skipped)"
        return 0
    fi
    for per in 1 2; do
        step "$id: mpirun.sh -np $((n * per)) --map-by node hostname ($per per host)"
        out=$(timeout 60 "$here/mpirun.sh" "$id" -np $((n * per)) --map-by node hostname 2>&1) ||
            fail "mpirun.sh failed: $out"
        expect=$(for ((i = 1; i <= n; i++)); do echo "$per ch-$id-$i"; done)
        got=$(grep "^ch-$id-" <<<"$out" | sort | uniq -c | awk '{print $1, $2}' | sort -k2)
        [[ "$got" == "$(sort -k2 <<<"$expect")" ]] || fail "mpirun.sh hostname gave:
$out"
        while read -r line; do echo "   $line"; done <<<"$got"
    done
    step "$id: Open MPI sees $n separate nodes"
    out=$(timeout 60 "$here/mpirun.sh" "$id" -np "$n" --map-by node --display-map true 2>&1) ||
        fail "mpirun.sh --display-map failed: $out"
    [[ $(grep -c "Data for node: ch-$id-" <<<"$out") == "$n" ]] || fail "display-map:
$out"
}

# Namespaces or state of run ID left?
assert_gone() { # ID
    ! ip netns list | grep -qE "^(cbr-$1|ch-$1-[0-9]+)( |$)" || fail "namespaces of $1 left: $(ip netns list | tr '\n' ' ')"
    [[ ! -e "$(hosts_state_dir "$1")" ]] || fail "state dir of $1 left"
}

# --- 2 hosts, rate limited --------------------------------------------------
step "up $A: 2 hosts, --rate 50mbit"
t0=$(date +%s%N)
hosts_up "$A" 2 --rate 50mbit || fail "hosts_up $A"
echo "   up: $(ms_since "$t0") ms"
check_run "$A" 2

step "$A: tbf rate limit"
q=$(hosts_exec "$A" 1 tc qdisc show dev eth0)
[[ "$q" == *"tbf"*"rate 50Mbit"* ]] || fail "no tbf 50Mbit on host 1: $q"
echo "   $q"
if command -v iperf3 >/dev/null; then
    # 4 MB at 50 Mbit/s is about 0.7 s; the server serves one test and exits.
    hosts_exec "$A" 2 timeout 30 iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
    srv=$!
    bps=""
    for ((k = 0; k < 20; k++)); do
        out=$(hosts_exec "$A" 1 timeout 20 iperf3 -c "$(addr_of "$A" 2)" -p 5201 -n 4M -f m 2>&1) && {
            bps=$(awk '/receiver/ {for (f = 1; f < NF; f++) if ($(f + 1) == "Mbits/sec") print $f}' <<<"$out")
            break
        }
        sleep 0.2 # server not listening yet
    done
    wait "$srv" 2>/dev/null || true
    [[ -n "$bps" ]] || fail "iperf3 transfer failed: $out"
    echo "   iperf3 host1 -> host2: $bps Mbit/s"
    awk -v b="$bps" 'BEGIN {exit !(b > 10 && b < 60)}' || fail "rate $bps Mbit/s is not about 50"
else
    echo "   (iperf3 not found: transfer check skipped)"
fi

step "$A: link down / up"
hosts_link "$A" 2 down
! reach "$A" 1 "$(addr_of "$A" 2)" || fail "host 2 reachable with its link down"
if ((have_mpirun)); then
    # A hostfile host that never starts (issue 42, 3c): the agent cannot reach it, as ssh could
    # not, and mpirun ends at once, non-zero, naming it; no process is left on the other host.
    step "$A: mpirun with host 2 unreachable ends within ConnectTimeout, naming it"
    t0=$(date +%s%N)
    out=$(timeout 60 "$here/mpirun.sh" "$A" -np 2 --map-by node \
        --mca plm_rsh_args "-o ConnectTimeout=2" sleep 30 2>&1) && fail "mpirun.sh succeeded: $out"
    took=$(ms_since "$t0")
    echo "   mpirun exited non-zero after $took ms: $(grep -m1 "ch-$A-2" <<<"$out")"
    ((took < 10000)) || fail "mpirun took $took ms (timeout 60 s is 60000): $out"
    grep -q "ssh: connect to host ch-$A-2 port 22: Connection timed out" <<<"$out" ||
        fail "mpirun's output does not name the unreachable host ch-$A-2: $out"
    left=$(ip netns pids "ch-$A-1" 2>/dev/null | wc -l)
    ((left == 0)) || fail "$left process(es) left on host 1: $(ip netns pids "ch-$A-1" | xargs ps -o args= -p)"
fi
hosts_link "$A" 2 up
ok=0
for ((k = 0; k < 10; k++)); do
    if reach "$A" 1 "$(addr_of "$A" 2)"; then ok=1; break; fi
    sleep 0.5
done
((ok)) || fail "host 2 unreachable after link up"

step "down $A"
t0=$(date +%s%N)
hosts_down "$A"
echo "   down: $(ms_since "$t0") ms"
assert_gone "$A"
hosts_down "$A" || fail "second down failed" # idempotent

# --- 4 hosts, interface names differ ---------------------------------------
step "up $B: 4 hosts, --ifname-style different"
t0=$(date +%s%N)
hosts_up "$B" 4 --ifname-style different || fail "hosts_up $B"
echo "   up: $(ms_since "$t0") ms"
sed 's/^/   /' "$(hosts_state_dir "$B")/addresses"
check_run "$B" 4
if ((have_mpirun)) && command -v mpicc >/dev/null; then
    # An MPI program across hosts: only TCP may connect them (vader alone
    # must fail between hosts, because they are separate nodes).
    step "$B: MPI_Allreduce over TCP; shared memory alone cannot cross hosts"
    src="$(hosts_state_dir "$B")/ar.c"
    cat >"$src" <<'EOF'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int r, n, x, s = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    x = r + 1;
    MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (r == 0) printf("sum %d\n", s);
    MPI_Finalize();
    return s == n * (n + 1) / 2 ? 0 : 1;
}
EOF
    mpicc -o "${src%.c}" "$src" || fail "mpicc"
    out=$(timeout 60 "$here/mpirun.sh" "$B" -np 8 --map-by node --mca btl tcp,self "${src%.c}" 2>&1) ||
        fail "allreduce over tcp: $out"
    [[ "$out" == *"sum 36"* ]] || fail "allreduce: $out"
    out=$(timeout 60 "$here/mpirun.sh" "$B" -np 8 --map-by node --mca btl tcp,vader,self "${src%.c}" 2>&1) ||
        fail "allreduce over tcp+vader: $out"
    if timeout 60 "$here/mpirun.sh" "$B" -np 2 --map-by node --mca btl vader,self "${src%.c}" >/dev/null 2>&1; then
        fail "ranks on two hosts talked through shared memory alone"
    fi
    echo "   ok: tcp works; vader,self alone fails between hosts"
fi
step "down $B"
t0=$(date +%s%N)
hosts_down "$B"
echo "   down: $(ms_since "$t0") ms"
assert_gone "$B"

# --- cleanup when a test script is killed midway ---------------------------
step "$C: a script killed by SIGTERM midway (mpirun running) leaves nothing"
mark="/tmp/collhosts-selftest-$tag.mark"
vlog="/tmp/collhosts-selftest-$tag.log" # the victim's stderr ("Terminated" notes)
rm -f "$mark" "$vlog"
(
    HOSTS_AUTO_DOWN_IDS="" # this subshell cleans up only its own run
    hosts_auto_down "$C"
    hosts_up "$C" 3
    if ((have_mpirun)); then
        "$here/mpirun.sh" "$C" -np 3 --map-by node sleep 60 >/dev/null 2>&1 &
    fi
    hosts_exec "$C" 2 sleep 60 &
    touch "$mark"
    hosts_sleep 60
) 2>"$vlog" &
victim=$!
for ((k = 0; k < 100; k++)); do [[ -e "$mark" ]] && break; sleep 0.1; done
[[ -e "$mark" ]] || fail "killed-run subshell did not start: $(cat "$vlog")"
rm -f "$mark"
# Give mpirun time to start its orteds and ranks (bounded).
for ((k = 0; k < 50; k++)); do
    [[ $(ip netns pids "ch-$C-3" 2>/dev/null | wc -l) -ge 2 ]] && break
    sleep 0.1
done
pids=$(for ns in "cbr-$C" "ch-$C-1" "ch-$C-2" "ch-$C-3"; do ip netns pids "$ns" 2>/dev/null; done | tr '\n' ' ')
echo "   processes in $C before SIGTERM: $(wc -w <<<"$pids")"
kill -TERM "$victim"
wait "$victim" 2>/dev/null || true
assert_gone "$C"
rm -f "$vlog"
# Alive = exists and is not a zombie (a zombie waits for its reaper; bounded).
alive() { local st; st=$(ps -o stat= -p "$1" 2>/dev/null) && [[ "$st" != Z* ]]; }
for p in $pids; do
    for ((k = 0; k < 20; k++)); do alive "$p" || break; sleep 0.1; done
    ! alive "$p" || fail "process $p of $C survived: $(ps -o args= -p "$p")"
done

# --- Slurm (optional) ------------------------------------------------------
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
    echo "== slurm: SKIP (slurm-wlm/munge not installed: apt-get install -y slurm-wlm munge)"
elif [[ ! -x "$here/slurm.sh" ]]; then
    echo "== slurm: SKIP (no slurm.sh)"
else
    step "up $D: 2 hosts + Slurm"
    hosts_up "$D" 2 || fail "hosts_up $D"
    t0=$(date +%s%N)
    "$here/slurm.sh" "$D" up || fail "slurm.sh $D up"
    echo "   slurm up: $(ms_since "$t0") ms"
    out=$("$here/slurm.sh" "$D" run timeout 60 srun -N 2 -n 2 hostname 2>&1) || fail "srun: $out"
    got=$(sort <<<"$out" | tr '\n' ' ')
    [[ "$got" == "ch-$D-1 ch-$D-2 " ]] || fail "srun -N 2 -n 2 hostname gave: $out"
    echo "   srun -N 2 -n 2 hostname: $got"
    "$here/slurm.sh" "$D" down || fail "slurm.sh $D down"
    hosts_down "$D"
    assert_gone "$D"
fi

left=$(ip netns list | grep -E "^(cbr|ch)-s[abcd]$tag" || true)
[[ -z "$left" ]] || fail "namespaces left: $left"
echo "selftest: PASS"
