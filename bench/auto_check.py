#!/usr/bin/python3
"""`auto` against the fastest algorithm, per size, without a decision table and after --tune.

For every shape (NODESxRANKS, e.g. 1x2 2x2 4x1) it runs, in this order:
  1. `COLL_TUNING_FILE=none collbench SHAPE --algo all,auto` over the small and the large sizes
     (the cost model decides),
  2. `collbench SHAPE --tune` over all the sizes, writing OUT/tuning.txt,
  3. the two sweeps of 1. again with that table,
and prints a markdown table per shape: each size's fastest named algorithm, what `auto` ran and
how far behind the fastest it was, in both runs (issue 9's goals: within 25 % without a table,
within 10 % with one). collbench measures every algorithm of a size in interleaved rounds and
reports medians, so the comparison is between times taken side by side.
The times are reported, not judged (they depend on the machine); what is judged is that `auto`
with the table ran the table's algorithm at every size, out of place and in place: the exit
status is 1 where it did not.
"""
import argparse
import json
import os
import subprocess
import sys


def run(cmd, env_extra, log):
    env = dict(os.environ, **env_extra)
    printed = " ".join(f"{k}={v}" for k, v in env_extra.items()) + " " + " ".join(cmd)
    print("$", printed.strip(), flush=True)
    log.write("$ " + printed.strip() + "\n")
    result = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    log.write(result.stdout)
    log.flush()
    if result.returncode != 0:
        sys.exit(f"auto_check: {cmd[0]} failed (exit {result.returncode}); see the log")
    return printed.strip()


def uptime():
    return subprocess.run(["uptime"], stdout=subprocess.PIPE, text=True).stdout.strip()


def shape_flags(shape):
    nodes, _, ranks = shape.partition("x")
    if not (nodes.isdigit() and ranks.isdigit()):
        sys.exit(f"auto_check: a shape is NODESxRANKS_PER_NODE (e.g. 2x2), not '{shape}'")
    return ["--nodes", nodes, "--ranks-per-node", ranks]


def summary(path):
    with open(path) as f:
        report = json.load(f)
    return {size["bytes"]: size for size in report["summary"]}


def verdict(sizes, in_place=False):
    """How close `auto` came to the fastest, out of place (collbench's columns) or in place."""
    column = "_in_place" if in_place else ""
    pcts = [s[f"auto_vs_best{column}_pct"] for s in sizes]
    ran_winner = sum(s[f"auto_ran{column}"] == s[f"winner{column}"] for s in sizes)
    return (f"within 10 % at {sum(p <= 10 for p in pcts)} of {len(pcts)} sizes, "
            f"within 25 % at {sum(p <= 25 for p in pcts)}, worst {max(pcts):+.0f} %; "
            f"ran the fastest algorithm itself at {ran_winner}")


def table_departures(sizes, tuned):
    """The sizes where `auto`, with the table --tune wrote, ran another algorithm than the
    table's rule (rules hold from their from_bytes up; --tune's first rule is at 0): per size,
    what it ran against what the table says, out of place and in place."""
    found = {}
    for size in sizes:
        for field, rules in (("auto_ran", tuned["rules"]),
                             ("auto_ran_in_place", tuned["rules_in_place"])):
            expected = [r["algorithm"] for r in rules if r["from_bytes"] <= size["bytes"]][-1]
            if size[field] != expected:
                found.setdefault(size["bytes"], []).append(
                    f"{field} {size[field]}, the table says {expected}")
    return found


