#!/usr/bin/python3
"""Small-message all-reduce latency, interleaved side by side: collbench builds (each a directory
with collbench and libcoll.so.0, or a build tree) against OpenMPI's MPI_Allreduce (ob1/vader and
the UCX pml, the faster per size). Medians over rounds; ratios against MPI's best.

  bench/results/latency/compare.py --build new=build [--build base=/tmp/base] --ranks 2,4 \
      --rounds 3 --out bench/results/latency-after.json
"""
import argparse, json, os, statistics, subprocess, tempfile

TUNABLES = ("glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=17179869184:"
            "glibc.malloc.top_pad=268435456")
MPI_PMLS = {"mpi-ob1": ["--mca", "pml", "ob1", "--mca", "btl", "vader,self"],
            "mpi-ucx": ["--mca", "pml", "ucx", "--mca", "pml_ucx_tls", "any",
                        "--mca", "pml_ucx_devices", "any"]}


def collbench(path, ranks, args, extra_env):
    exe = os.path.join(path, "bench", "collbench")
    lib = os.path.join(path, "libcoll")
    if not os.path.exists(exe):  # a flat copy: collbench beside libcoll.so.0
        exe, lib = os.path.join(path, "collbench"), path
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        env = dict(os.environ, LD_LIBRARY_PATH=lib, **extra_env)
        subprocess.run(args.prefix + [exe, "--ranks-per-node", str(ranks), "-b", str(args.min), "-e", str(args.max),
                        "-f", "2", "-n", str(args.iters), "-w", str(args.warmup), "-c", "0",
                        "--json", out.name] + args.collbench_args, env=env, check=True,
                       stdout=subprocess.DEVNULL, timeout=600)
        results = json.load(open(out.name))["results"]
    return {r["bytes"]: r["out_of_place"]["time_us"] for r in results}


def mpi(driver, pml, ranks, args):
    cmd = args.prefix + ["mpirun", "--allow-run-as-root", "--oversubscribe", "-x", "GLIBC_TUNABLES",
           "-np", str(ranks)] + MPI_PMLS[pml] + [driver, str(args.min), str(args.max),
                                                str(args.iters), str(args.warmup)]
    run = subprocess.run(cmd, env=dict(os.environ, GLIBC_TUNABLES=TUNABLES), capture_output=True,
                         text=True, timeout=600)
    if run.returncode != 0:
        return None
    line = [l for l in run.stdout.splitlines() if l.startswith("{")][-1]
    return {r["bytes"]: r["time_us"] for r in json.loads(line)["results"]}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser()
    p.add_argument("--build", action="append", required=True, help="LABEL=PATH")
    p.add_argument("--ranks", default="2,4")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--min", type=int, default=8)
    p.add_argument("--max", type=int, default=65536)
    p.add_argument("--iters", type=int, default=2000)
    p.add_argument("--warmup", type=int, default=200)
    p.add_argument("--out")
    p.add_argument("--nice", action="store_true",
                   help="run every contender under nice -n -20 (a machine shared with builds)")
    p.add_argument("collbench_args", nargs="*")
    args = p.parse_args()
    args.prefix = ["nice", "-n", "-20"] if args.nice else []
    driver = os.path.join(tempfile.gettempdir(), "mpi_allreduce_latency")
    subprocess.run(["mpicc", "-O2", "-o", driver, os.path.join(here, "mpi_allreduce_latency.c")],
                   check=True)
    builds = dict(b.split("=", 1) for b in args.build)
    report = {"command": "compare.py " + " ".join(f"--build {b}" for b in args.build) +
              f" --ranks {args.ranks} --rounds {args.rounds} --iters {args.iters} --warmup {args.warmup}" +
              (" --nice" if args.nice else ""),
              "load_before": os.getloadavg(), "ranks": {}}
    for ranks in map(int, args.ranks.split(",")):
        runs = {label: [] for label in list(builds) + list(MPI_PMLS)}
        for _ in range(args.rounds):  # interleaved: every contender once per round
            for label, path in builds.items():
                runs[label].append(collbench(path, ranks, args, {}))
            for pml in MPI_PMLS:
                result = mpi(driver, pml, ranks, args)
                if result:
                    runs[pml].append(result)
        table, fastest = {}, {}
        for label, samples in runs.items():
            if samples:
                table[label] = {b: statistics.median(s[b] for s in samples) for b in samples[0]}
                fastest[label] = {b: min(s[b] for s in samples) for b in samples[0]}
        mpi_best = {b: min(table[l][b] for l in MPI_PMLS if l in table)
                    for b in next(table[l] for l in MPI_PMLS if l in table)}
        table["mpi-best"] = mpi_best
        report["ranks"][ranks] = {"median_time_us": table, "min_time_us": fastest,
                                  "all_runs_time_us": runs, "ratio_to_mpi_best": {
            label: {b: table[label][b] / mpi_best[b] for b in mpi_best}
            for label in builds}}
        print(f"# {ranks} ranks: median us over {args.rounds} interleaved rounds")
        print("bytes".rjust(8) + "".join(l.rjust(12) for l in table) +
              "".join(("x" + l).rjust(12) for l in builds))
        for b in mpi_best:
            print(str(b).rjust(8) + "".join(f"{table[l][b]:12.2f}" for l in table) +
                  "".join(f"{table[l][b] / mpi_best[b]:12.2f}" for l in builds))
        print(f"# {ranks} ranks: fastest run (us)")
        for b in mpi_best:
            print(str(b).rjust(8) + "".join(f"{fastest[l][b]:12.2f}" for l in fastest))
    report["load_after"] = os.getloadavg()
    if args.out:
        json.dump(report, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
