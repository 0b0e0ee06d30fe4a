#!/usr/bin/python3
"""Renders every figure of the project from collbench's JSON output, as PNG.

  /usr/bin/python3 plots/render_figures.py [--data plots/data] [--out plots]

reads from the data directory (each file optional; a figure whose input is missing is skipped
with a note):
  sweep.json          collbench --algo all --json ...           -> busbw_vs_size.png
  paper_tables.json   collbench --paper-tables --json ...       -> paper_tables.png
  paper_tables_batch_per_node.json  the same with --batch-per node  -> paper_tables_batch_per_node.png
  scaling.json        collbench --scaling --json ...            -> scaling.png
  trace.json          collbench ... --trace ...                 -> iteration_gantt.png
  trace_run.json      the same run's --json (names the cell in the Gantt chart's title)
  trace_cntk.json, trace_run_cntk.json  the same cell under cntk  -> iteration_gantt_cntk_vs_ddp.png
plots/make_data.sh writes those files with the commands that made the committed ones.

Needs Debian's python3-matplotlib (scripts/install-deps.sh installs it); run with /usr/bin/python3.
"""
import argparse
import json
import os
import sys

STRATEGY_COLOURS = {"cntk": "#8c564b", "mxnet": "#2ca02c", "tensorflow": "#ff7f0e",
                    "caffe-mpi": "#d62728", "horovod": "#9467bd", "ddp": "#17becf",
                    "best": "#1f77b4"}


def load(path):
    with open(path) as handle:
        return json.load(handle)


def plot_busbw(documents, figure):
    """Bus bandwidth against message size, one line per algorithm (and file), out of place and
    in place side by side, both axes logarithmic."""
    panels = [("out_of_place", "out of place"), ("in_place", "in place")]
    shared = None
    starred = False
    for column, (key, title) in enumerate(panels):
        axes = figure.add_subplot(1, 2, column + 1, sharey=shared)
        shared = shared or axes
        for label, doc in documents:
            by_algorithm = {}
            for row in doc["results"]:
                if row["bytes"] > 0 and key in row:
                    by_algorithm.setdefault(row["algorithm"], []).append(row)
            for algorithm, rows in sorted(by_algorithm.items()):
                rows.sort(key=lambda r: r["bytes"])
                name = algorithm if len(documents) == 1 else f"{label}: {algorithm}"
                if not rows[0].get("busbw_standard", True):
                    name += " (wkbw*)"
                    starred = True
                axes.plot([r["bytes"] for r in rows], [r[key]["busbw_gbps"] for r in rows],
                          marker="o", markersize=3, label=name)
        axes.set_xscale("log", base=2)
        axes.set_yscale("log")
        axes.set_xlabel("message size (bytes per rank)")
        axes.set_ylabel("bus bandwidth (GB/s, nccl-tests definition)")
        ranks = ", ".join(sorted({f"{d['ranks']} ranks on {d['nodes']} node(s)"
                                  for _, d in documents}))
        axes.set_title(f"All-reduce bus bandwidth, {title} ({ranks}; measured on the "
                       "project's 2-vCPU VM, plots/make_data.sh)", fontsize="small")
        axes.grid(True, which="both", alpha=0.3)
        axes.legend(fontsize="small")
    if starred:
        figure.text(0.01, 0.01, "* wkbw (parameter server): bytes each worker moves / time = "
                    "algbw x 2(k-1)/k for k servers, not nccl-tests' busbw (collbench prints the "
                    "definition in the sweep's header)", fontsize="small")
    figure.tight_layout(rect=(0, 0.04 if starred else 0, 1, 1))


