#!/usr/bin/env bash
# strangers_across_hosts.sh BUILD_DIR: processes that are not part of a job connect to its ranks
# and must not disturb it (issue 42, item 2). Two emulated hosts, one rank each, started by
# mpirun (tests/multihost/mpirun.sh) with COLL_DEBUG=INFO, run 1 MiB all-reduces (collbench,
# every round's last call checked exactly). The strangers (stranger.py: silent, garbage, a huge
# length, a wrong proof, a wrong and a duplicate rank, a replayed hello, 500 idle connections, a
# slow sender) come from the same host and from another one.
#
# 1. While a collective runs (COLL_TIMEOUT=10): at every TCP port a rank listens on, and at the
#    port where rank 1 accepted its libcoll link. Checked:
#    - the job exits 0 with 0 wrong elements, and still ran when the strangers were done;
#    - each rank's VmRSS grew by at most 8 MiB over the attacks;
#    - libcoll's data listener (socket_rendezvous.cc) is closed once the ranks are linked: no
#      rank listens on its host's own address (libcoll binds it; Open MPI binds 0.0.0.0), and
#      the port where rank 1 accepted rank 0's link refuses every stranger at connect (the
#      kernel's reset: refused, nothing to log);
#    - the job's output is the run without strangers' (numbers aside) plus at most one
#      `sockets: refused a connection` line per stranger connection to a libcoll listener.
#    A rank's other listener is Open MPI's TCP BTL (0.0.0.0, port 1024 and up), not libcoll's
#    (docs/store.md, "Across hosts: who may connect"): its strangers are sent and measured
#    alike and must not disturb the job, but that Open MPI keeps them open is reported, not
#    failed, unless STRANGERS_STRICT=1.
# 2. During set-up, the only time a libcoll listener is open (COLL_TIMEOUT=40): a routing rule
#    on host 1 refuses rank 0's libcoll connection to rank 1 (its retries every 20 ms fail) while
#    Open MPI's BTL ports (pinned to 1024-2023) still pass, so rank 1's listener stays open
#    until the strangers are done; then the rule goes and the ranks link. Checked: rank 0, which
#    connects to every peer and expects no connection, does not listen at all; every stranger
#    connection to rank 1's listener is closed within 1.5 s; each greeting got libcoll's
#    challenge (the handshake really examined it); the job then links and exits 0 with 0 wrong;
#    at most one refusal line per connection. From another host means from the launcher's
#    namespace here: host 1's rule would hold the strangers' packets to rank 1 as well.
# Every connection to a libcoll listener must be refused or closed within 1.5 s: libcoll's 1 s
# handshake deadline plus its 100 ms poll and the load of this machine.
# Exit 0: passed; 77: skipped (not root, or ip/unshare/mpirun/ss missing); other: failed.
set -euo pipefail

build=$(readlink -f "${1:?usage: strangers_across_hosts.sh BUILD_DIR}")
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
if [[ $(id -u) != 0 ]]; then echo "strangers_across_hosts: SKIP: needs root (network namespaces)"; exit 77; fi
for tool in ip unshare mpirun ss; do
    command -v "$tool" >/dev/null || { echo "strangers_across_hosts: SKIP: $tool not found"; exit 77; }
done
python=/usr/bin/python3
[[ -x "$python" ]] || python=$(command -v python3) ||
    { echo "strangers_across_hosts: SKIP: python3 not found"; exit 77; }
# shellcheck source=hosts.sh source-path=SCRIPTDIR
. "$here/hosts.sh"
while read -r variable; do unset "$variable"; done < <(env | sed -n 's/^\(COLL_[A-Z0-9_]*\)=.*/\1/p')

limit=1.5                   # seconds a connection to a libcoll listener may stay open
rss_limit_kib=$((8 * 1024)) # growth of a rank's VmRSS over the attacks
attack_s=60                 # how long the attacked job should run: its strangers take ~15 s (4x: the load may fall)
strict=${STRANGERS_STRICT:-0}

