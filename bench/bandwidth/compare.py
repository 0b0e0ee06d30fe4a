#!/usr/bin/python3
"""Interleaved side-by-side runs of collbench and OpenMPI for issue 9's bandwidth items.

  bench/bandwidth/compare.py [--repeats 3] [--out bench/results/bandwidth-DATE.json] CASE...
  CASE: shm2 (2 ranks, one node; 1, 16, 64 MiB), shm4 (4 ranks, 64 MiB), tcp4 (4 emulated nodes,
        64 MiB), replay (AlexNet, GoogLeNet, ResNet-50 at 4 ranks)

Every repeat runs each contender once, in turn (so machine load hits them alike); the table
holds medians over repeats. OpenMPI gets pre-touched buffers and glibc's malloc tuned against
this VM's page-fault cost, and both its ob1/vader and UCX paths (the better one counts).
The machine's memory-bandwidth bound (bench memory_bound) runs in the same loop. Run from the
repository root with a build in build/.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

TUNED_MALLOC = ("glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=17179869184:"
                "glibc.malloc.top_pad=268435456")
MPIRUN = ["mpirun", "--oversubscribe", "--bind-to", "none", "-x", "GLIBC_TUNABLES=" + TUNED_MALLOC]
MPI_PATHS = {
    "mpi_ob1": ["--mca", "pml", "ob1", "--mca", "btl", "self,vader"],
    "mpi_ucx": ["--mca", "pml", "ucx", "--mca", "pml_ucx_tls", "any", "--mca",
                "pml_ucx_devices", "any"],
    "mpi_tcp": ["--mca", "pml", "ob1", "--mca", "btl", "self,tcp", "--mca",
                "btl_tcp_if_include", "lo"],
}
PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mpi_peer.py")
MODELS = {"alexnet": "alexnet_bvlc_caffe", "googlenet": "googlenet_bvlc_caffe",
          "resnet50": "resnet50_caffe_he"}
MIB = 1 << 20


BEFORE_LIB = ""  # --before-lib: a libcoll build to compare against (e.g. main's)


def run(command, env=None):
    full_env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    full_env.update(env or {})
    done = subprocess.run(command, capture_output=True, text=True, env=full_env, timeout=900)
    if done.returncode != 0:
        sys.exit("failed: %s\n%s%s" % (" ".join(command), done.stdout, done.stderr))
    return done.stdout


def collbench_sweep(args, nbytes, algorithm, iters, library=""):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        command = ["build/bench/collbench"] + args + [
            "-b", str(nbytes), "-e", str(nbytes), "-n", str(iters), "-w", "3", "--algo",
            algorithm, "--json", out.name]
        run(command, {"LD_LIBRARY_PATH": library} if library else None)
        if library:
            command = ["LD_LIBRARY_PATH=" + library] + command
        result = json.load(open(out.name))["results"][0]
    assert result["out_of_place"]["wrong"] == 0
    return " ".join(command), result["out_of_place"]["time_us"]


def mpi_sweep(path, ranks, nbytes, iters):
    command = MPIRUN + ["-np", str(ranks)] + MPI_PATHS[path] + [PEER, "sweep", str(nbytes),
                                                               str(iters), "3"]
    result = json.loads(run(command).strip().splitlines()[-1])
    assert result["wrong"] == 0
    return " ".join(command), result["time_us"]


def memory_bound(ranks, nbytes):
    command = ["build/bench/memory_bound", "--ranks", str(ranks), "--bytes", str(nbytes)]
    return " ".join(command), json.loads(run(command))["allreduce_bound_ms"] * 1e3


def collbench_replay(model, fusion, iters, library=""):
    """Communication of one iteration: per tensor (blocking, collbench's model replay) or the
    iteration replay's fused buckets with backward shrunk to nothing (no overlap)."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        command = ["build/bench/collbench", "-g", "4", "--model-gradients", model, "-n",
                   str(iters), "-w", "2", "--json", out.name]
        if fusion:
            command += ["--fusion", fusion, "--compute-scale", "0.0001"]
        run(command, {"LD_LIBRARY_PATH": library} if library else None)
        data = json.load(open(out.name))
        if library:
            command = ["LD_LIBRARY_PATH=" + library] + command
    if fusion:
        return " ".join(command), data["iteration_ms"] * 1e3
    return " ".join(command), data["median_ms"] * 1e3


def mpi_replay(path, model, iters):
    table = os.path.join("bench", "models", MODELS[model] + ".csv")
    command = MPIRUN + ["-np", "4"] + MPI_PATHS[path] + [PEER, "replay", table, str(iters), "2"]
    result = json.loads(run(command).strip().splitlines()[-1])
    return " ".join(command), result["per_tensor_ms"] * 1e3, result["fused_ms"] * 1e3


