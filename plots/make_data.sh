#!/usr/bin/env bash
# Writes the collbench JSON that plots/render_figures.py draws (plots/data/), with the commands
# that made the committed files. Usage: plots/make_data.sh [build directory, default build]
set -euo pipefail
collbench="${1:-build}/bench/collbench"
data="$(dirname "$0")/data"
mkdir -p "$data"
# Measured on this machine: every algorithm, 4 ranks on one node.
"$collbench" --ranks-per-node 4 --algo all -b 8 -e 64M -f 4 -n 5 -w 2 --json "$data/sweep.json"
# Modelled: the paper's tables on the fitted P40 testbed, and the simulation at scale.
"$collbench" --paper-tables --json "$data/paper_tables.json" > "$data/paper_tables.md"
"$collbench" --scaling --json "$data/scaling.json" > "$data/scaling.md"
# Measured: one overlapped ResNet-50 iteration per rank (2 nodes x 2 ranks, best's plan).
# Compute x10 (840 ms of backward): this 2-core machine moves ResNet-50's 100 MB among 4
# processes in about a second, so only a slower GPU leaves backward anything to hide behind.
"$collbench" --model-gradients resnet50 --nodes 2 --ranks-per-node 2 --strategy best --compute-scale 10 \
  -n 2 -w 1 --trace "$data/trace.json"
