#!/usr/bin/python3
"""One collbench command under several variants, interleaved: medians per size and variant.

  bench/ab_builds.py [--rounds 5] [--build build] [--json FILE] \\
      --variant 'before:LD_LIBRARY_PATH=/tmp/before' --variant 'after:' -- -g 2 -b 8K -e 4M ...

A variant is NAME:ENV (comma-separated VAR=VALUE; empty for none): another libcoll build (its
libcoll.so.0 in a folder named by LD_LIBRARY_PATH: collbench's RUNPATH yields to it), an
algorithm (COLL_ALGO=peer_read) or any other COLL_* setting; BUILD=FOLDER runs that build's own
collbench instead (a build whose library API differs). Every round runs each variant once,
in turn, so a change in the machine's load or phase hits them alike; the table holds medians over
rounds of collbench's out-of-place and in-place times, in microseconds (the JSON also every round's).
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

COLUMNS = ("out_of_place", "in_place")


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def parse_variant(text):
    name, _, settings = text.partition(":")
    env = {}
    for setting in filter(None, settings.split(",")):
        key, _, value = setting.partition("=")
        env[key] = value
    return name, env


def run_once(collbench, args, env):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        done = subprocess.run([collbench] + args + ["--json", out.name], capture_output=True,
                              text=True, env=dict(os.environ, **env))
        if done.returncode != 0:
            sys.exit("collbench failed under %s:\n%s" % (env, done.stderr[-2000:]))
        results = json.load(open(out.name))["results"]
    for result in results:
        for column in COLUMNS:
            if result[column]["wrong"]:
                sys.exit("wrong results under %s at %d B" % (env, result["bytes"]))
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--build", default="build")
    parser.add_argument("--json", default="")
    parser.add_argument("--variant", action="append", required=True)
    parser.add_argument("collbench_args", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    args = [a for a in options.collbench_args if a != "--"]
    variants = [parse_variant(v) for v in options.variant]
    load = [uptime()]
    times = {}  # (variant, algorithm, bytes, column) -> [us]
    for _ in range(options.rounds):
        for name, env in variants:
            settings = dict(env)
            build = settings.pop("BUILD", options.build)
            for result in run_once(os.path.join(build, "bench", "collbench"), args, settings):
                for column in COLUMNS:
                    key = (name, result["algorithm"], result["bytes"], column)
                    times.setdefault(key, []).append(result[column]["time_us"])
    load.append(uptime())
    cases = sorted({(size, algorithm) for (_, algorithm, size, _) in times})
    names = [name for name, _ in variants]
    print("# collbench %s, %d interleaved rounds, medians in us (out of place / in place)"
          % (" ".join(args), options.rounds))
    print("# load before | after: %s | %s" % tuple(load))
    print("%12s %18s" % ("bytes", "--algo") + "".join("%22s" % name for name in names))
    table = []
    for size, algorithm in cases:
        row = {"bytes": size, "algorithm": algorithm}
        cells = []
        for name in names:
            pair = [statistics.median(times[(name, algorithm, size, c)]) for c in COLUMNS]
            # Every round too: a launch-to-launch mode (where the ranks landed) hides in medians.
            row[name] = {"out_of_place_us": pair[0], "in_place_us": pair[1],
                         "rounds_out_of_place_us": times[(name, algorithm, size, COLUMNS[0])],
                         "rounds_in_place_us": times[(name, algorithm, size, COLUMNS[1])]}
            cells.append("%10.2f /%9.2f" % tuple(pair))
        table.append(row)
        print("%12d %18s" % (size, algorithm) + "".join("%22s" % cell for cell in cells))
    if options.json:
        with open(options.json, "w") as out:
            json.dump({"command": sys.argv, "date": datetime.datetime.now().isoformat(),
                       "variants": dict(variants), "rounds": options.rounds, "load": load,
                       "table": table}, out, indent=1)


if __name__ == "__main__":
    main()
