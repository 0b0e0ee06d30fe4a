#!/usr/bin/env bash
# Writes the collbench JSON that plots/render_figures.py draws (plots/data/), with the commands
# that made the committed files. Usage: plots/make_data.sh [build directory, default build]
set -euo pipefail
collbench="${1:-build}/bench/collbench"
data="$(dirname "$0")/data"
mkdir -p "$data"
# Measured on this machine: every algorithm, 4 ranks on one node, each size 5 rounds with the
# algorithms alternating (medians).
"$collbench" --ranks-per-node 4 --algo all -b 8 -e 64M -f 4 -n 5 -w 2 --json "$data/sweep.json" \
  > "$data/sweep.md"
# Modelled: the paper's tables on the fitted P40 testbed (both batch readings), and the
# simulation at scale.
"$collbench" --paper-tables --json "$data/paper_tables.json" > "$data/paper_tables.md"
"$collbench" --paper-tables --batch-per node --json "$data/paper_tables_batch_per_node.json" \
  > "$data/paper_tables_batch_per_node.md"
"$collbench" --scaling --json "$data/scaling.json" > "$data/scaling.md"
# Emulated: one overlapped ResNet-50 iteration per rank of ddp on 2 nodes x 2 P40s, over links
# shaped like p40-ib56's, on the virtual clock (the cluster's time, not this machine's).
"$collbench" --paper-tables --emulate --clock virtual --model-gradients resnet50 --strategy ddp \
  --nodes 2 --ranks-per-node 2 -n 2 -w 1 --trace "$data/trace.json" \
  --json "$data/trace_run.json" > "$data/trace_run.md"
# The same cell under cntk (all-reduces after backward), for the pair with ddp.
"$collbench" --paper-tables --emulate --clock virtual --model-gradients resnet50 --strategy cntk \
  --nodes 2 --ranks-per-node 2 -n 2 -w 1 --trace "$data/trace_cntk.json" \
  --json "$data/trace_run_cntk.json" > "$data/trace_run_cntk.md"