def contenders(case):
    """(point, name, thunk returning (command, microseconds)) in run order."""
    out = []
    if case in ("shm2", "shm4"):
        ranks = 2 if case == "shm2" else 4
        sizes = [1 * MIB, 16 * MIB, 64 * MIB] if ranks == 2 else [64 * MIB]
        for size in sizes:
            point = "%s %d MiB" % (case, size // MIB)
            out.append((point, "libcoll auto",
                        lambda s=size, r=ranks: collbench_sweep(["-g", str(r)], s, "auto", 10)))
            out.append((point, "libcoll ring",
                        lambda s=size, r=ranks: collbench_sweep(["-g", str(r)], s, "ring", 10)))
            if BEFORE_LIB:
                out.append((point, "libcoll before, auto",
                            lambda s=size, r=ranks: collbench_sweep(["-g", str(r)], s, "auto", 10,
                                                                    BEFORE_LIB)))
            for path in ("mpi_ob1", "mpi_ucx"):
                out.append((point, path, lambda p=path, s=size, r=ranks: mpi_sweep(p, r, s, 10)))
            out.append((point, "memory bound", lambda s=size, r=ranks: memory_bound(r, s)))
    elif case == "tcp4":
        point = "tcp4 64 MiB"
        out.append((point, "libcoll auto",
                    lambda: collbench_sweep(["--nodes", "4"], 64 * MIB, "auto", 5)))
        if BEFORE_LIB:
            out.append((point, "libcoll before, auto",
                        lambda: collbench_sweep(["--nodes", "4"], 64 * MIB, "auto", 5, BEFORE_LIB)))
        out.append((point, "mpi_tcp", lambda: mpi_sweep("mpi_tcp", 4, 64 * MIB, 5)))
    elif case == "replay":
        for model in MODELS:
            point = "replay %s 4 ranks" % model
            out.append((point, "libcoll per tensor",
                        lambda m=model: collbench_replay(m, None, 5)))
            out.append((point, "libcoll fusion auto",
                        lambda m=model: collbench_replay(m, "auto", 5)))
            out.append((point, "libcoll fusion mgwfbp",
                        lambda m=model: collbench_replay(m, "mgwfbp", 5)))
            if BEFORE_LIB:
                for fusion in (None, "auto", "mgwfbp"):
                    out.append((point, "libcoll before, " + (fusion or "per tensor"),
                                lambda m=model, f=fusion: collbench_replay(m, f, 5, BEFORE_LIB)))
            for path in ("mpi_ob1", "mpi_ucx"):
                out.append((point, path + " (per tensor, fused)",
                            lambda p=path, m=model: mpi_replay(p, m, 5)))
    else:
        sys.exit("unknown case " + case)
    return out


def summarize(options, samples, commands, loads, show):
    table = []
    for point, by_name in samples.items():
        medians = {name: statistics.median(values) for name, values in by_name.items()}
        table.append({"point": point, "median_us": medians, "samples_us": by_name})
        if show:
            print("\n%s" % point)
            for name, value in medians.items():
                print("  %-28s %12.1f us" % (name, value))
    result = {"date": datetime.datetime.utcnow().isoformat() + "Z", "repeats": len(loads),
              "argv": sys.argv, "before_lib": BEFORE_LIB,
              "load_average_1min_per_repeat": loads, "cpus": os.cpu_count(),
              "commands": {"%s | %s" % key: command for key, command in commands.items()},
              "table": table}
    if options.out:
        with open(options.out, "w") as out:
            json.dump(result, out, indent=1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default="")
    parser.add_argument("--before-lib", default="",
                        help="folder of another libcoll.so, run as 'libcoll before'")
    parser.add_argument("cases", nargs="+")
    options = parser.parse_args()
    global BEFORE_LIB
    BEFORE_LIB = options.before_lib
    runs = [c for case in options.cases for c in contenders(case)]
    samples = {}
    commands = {}
    loads = []
    for repeat in range(options.repeats):
        loads.append(os.getloadavg()[0])
        for point, name, thunk in runs:
            outcome = thunk()
            commands[(point, name)] = outcome[0]
            values = outcome[1:]
            names = [name] if len(values) == 1 else [name.split(" (")[0] + " per tensor",
                                                     name.split(" (")[0] + " fused"]
            for label, value in zip(names, values):
                samples.setdefault(point, {}).setdefault(label, []).append(value)
            print("repeat %d  %-22s %-28s %s" % (repeat, point, name,
                                                 ", ".join("%.1f us" % v for v in values)),
                  flush=True)
        summarize(options, samples, commands, loads, repeat + 1 == options.repeats)


if __name__ == "__main__":
    main()