def plot_paper_tables(doc, figure):
    """Grouped bars: per model, communication per iteration for every strategy at every GPU
    count of Tables 6 and 7, exposed (solid) in front of the total (light), on a linear axis so
    that sub-millisecond differences look as small as they are (top), and the scaling efficiency
    (bottom), with Caffe-MPI's reported 16-GPU speedups as markers. Cells the tool warns about
    carry a mark above their bar."""
    cells = doc["cells"]
    models = list(dict.fromkeys(c["model"] for c in cells))
    strategies = list(dict.fromkeys(c["strategy"] for c in cells))
    gpus = sorted({c["gpus"] for c in cells if c["gpus"] > 1})
    width = 0.8 / len(strategies)
    legend = {}
    for column, model in enumerate(models):
        for row, (key, label) in enumerate([("exposed_ms", "communication (ms/iteration)"),
                                            ("efficiency", "scaling efficiency (%)")]):
            axes = figure.add_subplot(2, len(models), row * len(models) + column + 1)
            for s, strategy in enumerate(strategies):
                values = []
                for g in gpus:
                    match = [c for c in cells if c["model"] == model and c["strategy"] == strategy
                             and c["gpus"] == g]
                    value = match[0][key] if match else 0
                    values.append(value * 100 if key == "efficiency" else value)
                positions = [i + (s - (len(strategies) - 1) / 2) * width for i in range(len(gpus))]
                if key == "exposed_ms":  # the total behind it: what overlap hides is the light part
                    totals = [next((c["comm_ms"] for c in cells if c["model"] == model
                                    and c["strategy"] == strategy and c["gpus"] == g), 0)
                              for g in gpus]
                    axes.bar(positions, totals, width, color=STRATEGY_COLOURS.get(strategy),
                             alpha=0.3)
                axes.bar(positions, values, width, label=strategy,
                         color=STRATEGY_COLOURS.get(strategy))
                for position, g, value in zip(positions, gpus, values):
                    warned = [c for c in cells if c["model"] == model and c["strategy"] == strategy
                              and c["gpus"] == g and c.get("warning")]
                    if warned:
                        axes.annotate("\u26a0", (position, value), ha="center", va="bottom",
                                      fontsize="x-small")
                if key == "efficiency" and strategy == "caffe-mpi":
                    for point in doc.get("references", []):
                        if point["model"] == model and point["gpus"] in gpus:
                            axes.plot(positions[gpus.index(point["gpus"])],
                                      100 * point["efficiency"], marker="*", markersize=11,
                                      color="black", linestyle="none",
                                      label="Caffe-MPI README, reported (16 GPUs)")
            axes.set_xticks(range(len(gpus)))
            axes.set_xticklabels([f"{g}\n({'1 node' if g <= 4 else str(g // 4) + ' nodes'})"
                                  for g in gpus])
            axes.set_xlabel("GPUs (Table 6: one node; Table 7: 4 GPUs per node)")
            axes.set_ylabel(label)
            if key == "exposed_ms":
                axes.set_title(f"{model}: communication per iteration")
            else:
                axes.set_ylim(0, 105)
                axes.set_title(f"{model}: throughput / (GPUs x one GPU's)")
            axes.grid(True, axis="y", which="both", alpha=0.3)
            if column == 0:
                for handle, text in zip(*axes.get_legend_handles_labels()):
                    if text not in legend:
                        legend[text] = handle
    figure.suptitle(f"The paper's Tables 6 and 7, modelled ({doc['cost_model']}, batch per "
                    f"{doc['batch_per']}); top: solid = exposed (not hidden by backward), "
                    "light = total communication; \u26a0 = the tool warns about the cell", fontsize=11)
    figure.text(0.01, 0.005, "Model: links without contention from other jobs or jitter; "
                "compute from each layer's FLOPs at one share of the P40's peak "
                "(docs/compute_profile.md); the star: Caffe-MPI 2.0's README speedup as the "
                "project's reference reports it (the README was not read).", fontsize="small")
    handles, labels = list(legend.values()), list(legend)
    figure.legend(handles, labels, loc="upper center", ncol=len(labels),
                  bbox_to_anchor=(0.5, 0.965), fontsize="small")
    figure.tight_layout(rect=(0, 0.03, 1, 0.93))


def plot_scaling(doc, figure):
    """Scaling efficiency against GPU count, one line per strategy, per model."""
    cells = doc["cells"]
    models = list(dict.fromkeys(c["model"] for c in cells))
    for column, model in enumerate(models):
        axes = figure.add_subplot(1, len(models), column + 1)
        for strategy in dict.fromkeys(c["strategy"] for c in cells):
            rows = sorted((c for c in cells if c["model"] == model and c["strategy"] == strategy),
                          key=lambda c: c["gpus"])
            axes.plot([c["gpus"] for c in rows], [100 * c["efficiency"] for c in rows],
                      marker="o", markersize=3, label=strategy,
                      color=STRATEGY_COLOURS.get(strategy))
        per_node = cells[0]["ranks_per_node"]
        axes.set_xscale("log", base=2)
        axes.set_ylim(0, 105)
        axes.set_xlabel(f"GPUs ({per_node} per node)")
        axes.set_ylabel("scaling efficiency (%)")
        axes.set_title(f"{model}: modelled scaling")
        axes.grid(True, which="both", alpha=0.3)
        if column == 0:
            axes.legend(fontsize="small")
    figure.suptitle(f"Simulation at scale ({doc['cost_model']}, batch per {doc['batch_per']}): "
                    "a model without contention, stragglers or jitter, so flat lines are an upper "
                    "bound, not a prediction", fontsize=11)
    figure.tight_layout()


