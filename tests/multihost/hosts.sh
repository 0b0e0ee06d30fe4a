#!/usr/bin/env bash
# hosts.sh: emulate N hosts on one machine with network namespaces (root only).
#
#   hosts.sh up RUN_ID N [--rate RATE] [--rate-in RATE] [--burst SIZE]
#                        [--ifname-style same|different] [--slots K]
#   hosts.sh down RUN_ID                  # idempotent, never fails
#   hosts.sh exec RUN_ID I CMD...         # run CMD on host I (I=0: the launcher)
#   hosts.sh link RUN_ID I down|up        # pull / plug host I's cable
#   hosts.sh partition RUN_ID on|off I... # cut hosts I... off from the rest (they keep each other)
#   hosts.sh info RUN_ID                  # print the state dir and its files
#
# Layout of one run (RUN_ID: 1-8 chars of [a-z0-9]):
#   cbr-RUN_ID       bridge namespace: bridge br0, ports vh1..vhN, and the
#                    "launcher" address .254 on br0 (mpirun runs here, see
#                    mpirun.sh), UTS hostname cl-RUN_ID.
#   ch-RUN_ID-I      host I: lo + one veth end (eth0, or ens3/eth0/enp1s0/eth1...
#                    with --ifname-style different) with address SUBNET.I/24,
#                    UTS hostname ch-RUN_ID-I.
# SUBNET is 10.X.Y derived from RUN_ID (bumped if another live run holds it).
# Every interface lives inside the run's namespaces: nothing is added to the
# root namespace, and the addresses are reachable only from inside them.
#
# Processes entered with `exec` (and via rsh-agent) get their own UTS
# namespace (per-host `hostname`) and mount namespace in which the run's
# hosts file is bind-mounted on /etc/hosts, so host names resolve to the
# emulated addresses. They still share /dev/shm, /tmp, PIDs and the boot id.
#
# State dir /tmp/collhosts-RUN_ID/: subnet (e.g. 10.213.7), cidr, n,
# hostfile (Open MPI: "ch-RUN_ID-I slots=K"), addresses ("name addr ifname"),
# hosts (/etc/hosts for the run), rsh-agent (path of the agent to use).
#
# A test script that runs jobs across the hosts begins with `hosts_script_begin NAME TOOL...`
# (below). Or, step by step (cleans up on EXIT, INT and TERM, also on failure):
#   . tests/multihost/hosts.sh
#   hosts_auto_down myrun          # arm the trap first, so a half-built run is removed too
#   hosts_up myrun 4 --rate 1gbit
#   hosts_sleep 5                  # sleep that lets a SIGTERM run the trap at once
#   hosts_exec myrun 2 CMD...; hosts_link myrun 2 down; hosts_down myrun  # as the CLI
# A plain `sleep` in the foreground delays the trap until sleep returns; use
# `cmd & wait $!` (or hosts_sleep) for long waits.

# When sourced, don't leak strict mode into the caller; when run, be strict.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    set -euo pipefail
fi

HOSTS_SH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
HOSTS_STATE_ROOT="${HOSTS_STATE_ROOT:-/tmp}"

_hosts_die() { echo "hosts.sh: $*" >&2; return 1; }

hosts_state_dir() { echo "$HOSTS_STATE_ROOT/collhosts-$1"; }
hosts_bridge_ns() { echo "cbr-$1"; }
hosts_host_ns() { echo "ch-$1-$2"; }

_hosts_check_id() {
    [[ "${1:-}" =~ ^[a-z0-9]{1,8}$ ]] ||
        _hosts_die "RUN_ID must be 1-8 chars of [a-z0-9], got '${1:-}'"
}

# Interface name of host I's veth end.
_hosts_ifname() { # STYLE I
    if [[ "$1" == same ]]; then echo eth0; return; fi
    local names=(ens3 eth0 enp1s0 eth1 ens4 eth2 enp2s0 eth3)
    echo "${names[$((($2 - 1) % ${#names[@]}))]}"
}

# 10.X.Y for RUN_ID: X in 200..249, Y in 0..255, from cksum; on a clash with a
# live run's subnet try the next Y (bounded: 256 tries).
_hosts_pick_subnet() { # RUN_ID
    local h x y k cand taken f
    h=$(printf '%s' "$1" | cksum | cut -d' ' -f1)
    x=$((200 + h % 50))
    y=$(((h / 50) % 256))
    taken=""
    for f in "$HOSTS_STATE_ROOT"/collhosts-*/subnet; do
        [[ -f "$f" ]] && taken+=" $(cat "$f") "
    done
    for ((k = 0; k < 256; k++)); do
        cand="10.$x.$(((y + k) % 256))"
        if [[ "$taken" != *" $cand "* ]]; then echo "$cand"; return; fi
    done
    _hosts_die "no free 10.$x.* subnet"
}

