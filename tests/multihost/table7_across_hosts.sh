#!/usr/bin/env bash
# table7_across_hosts.sh BUILD_DIR: bench/multihost/table7_across_hosts.py still measures a cell.
# One cell of the paper's Table 7 (GoogLeNet, `best`, 2 hosts x 4 ranks) over real TCP between
# emulated hosts, at time scale 1 with one iteration: the script's TCP cell and its virtual-clock
# cell both come out, exact, and the script exits 0 (it exits 1 when a cell fails). The times are
# not judged. Without this the script broke unnoticed when UCX between hosts became refused.
# Exit 0: passed; 77: skipped (not root, or ip/unshare/mpirun missing); other: failed.
set -euo pipefail

build=$(readlink -f "${1:?usage: table7_across_hosts.sh BUILD_DIR}")
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
root=$(dirname "$(dirname "$here")")
# shellcheck source=hosts.sh
. "$here/hosts.sh"
hosts_script_begin table7_across_hosts mpirun

out="$scratch/table7"
"$root/bench/multihost/table7_across_hosts.py" "$build" "$out" --time-scale 1 --iters 1 \
    --warmup 0 --models googlenet --strategies best --shapes 2x4 >"$scratch/log" 2>&1 ||
    fail "the script failed: $(tail -n 3 "$scratch/log")"
grep -Eq '^\| googlenet \| best \| 8 \(2x4\) \| [0-9.e+]+ \| [0-9.e+]+ \| [-+][0-9]+ % \|' "$out/README.md" ||
    fail "no measured row for googlenet best 2x4 in its README: $(grep googlenet "$out/README.md")"
echo "table7_across_hosts: PASS"