def cell(size):
    times = {a["algorithm"]: a["time_us"] for a in size["algorithms"]}
    return (f"{size['winner']} {times[size['winner']]:.4g} us", size["auto_ran"],
            f"{size['auto_vs_best_pct']:+.0f} %")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shapes", nargs="+", help="NODESxRANKS_PER_NODE, e.g. 1x2 2x2 4x1")
    parser.add_argument("--build", default="build", help="the build folder (bench/collbench)")
    parser.add_argument("--out", required=True, help="folder for the JSON, log and table")
    parser.add_argument("--small", default="-b 8 -e 32K -f 8 -n 1000 -w 100",
                        help="collbench size flags of the small sweep")
    parser.add_argument("--large", default="-b 256K -e 16M -f 8 -n 20 -w 3",
                        help="collbench size flags of the large sweep")
    parser.add_argument("--tune", default="-b 8 -e 16M -f 8 -n 50 -w 5",
                        help="collbench size flags of --tune")
    parser.add_argument("--buffers", choices=("shared", "private"), default="shared",
                        help="collbench --buffers (the table keeps the two kinds' rules apart)")
    args = parser.parse_args()
    collbench = os.path.join(args.build, "bench", "collbench")
    os.makedirs(args.out, exist_ok=True)
    table = os.path.abspath(os.path.join(args.out, "tuning.txt"))
    report = [f"# `auto` against the fastest algorithm: {' '.join(args.shapes)}\n",
              "Command: `bench/auto_check.py " + " ".join(sys.argv[1:]) + "`; each sweep "
              "measures every algorithm of a size in 5 interleaved rounds (medians, slowest rank; "
              "the table out of place, a verdict line in place). \"vs fastest\" = (auto - "
              "fastest named algorithm) / fastest.\n"]
    departures = []
    with open(os.path.join(args.out, "log.txt"), "w") as log:
        for shape in args.shapes:
            flags = shape_flags(shape) + ["--buffers", args.buffers]
            prefix = os.path.join(args.out, f"{shape}_{args.buffers}")
            commands = []

            def sweeps(label, env):
                """The small and the large sweep of every algorithm and auto: their summaries."""
                sizes = {}
                for part, size_flags in (("small", args.small), ("large", args.large)):
                    path = f"{prefix}_{label}_{part}.json"
                    commands.append(run([collbench, *flags, "--algo", "all,auto",
                                         *size_flags.split(), "-c", "0", "--json", path],
                                        env, log))
                    sizes.update(summary(path))
                return sizes

            before = uptime()
            runs = {"model": sweeps("model", {"COLL_TUNING_FILE": "none"})}
            commands.append(run([collbench, *flags, "--tune", *args.tune.split(), "--json",
                                 f"{prefix}_tune.json"], {"COLL_TUNING_FILE": table}, log))
            runs["table"] = sweeps("table", {"COLL_TUNING_FILE": table})
            after = uptime()
            with open(f"{prefix}_tune.json") as f:
                missed = table_departures(runs["table"].values(), json.load(f))
            departures += [f"{shape} at {size} B" for size in missed]
            section = len(report)
            report.append(f"\n## {shape}, {args.buffers} buffers\n\nLoad (`uptime` before | after): {before} | {after}\n")
            report.append("| size (B) | fastest, no table | auto ran | vs fastest | "
                          "fastest, with the table | auto ran | vs fastest |")
            report.append("|---|---|---|---|---|---|---|")
            for size in sorted(runs["model"]):
                report.append(f"| {size} | " + " | ".join(cell(runs["model"][size])) + " | " +
                              " | ".join(cell(runs["table"][size])) + " |")
            report.append(f"\nWithout a table: auto {verdict(runs['model'].values())}; with "
                          f"the table: {verdict(runs['table'].values())}.\n")
            report.append(f"In place: without a table auto {verdict(runs['model'].values(), True)}; "
                          f"with the table: {verdict(runs['table'].values(), True)}.\n")
            report.append(f"With the table auto ran the table's algorithm at "
                          f"{len(runs['table']) - len(missed)} of {len(runs['table'])} sizes, "
                          "out of place and in place" +
                          "".join(f"; not at {size} B: {', '.join(what)}"
                                  for size, what in missed.items()) + ".\n")
            report.append("Commands:\n\n```\n" + "\n".join(commands) + "\n```\n")
            print("\n".join(report[section:]), flush=True)
    with open(os.path.join(args.out, "auto_check.md"), "w") as f:
        f.write("\n".join(report) + "\n")
    if departures:
        sys.exit("auto_check: with the table, auto did not run the table's algorithm "
                 f"({', '.join(departures)}); see the report above")


if __name__ == "__main__":
    main()