# Run CMD in namespace NS with UTS hostname NAME and the run's /etc/hosts.
_hosts_enter() { # NS NAME HOSTSFILE CMD...
    local ns=$1 name=$2 hostsfile=$3
    shift 3
    # shellcheck disable=SC2016  # $1.. are expanded by the inner sh
    exec ip netns exec "$ns" unshare --uts --mount -- /bin/sh -c '
        hostname "$1" || exit 1
        if [ -f "$2" ]; then mount --bind "$2" /etc/hosts || exit 1; fi
        shift 2
        exec "$@"' sh "$name" "$hostsfile" "$@"
}

# IPv6 off in all of the run's namespaces: no link-local chatter, and
# Open MPI only sees the IPv4 test addresses.
_hosts_sysctl() { # NS
    # shellcheck disable=SC2016
    ip netns exec "$1" sh -c '[ -d /proc/sys/net/ipv6 ] || exit 0
        sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1'
}

# Every step ends in `|| return 1` (not set -e) so that this also stops at the
# first error when sourced or called as `hosts_up ... || ...`.
hosts_up() { # RUN_ID N [options]
    local id=${1:-} n=${2:-}
    shift 2 || true
    _hosts_check_id "$id" || return 1
    [[ "$n" =~ ^[0-9]+$ ]] && ((n >= 1 && n <= 250)) || _hosts_die "N must be 1..250" || return 1
    local rate="" rate_in="" burst="256kb" style=same slots=1
    while (($#)); do
        case "$1" in
            --rate) rate=${2:?--rate needs a value}; shift 2 ;;
            --rate-in) rate_in=${2:?--rate-in needs a value}; shift 2 ;;
            --burst) burst=${2:?--burst needs a value}; shift 2 ;;
            --ifname-style) style=${2:?--ifname-style needs a value}; shift 2 ;;
            --slots) slots=${2:?--slots needs a value}; shift 2 ;;
            *) _hosts_die "unknown option $1"; return 1 ;;
        esac
    done
    [[ "$style" == same || "$style" == different ]] || _hosts_die "bad --ifname-style $style" || return 1
    [[ "$slots" =~ ^[0-9]+$ ]] || _hosts_die "bad --slots $slots" || return 1

    local dir br subnet i ns ifn addr
    dir=$(hosts_state_dir "$id")
    br=$(hosts_bridge_ns "$id")
    if [[ -e "$dir" ]] || ip netns list | grep -qE "^(cbr-$id|ch-$id-[0-9]+)( |$)"; then
        _hosts_die "run $id exists already: hosts.sh down $id first"
        return 3 # distinct, so the CLI does not tear down a live run
    fi
    subnet=$(_hosts_pick_subnet "$id") || return 1
    mkdir -p "$dir" || return 1
    echo "$subnet" >"$dir/subnet"
    echo "$subnet.0/24" >"$dir/cidr"
    echo "$n" >"$dir/n"
    readlink -f "$HOSTS_SH_DIR/rsh-agent" >"$dir/rsh-agent" || return 1
    : >"$dir/hostfile"
    : >"$dir/addresses"
    {
        echo "127.0.0.1 localhost"
        echo "$subnet.254 cl-$id"
    } >"$dir/hosts"

    ip netns add "$br" || return 1
    _hosts_sysctl "$br" || return 1
    ip -n "$br" link set lo up || return 1
    ip -n "$br" link add br0 type bridge || return 1
    ip -n "$br" link set br0 up || return 1
    ip -n "$br" addr add "$subnet.254/24" dev br0 || return 1

    for ((i = 1; i <= n; i++)); do
        ns=$(hosts_host_ns "$id" "$i")
        ifn=$(_hosts_ifname "$style" "$i")
        addr="$subnet.$i"
        ip netns add "$ns" || return 1
        _hosts_sysctl "$ns" || return 1
        ip -n "$ns" link set lo up || return 1
        # Both ends are created inside the run's namespaces, so short fixed
        # names (vhI / eth0) never clash with other runs or the root ns.
        ip -n "$br" link add "vh$i" type veth peer name "$ifn" netns "$ns" || return 1
        ip -n "$br" link set "vh$i" master br0 up || return 1
        ip -n "$ns" addr add "$addr/24" dev "$ifn" || return 1
        ip -n "$ns" link set "$ifn" up || return 1
        if [[ -n "$rate" ]]; then # host's egress
            ip netns exec "$ns" tc qdisc add dev "$ifn" root tbf rate "$rate" burst "$burst" latency 20ms || return 1
        fi
        if [[ -n "$rate_in" ]]; then # bridge port egress = host's ingress
            ip netns exec "$br" tc qdisc add dev "vh$i" root tbf rate "$rate_in" burst "$burst" latency 20ms || return 1
        fi
        echo "$ns slots=$slots" >>"$dir/hostfile"
        echo "$ns $addr $ifn" >>"$dir/addresses"
        echo "$addr $ns" >>"$dir/hosts"
    done
}

