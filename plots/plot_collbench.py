#!/usr/bin/python3
"""Plots collbench JSON output as PNG.

  plots/plot_collbench.py sweep.json [more.json ...] -o sweep.png
      sweep mode: bus bandwidth against message size, out of place and in place, one line per
      algorithm and file (so runs measured side by side can be compared)
  plots/plot_collbench.py replay.json -o replay.png
      model mode: aggregation time of each measured iteration, and the per-tensor times when
      the run used --per-layer

Needs Debian's python3-matplotlib (apt-get install python3-matplotlib); run with /usr/bin/python3.
"""
import argparse
import sys

from render_figures import load, plot_busbw


def plot_replay(doc, figure):
    per_tensor = doc.get("per_tensor")
    top = figure.add_subplot(2 if per_tensor else 1, 1, 1)
    top.bar(range(len(doc["iteration_ms"])), doc["iteration_ms"])
    top.set_xlabel("iteration")
    top.set_ylabel("aggregation time (ms)")
    top.set_title(f"{doc['model']} ({doc['variant']}): {doc['tensors']} tensors, "
                  f"{doc['bytes'] / 1e6:.1f} MB, {doc['ranks']} ranks on {doc['nodes']} node(s)")
    if per_tensor:
        bottom = figure.add_subplot(2, 1, 2)
        bottom.bar(range(len(per_tensor)), [t["median_us"] / 1e3 for t in per_tensor])
        bottom.set_xlabel("tensor (backward order)")
        bottom.set_ylabel("all-reduce time (ms)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", nargs="+", help="collbench --json files")
    parser.add_argument("-o", "--output", required=True, help="PNG file to write")
    args = parser.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_collbench: needs python3-matplotlib (apt-get install python3-matplotlib)")
    documents = []
    for path in args.inputs:
        try:
            documents.append((path, load(path)))
        except (OSError, ValueError) as error:
            sys.exit(f"plot_collbench: cannot read {path}: {error}")
    figure = plt.figure(figsize=(10, 6))
    modes = {doc.get("mode") for _, doc in documents}
    if modes == {"sweep"}:
        figure.set_size_inches(14, 5.5)
        plot_busbw(documents, figure)
    elif modes == {"model-gradients"} and len(documents) == 1:
        plot_replay(documents[0][1], figure)
    else:
        sys.exit("plot_collbench: give sweep files, or exactly one model-gradients file")
    figure.tight_layout()
    figure.savefig(args.output, dpi=110)


if __name__ == "__main__":
    main()