def gantt_title(run):
    """Names the iteration a trace shows, from the emulated cell's JSON written beside it."""
    if run is None:
        return "One overlapped training iteration per rank"
    cell = run["cells"][0]["modelled"]
    return (f"One {cell['model']} iteration per rank: {cell['strategy']} on "
            f"{cell['nodes']} nodes x {cell['ranks_per_node']} GPUs, emulated "
            f"{run['cost_model']} ({run['clock']} clock; plots/make_data.sh)")


def plot_gantt(trace, figure, title, axes=None):
    """Per-rank timeline of one iteration: each rank gets a row per lane (backward compute,
    all-reduce), bars from the Chrome trace's complete events."""
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    lanes = {}
    for e in trace["traceEvents"]:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            lanes[(e["pid"], e["tid"])] = e["args"]["name"]
    rows = sorted({(e["pid"], e["tid"]) for e in events})
    axes = axes or figure.add_subplot(1, 1, 1)
    colours = {"backward": "#7f7f7f", "compute": "#7f7f7f"}
    for index, key in enumerate(rows):
        lane = lanes.get(key, str(key[1]))
        spans = [(e["ts"] / 1e3, e["dur"] / 1e3) for e in events if (e["pid"], e["tid"]) == key]
        colour = colours.get(lane, "#1f77b4")
        axes.broken_barh(spans, (index - 0.4, 0.8), facecolors=colour, edgecolors="white",
                         linewidth=0.3)
    axes.set_yticks(range(len(rows)))
    axes.set_yticklabels([f"rank {pid} {lanes.get((pid, tid), tid)}" for pid, tid in rows],
                         fontsize="small")
    axes.set_ylim(len(rows) - 0.5, -1.2)  # top to bottom, a band above the first row
    backward_end = max((e["ts"] + e["dur"]) / 1e3 for e in events if e.get("cat") == "backward")
    axes.axvline(backward_end, color="black", linestyle="--", linewidth=1)
    axes.annotate("end of backward ", (backward_end, -0.8), fontsize="small", ha="right",
                  va="center")
    axes.set_xlabel("time from the start of backward (ms)")
    axes.set_title(title)
    axes.grid(True, axis="x", alpha=0.3)
    from matplotlib.patches import Patch
    axes.legend(handles=[Patch(color="#7f7f7f", label="backward (one bar per layer)"),
                         Patch(color="#1f77b4", label="all-reduce (one bar per bucket)")],
                fontsize="small", loc="upper left", ncol=2)
    figure.tight_layout()


def plot_gantt_pair(traces, figure):
    """The same cell's iteration under two strategies, one above the other on one time axis:
    what overlapping the all-reduces with backward (ddp) changes against running them after it
    (cntk)."""
    top = None
    for index, (trace, title) in enumerate(traces):
        axes = figure.add_subplot(len(traces), 1, index + 1, sharex=top)
        top = top or axes
        plot_gantt(trace, figure, title, axes)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--data", default=os.path.join(here, "data"), help="JSON directory")
    parser.add_argument("--out", default=here, help="directory for the PNG files")
    args = parser.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("render_figures: needs python3-matplotlib (scripts/install-deps.sh)")

    def render(name, size, draw, source):
        path = os.path.join(args.data, source)
        if not os.path.exists(path):
            print(f"render_figures: skipped {name}: no {path}")
            return
        figure = plt.figure(figsize=size)
        try:
            draw(load(path), figure)
        except (KeyError, ValueError) as error:
            sys.exit(f"render_figures: {path} is not the JSON {name} needs: {error}")
        out = os.path.join(args.out, name)
        figure.savefig(out, dpi=100)
        plt.close(figure)
        print(f"render_figures: wrote {out}")

    render("busbw_vs_size.png", (14, 5.5), lambda d, f: plot_busbw([("sweep", d)], f),
           "sweep.json")
    render("paper_tables.png", (16, 9), plot_paper_tables, "paper_tables.json")
    render("paper_tables_batch_per_node.png", (16, 9), plot_paper_tables,
           "paper_tables_batch_per_node.json")
    render("scaling.png", (16, 5), plot_scaling, "scaling.json")
    run_path = os.path.join(args.data, "trace_run.json")
    run = load(run_path) if os.path.exists(run_path) else None
    render("iteration_gantt.png", (14, 6), lambda d, f: plot_gantt(d, f, gantt_title(run)),
           "trace.json")
    cntk_run_path = os.path.join(args.data, "trace_run_cntk.json")
    cntk_run = load(cntk_run_path) if os.path.exists(cntk_run_path) else None
    if os.path.exists(os.path.join(args.data, "trace.json")):
        ddp = load(os.path.join(args.data, "trace.json"))
        render("iteration_gantt_cntk_vs_ddp.png", (14, 10),
               lambda d, f: plot_gantt_pair([(d, gantt_title(cntk_run)),
                                             (ddp, gantt_title(run))], f),
               "trace_cntk.json")


if __name__ == "__main__":
    main()