# Kill what still runs in namespace NS (processes this fixture started there),
# bounded: TERM, up to 2 s, then KILL.
_hosts_kill_ns() { # NS
    local pids k
    pids=$(ip netns pids "$1" 2>/dev/null | tr '\n' ' ') || true
    [[ -z "${pids// /}" ]] && return 0
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null || true
    for ((k = 0; k < 20; k++)); do
        pids=$(ip netns pids "$1" 2>/dev/null | tr '\n' ' ') || true
        [[ -z "${pids// /}" ]] && return 0
        sleep 0.1
    done
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
}

hosts_down() { # RUN_ID
    local id=${1:-} ns
    _hosts_check_id "$id" 2>/dev/null || return 0
    # Launcher first (mpirun, srun, slurmctld: on TERM they stop their remote
    # parts themselves), then what is left on the hosts; deleting a host ns
    # removes its veth pair.
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^(ch-$id-[0-9]+|cbr-$id)$" | sort); do
        _hosts_kill_ns "$ns"
    done
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^(ch-$id-[0-9]+|cbr-$id)$"); do
        ip netns del "$ns" 2>/dev/null || true
    done
    rm -rf "$(hosts_state_dir "$id")"
    return 0
}

# Print "NS HOSTNAME" of host I of a run (I=0: the launcher namespace).
_hosts_target() { # RUN_ID I
    local id=${1:-} i=${2:-} dir
    _hosts_check_id "$id" || return 1
    dir=$(hosts_state_dir "$id")
    [[ -f "$dir/n" ]] || _hosts_die "run $id is not up" || return 1
    if [[ "$i" == 0 ]]; then
        echo "$(hosts_bridge_ns "$id") cl-$id"
    elif [[ "$i" =~ ^[0-9]+$ ]] && ((i >= 1 && i <= $(cat "$dir/n"))); then
        echo "$(hosts_host_ns "$id" "$i") ch-$id-$i"
    else
        _hosts_die "no host $i in run $id"
    fi
}