scratch=$(mktemp -d)
id="sg$(printf '%05d' $(($$ % 100000)))"
failed=0
fail() { echo "strangers_across_hosts: FAIL: $*" >&2; exit 1; }
problem() { echo "strangers_across_hosts: FAIL: $*" >&2; failed=1; } # goes on to the next part
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    hosts_down "$id" # ends mpirun, the ranks and the strangers: all run in the run's namespaces
    rm -rf "$scratch"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A snapshot of the build: a rebuild during the run cannot swap the binaries under the job.
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
collbench=$(readlink -f "$scratch/prefix/bin/collbench")
hosts_up "$id" 2 >/dev/null || fail "could not make hosts $id"
address_of() { awk -v h="ch-$id-$1" '$1 == h {print $2}' "$(hosts_state_dir "$id")/addresses"; }
a1=$(address_of 1) a2=$(address_of 2)
now_ms() { echo $(($(date +%s%N) / 1000000)); }
json_field() { # FILE EXPRESSION (python, of the JSON document d)
    "$python" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# The job, in the background (mpirun's pid in `launcher`): 2 ranks, one per host; a round is
# 2 x 12 calls of 1 MiB, the last of each checked.
launch_job() { # OUT JSON ROUNDS COLL_TIMEOUT [mpirun args]
    local output=$1 json=$2 rounds=$3 timeout_s=$4
    shift 4
    timeout 600 "$here/mpirun.sh" "$id" -np 2 --map-by node "$@" -x COLL_DEBUG=INFO \
        -x "COLL_TIMEOUT=$timeout_s" "$collbench" -b 1M -e 1M -n 10 -w 1 --rounds "$rounds" -c 1 \
        --json "$json" >"$output" 2>&1 &
    launcher=$!
}
# Until both ranks logged their communicator (stderr, unbuffered: collbench's stdout is a pipe
# under mpirun and comes out at the end).
linked() { [[ $(grep -c '^\[coll rank [01]\] INFO: communicator: ' "$1") == 2 ]]; }
wait_linked() { # OUT
    for _ in $(seq 300); do
        linked "$1" && return
        kill -0 "$launcher" 2>/dev/null || break
        hosts_sleep 0.1
    done
    fail "the job did not start: $(tail -5 "$1")"
}
finish_job() { # OUT JSON WHAT
    local status=0
    wait "$launcher" || status=$?
    ((status == 0)) || fail "$3: the job failed (status $status): $(grep -v '^ ' "$1" | tail -5)"
    [[ $(json_field "$2" "d['wrong_total']") == 0 ]] || fail "$3: the job computed wrong elements"
}

# stranger.py from host SOURCE (0: the launcher's namespace) at ADDRESS:PORT; its JSON lines go
# to DIR/from<SOURCE>_to<HOST>_<KIND>_<ADDRESS>_<PORT>. `attack` runs it in the background.
stranger() { # DIR SOURCE HOST KIND ADDRESS PORT
    hosts_exec "$id" "$2" "$python" "$here/stranger.py" --limit "$limit" "$5:$6" \
        >"$1/from${2}_to${3}_${4}_${5}_${6}" 2>&1 || true
}
strangers=()
attack() { # as stranger
    stranger "$@" &
    strangers+=($!)
}
wait_strangers() {
    local running
    for running in "${strangers[@]}"; do wait "$running" || true; done
    strangers=()
}

# Each connection's fate, by target. A libcoll listener (KIND libcoll-*) must refuse or close
# every connection within the limit (any listener, with STRANGERS_STRICT=1); at one that is
# accepting (libcoll-accepting) every greeting must have been sent libcoll's challenge. Prints
# "PROBLEM: ..." lines, the connections made to each kind of listener ("connections KIND N") and
# those that listeners not libcoll's kept open ("foreign_open N").
verdict() { # DIR
    "$python" - "$1" "$limit" "$strict" <<'EOF'
import json, os, sys

attacks, limit, strict = sys.argv[1], float(sys.argv[2]), sys.argv[3] == "1"
problems, connections, foreign_open = [], {}, 0
for name in sorted(os.listdir(attacks)):
    source, host, kind, address, port = name.split("_")
    lines = open(os.path.join(attacks, name)).read().splitlines()
    results = [json.loads(line) for line in lines if line.startswith("{")]
    if len(results) != 9:
        problems.append(f"{name}: stranger.py did not finish: {lines[-3:]}")
    libcoll = kind.startswith("libcoll")
    print(f"{source} -> host {host[2:]}'s {kind} listener at {address}:{port}")
    held = []  # the cases whose connections stayed open
    for r in results:
        connections[kind] = connections.get(kind, 0) + r["connections"]
        foreign_open += 0 if libcoll else r["open"]
        fate = f"{r['refused']} refused"
        if r["closed"]:
            fate += f", {r['closed']} closed (median {r['median_close_s']} s, max {r['max_close_s']} s)"
        if r["open"]:
            fate += f", {r['open']} still open after {limit} s"
        if r["challenge"]:
            fate += f", {r['challenge']} sent libcoll's challenge"
        print(f"    {r['case']:<15} {r['connections']:>3} connection(s): {fate}")
        if r["open"]:
            held.append(f"{r['case']} {r['open']}/{r['connections']}")
        expected = 1 if r["case"] == "idle-500" else r["connections"]
        if kind == "libcoll-accepting" and r["challenge"] < expected:
            problems.append(f"{name} {r['case']}: libcoll's handshake did not see the greeting "
                            f"({r['challenge']} of {r['connections']} challenged)")
    if held and (libcoll or strict):
        problems.append(f"{name}: connections still open after {limit} s: {', '.join(held)}")
for p in problems:
    print(f"PROBLEM: {p}")
for kind, count in connections.items():
    print(f"connections {kind} {count}")
print(f"foreign_open {foreign_open}")
EOF
}

# The output: at most ALLOWED refusal lines, and otherwise what the run without strangers
# printed (numbers aside, in any order: the ranks' lines interleave). A size may be written in
# KiB ("send buffer 384K") or, off a KiB multiple, in bytes: the send buffer follows the round
# trip the ranks measured, which strangers can lengthen.
refusal='^\[coll rank [0-9]+\] INFO: sockets: refused a connection from '
shape() { grep -vE "$refusal" "$1" | sed -E 's/[0-9]+(\.[0-9]+)?K?/N/g; s/ +/ /g' | sort; }
check_output() { # OUT ALLOWED WHAT
    local refusals
    refusals=$(grep -cE "$refusal" "$1" || true)
    ((refusals <= $2)) || problem "$3: $refusals refusal lines for $2 stranger connections to libcoll's listeners"
    if diff <(shape "$scratch/quiet.out") <(shape "$1") >"$scratch/diff"; then
        echo "ok: $3: the job's output is the quiet run's plus $refusals refusal line(s) (at most $2)"
    else
        sed 's/^/    /' "$scratch/diff" >&2
        problem "$3: the job printed lines the run without strangers did not (> above)"
    fi
}
# Reports the verdict of DIR; a problem for each it found.
report() { # DIR WHAT
    verdict "$1" >"$scratch/verdict"
    sed '/^connections /d; /^foreign_open /d; /^PROBLEM: /d' "$scratch/verdict"
    while read -r line; do problem "$2: $line"; done < <(sed -n 's/^PROBLEM: //p' "$scratch/verdict")
    foreign_open=$(sed -n 's/^foreign_open //p' "$scratch/verdict")
}
connections_to() { # KIND...: the connections made to those kinds of listener
    local kind total=0 count
    for kind in "$@"; do
        count=$(sed -n "s/^connections $kind //p" "$scratch/verdict")
        total=$((total + ${count:-0}))
    done
    echo "$total"
}

# ---- 0. The job without strangers: what it prints undisturbed, and its speed now.
quiet_rounds=20
launch_job "$scratch/quiet.out" "$scratch/quiet.json" "$quiet_rounds" 10
wait_linked "$scratch/quiet.out"
up_ms=$(now_ms)
finish_job "$scratch/quiet.out" "$scratch/quiet.json" "without strangers"
round_ms=$((($(now_ms) - up_ms) / quiet_rounds + 1))
rounds=$((attack_s * 1000 / round_ms + 1))
echo "ok: the job alone: $(grep -c '' "$scratch/quiet.out") lines of output, ~$round_ms ms a round"

# ---- 1. While a collective runs.
out="$scratch/running.out"
launch_job "$out" "$scratch/running.json" "$rounds" 10
wait_linked "$out"
hosts_sleep 1 # let the sweep's buffers settle

rank_pid() { # I: the collbench process in host I's namespace
    local pid
    for pid in $(ip netns pids "ch-$id-$1"); do
        [[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" == "$collbench" ]] && { echo "$pid"; return; }
    done
    fail "no rank running on host $1"
}
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
declare -A pid rss_before
for i in 1 2; do
    pid[$i]=$(rank_pid "$i")
    rss_before[$i]=$(rss_kib "${pid[$i]}")
done

# The targets, "HOST KIND ADDRESS PORT", KIND one of
#   libcoll-open    a rank listening on its host's own address: libcoll's listener, still open
#   libcoll-closed  the port where rank 1 (host 2) accepted rank 0's link: libcoll's listener,
#                   which must be closed now (the higher rank of a pair accepts; rank 0's own
#                   listener, which nobody connected to, left nothing to find it by)
#   openmpi         a wildcard listener of a rank (Open MPI's TCP BTL)
# (IPv4 only: the namespaces have IPv6 off.)
listeners() { # I: ADDRESS:PORT a rank listens on
    hosts_exec "$id" "$1" ss -ltnpH | awk -v pid="pid=${pid[$1]}," '$0 ~ pid {print $4}' |
        grep -E '^[0-9.]+:[0-9]+$' || true
}
targets="$scratch/targets"
: >"$targets"
for i in 1 2; do
    for listener in $(listeners "$i"); do
        kind=openmpi
        [[ "${listener%:*}" != "$(address_of "$i")" ]] || kind=libcoll-open
        echo "$i $kind ${listener%:*} ${listener##*:}" >>"$targets"
    done
done
# Rank 1's connections with host 1: accepted on a port it still listens on, or made to a port
# rank 0 listens on, are Open MPI's; the one left is the link rank 1 accepted on libcoll's listener.
while read -r local remote; do
    [[ "$remote" == "$a1":* ]] || continue
    grep -qx "[0-9.]*:${local##*:}" <<<"$(listeners 2)" && continue
    grep -qx "[0-9.]*:${remote##*:}" <<<"$(listeners 1)" && continue
    echo "2 libcoll-closed ${local%:*} ${local##*:}" >>"$targets"
done < <(hosts_exec "$id" 2 ss -tnpH state established | awk -v pid="pid=${pid[2]}," '$0 ~ pid {print $3, $4}')
echo "ok: the ranks' ports while the collective runs (host kind address port):"
sed 's/^/    /' "$targets"
[[ $(grep -c "^2 libcoll-closed " "$targets") == 1 ]] ||
    fail "found no port where rank 1 accepted rank 0's libcoll link (is the job on the sockets transport?)"
if grep -q " libcoll-open " "$targets"; then
    problem "a rank's libcoll listener is still open while the collective runs"
fi

# Each target from the other host and from its own (its address, and 127.0.0.1 for a wildcard
# listener), all at once.
attacks="$scratch/running"
mkdir "$attacks"
started_ms=$(now_ms)
while read -r host kind address port; do
    reach=$address
    [[ "$address" != 0.0.0.0 ]] || reach=$(address_of "$host")
    attack "$attacks" $((3 - host)) "$host" "$kind" "$reach" "$port"
    attack "$attacks" "$host" "$host" "$kind" "$reach" "$port"
    [[ "$address" != 0.0.0.0 ]] || attack "$attacks" "$host" "$host" "$kind" 127.0.0.1 "$port"
done <"$targets"
wait_strangers
taken_s=$((($(now_ms) - started_ms) / 1000))

for i in 1 2; do
    kill -0 "${pid[$i]}" 2>/dev/null ||
        fail "the rank on host $i ended before the strangers were done ($taken_s s): they did not meet a running collective: $(grep -v '^ ' "$out" | tail -5)"
    rss_after=$(rss_kib "${pid[$i]}")
    growth=$((rss_after - rss_before[$i]))
    echo "ok: rank on host $i: VmRSS ${rss_before[$i]} KiB before the strangers, $rss_after KiB after (+$growth KiB)"
    ((growth <= rss_limit_kib)) || problem "the rank on host $i grew by $growth KiB (limit $rss_limit_kib KiB)"
done
finish_job "$out" "$scratch/running.json" "while a collective runs"
echo "ok: the job ran on through $taken_s s of strangers: exit 0, 0 wrong in $rounds checked rounds"
report "$attacks" "while a collective runs"
check_output "$out" "$(connections_to libcoll-open libcoll-closed)" "while a collective runs"
if ((foreign_open > 0)) && [[ "$strict" != 1 ]]; then
    echo "note: Open MPI's TCP BTL listener (not libcoll's) kept $foreign_open stranger connection(s)" \
        "open past $limit s: it accepts and reads only inside MPI calls, and libcoll makes none" \
        "while a collective runs (STRANGERS_STRICT=1 fails on it)"
fi

# ---- 2. During set-up. Rank 0 connects to rank 1's ephemeral port from an ephemeral port:
# refused on host 1 while the rule stands (EACCES, and libcoll tries again 20 ms later). Open
# MPI's BTL listens on 1024-2023 and passes, as do the replies from its ports.
rule=(to "$a2" ipproto tcp sport 2048-65534 dport 2048-65534 prohibit)
ip -n "ch-$id-1" rule add "${rule[@]}"
out="$scratch/setup.out"
launch_job "$out" "$scratch/setup.json" 3 40 --mca btl_tcp_port_min_v4 1024 --mca btl_tcp_port_range_v4 1000
# libcoll's listeners: the ones bound to a host's own address.
own_port() { # I
    hosts_exec "$id" "$1" ss -ltnH | awk -v at="$(address_of "$1")" 'index($4, at ":") == 1 {sub(/.*:/, "", $4); print $4}'
}
p2=""
for _ in $(seq 300); do
    p2=$(own_port 2)
    [[ -n "$p2" ]] && break
    kill -0 "$launcher" 2>/dev/null || fail "during set-up: the job ended: $(tail -5 "$out")"
    hosts_sleep 0.1
done
[[ -n "$p2" ]] || fail "during set-up: rank 1's libcoll listener did not show up"
p1=$(own_port 1)
[[ -z "$p1" ]] || fail "during set-up: rank 0, which expects no connection, listens at $a1:$p1"
# Rank 1 accepts once it is past the exchange of addresses: wait for its challenge. Each probe
# is one more connection it refuses.
probes=0
challenged() {
    hosts_exec "$id" 2 "$python" -c '
import socket, sys
with socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=1) as s:
    sys.exit(0 if s.recv(8, socket.MSG_WAITALL) == b"collink1" else 1)' "$a2" "$p2" 2>/dev/null
}
until ((++probes > 20)) || challenged; do hosts_sleep 0.2; done
((probes <= 20)) || fail "during set-up: rank 1 at $a2:$p2 sent no challenge"
echo "ok: during set-up: rank 0 does not listen; rank 1 listens at $a2:$p2 (challenging after $probes probe(s))"

attacks="$scratch/setup"
mkdir "$attacks"
# One source after the other: 500 idle connections from one would fill the 64 places of the
# other's greetings, which are then closed unseen.
{
    stranger "$attacks" 2 2 libcoll-accepting "$a2" "$p2"
    stranger "$attacks" 0 2 libcoll-accepting "$a2" "$p2"
} &
strangers+=($!)
wait_strangers
ip -n "ch-$id-1" rule del "${rule[@]}"
finish_job "$out" "$scratch/setup.json" "during set-up"
linked "$out" || fail "during set-up: the ranks did not link"
echo "ok: during set-up: once the strangers were done the ranks linked; exit 0, 0 wrong"
report "$attacks" "during set-up"
# Only rank 1 listens, so only it logs refusals.
check_output "$out" $(($(connections_to libcoll-accepting) + probes)) "during set-up"
((failed == 0)) || exit 1
echo "strangers_across_hosts: PASS"
