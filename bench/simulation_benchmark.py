#!/usr/bin/python3
"""How long the simulator takes at 4096 GPUs (issue 8, item 6): a benchmark, not a timed test.

Runs `collbench --scaling --json` (every model and strategy, 64-4096 GPUs at 8 per node) and
prints each 4096-GPU cell's own simulation time (`simulated_ms`, measured inside collbench around
the cost model and the WFBP simulator), then the wall time of whole `collbench --model-only`
processes for a ResNet-50 iteration on 512 x 8 GPUs per strategy (median of --repeats runs,
process start-up included).

usage: bench/simulation_benchmark.py [--collbench build/bench/collbench] [--repeats 5]
"""
import argparse
import json
import statistics
import subprocess
import tempfile
import time

STRATEGIES = ["cntk", "mxnet", "tensorflow", "caffe-mpi", "horovod", "ddp", "best"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collbench", default="build/bench/collbench")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([args.collbench, "--scaling", "--json", out.name], check=True,
                       stdout=subprocess.DEVNULL)
        cells = json.load(open(out.name))["cells"]
    print("| model | strategy | simulated in (ms), 4096 GPUs |\n|---|---|---|")
    for cell in cells:
        if cell["gpus"] == 4096:
            print(f"| {cell['model']} | {cell['strategy']} | {cell['simulated_ms']:.1f} |")

    print("\n| strategy | `collbench --model-only` process, ResNet-50 on 512 x 8 (ms, median) |")
    print("|---|---|")
    for strategy in STRATEGIES:
        walls = []
        for _ in range(args.repeats):
            start = time.monotonic()
            subprocess.run([args.collbench, "--model-only", "--nodes", "512", "--ranks-per-node",
                            "8", "--model-gradients", "resnet50", "--strategy", strategy],
                           check=True, stdout=subprocess.DEVNULL)
            walls.append((time.monotonic() - start) * 1e3)
        print(f"| {strategy} | {statistics.median(walls):.0f} |")


if __name__ == "__main__":
    main()