hosts_exec() { # RUN_ID I CMD...  (in a subshell, so the caller goes on)
    local t
    t=$(_hosts_target "${1:-}" "${2:-}") || return 1
    (($# > 2)) || _hosts_die "exec: no command" || return 1
    (_hosts_enter "${t% *}" "${t#* }" "$(hosts_state_dir "$1")/hosts" "${@:3}")
}

hosts_link() { # RUN_ID I down|up
    local id=${1:-} i=${2:-} state=${3:-} ifn
    _hosts_check_id "$id" || return 1
    [[ "$state" == up || "$state" == down ]] || _hosts_die "link: state must be up or down" || return 1
    ifn=$(awk -v h="ch-$id-$i" '$1 == h {print $3}' "$(hosts_state_dir "$id")/addresses" 2>/dev/null)
    [[ -n "$ifn" ]] || _hosts_die "no host $i in run $id" || return 1
    ip -n "$(hosts_host_ns "$id" "$i")" link set "$ifn" "$state"
}

# A partition: the listed hosts still reach each other and the launcher, but not the other
# hosts, nor they them (blackhole routes both ways: packets vanish, as on a cut network, with no
# error to the sender); `off` joins them again.
hosts_partition() { # RUN_ID on|off I...
    local id=${1:-} state=${2:-} i j n subnet action
    shift 2 || true
    _hosts_check_id "$id" || return 1
    [[ "$state" == on || "$state" == off ]] || _hosts_die "partition: on or off" || return 1
    action=add
    [[ "$state" == on ]] || action=del
    n=$(cat "$(hosts_state_dir "$id")/n") || return 1
    subnet=$(cat "$(hosts_state_dir "$id")/subnet") || return 1
    for i in "$@"; do
        for ((j = 1; j <= n; j++)); do
            [[ " $* " == *" $j "* ]] && continue
            ip -n "$(hosts_host_ns "$id" "$i")" route "$action" blackhole "$subnet.$j/32" || return 1
            ip -n "$(hosts_host_ns "$id" "$j")" route "$action" blackhole "$subnet.$i/32" || return 1
        done
    done
}

hosts_info() { # RUN_ID
    local dir f
    dir=$(hosts_state_dir "$1")
    [[ -d "$dir" ]] || _hosts_die "run $1 is not up" || return 1
    echo "state: $dir"
    for f in subnet cidr hostfile addresses rsh-agent; do
        echo "--- $f"
        cat "$dir/$f"
    done
}

# Trap helper: `hosts_auto_down RUN_ID...` removes those runs on EXIT, and
# turns INT/TERM into an exit (so the EXIT trap runs). It replaces existing
# EXIT/INT/TERM traps; callers that need their own cleanup can call
# hosts_down themselves from their trap instead.
HOSTS_AUTO_DOWN_IDS=""
hosts_auto_down() {
    HOSTS_AUTO_DOWN_IDS+=" $*"
    trap '_hosts_on_exit' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}
_hosts_on_exit() { # [RC]
    local rc=${1:-$?} id
    trap - EXIT INT TERM
    # A hosts_sleep cut short by the signal leaves its sleep behind.
    [[ -z "${HOSTS_SLEEP_PID:-}" ]] || kill "$HOSTS_SLEEP_PID" 2>/dev/null || true
    for id in $HOSTS_AUTO_DOWN_IDS; do hosts_down "$id"; done
    [[ -z "${HOSTS_AUTO_REMOVE:-}" ]] || rm -rf "$HOSTS_AUTO_REMOVE"
    exit "$rc"
}

# The set-up of a test script that runs jobs across emulated hosts (NAME: the script's name in
# its messages): exits 77 (skipped) unless root with ip, unshare and each TOOL; unsets every
# COLL_* variable, so the jobs run on the library's defaults; sets `scratch` (a new directory)
# and `tag` (5 digits of the process id, for run ids unique to this process); defines
# `fail MESSAGE` (exit 1) and `up RUN_ID N [hosts_up options]`. Every run made by `up`, and the
# scratch directory, are removed on exit, also on failure, INT or TERM (hosts_auto_down).
hosts_script_begin() { # NAME TOOL...
    HOSTS_SCRIPT_NAME=$1
    shift
    if [[ $(id -u) != 0 ]]; then
        echo "$HOSTS_SCRIPT_NAME: SKIP: needs root (network namespaces)"
        exit 77
    fi
    local tool variable
    for tool in ip unshare "$@"; do
        command -v "$tool" >/dev/null || { echo "$HOSTS_SCRIPT_NAME: SKIP: $tool not found"; exit 77; }
    done
    while read -r variable; do unset "$variable"; done < <(env | sed -n 's/^\(COLL_[A-Z0-9_]*\)=.*/\1/p')
    scratch=$(mktemp -d)
    # shellcheck disable=SC2034  # for the script that calls this
    tag=$(printf '%05d' $(($$ % 100000)))
    HOSTS_AUTO_REMOVE=$scratch
    hosts_auto_down
    # shellcheck disable=SC2317  # fail and up: called by the script that calls this
    fail() { echo "$HOSTS_SCRIPT_NAME: FAIL: $*" >&2; exit 1; }
    # shellcheck disable=SC2317
    up() { # RUN_ID N [options]
        hosts_auto_down "$1"
        hosts_up "$@" >/dev/null || fail "could not make hosts $1"
    }
}

# A sleep that a signal interrupts at once (bash runs traps only between
# foreground commands, but does interrupt `wait`).
hosts_sleep() {
    sleep "$1" &
    HOSTS_SLEEP_PID=$!
    wait "$HOSTS_SLEEP_PID" || true
    HOSTS_SLEEP_PID=""
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    cmd=${1:-}
    shift || true
    case "$cmd" in
        up)
            # A failed or interrupted `up` must not leave half a run behind.
            trap 'hosts_down "${1:-}"; exit 130' INT
            trap 'hosts_down "${1:-}"; exit 143' TERM
            hosts_up "$@" || {
                rc=$?
                ((rc == 3)) || hosts_down "${1:-}"
                exit "$rc"
            }
            trap - INT TERM
            ;;
        down) hosts_down "$@" ;;
        exec) # replace this process, so signals reach CMD directly
            t=$(_hosts_target "${1:-}" "${2:-}")
            (($# > 2)) || _hosts_die "exec: no command"
            _hosts_enter "${t% *}" "${t#* }" "$(hosts_state_dir "$1")/hosts" "${@:3}"
            ;;
        link) hosts_link "$@" ;;
        partition) hosts_partition "$@" ;;
        info) hosts_info "$@" ;;
        *)
            sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2
            exit 2
            ;;
    esac
fi
