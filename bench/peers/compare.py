#!/usr/bin/python3
"""libcoll against the libraries users would pick instead, interleaved, with ratios.

Every round runs collbench and then each peer once (the same sizes, iterations and warm-up), so
that load on the machine drifts over all of them alike; the table holds the median of the rounds.
Peers: "mpi" is Open MPI's MPI_Allreduce (bench/peers/mpi_allreduce) on both of its paths, ob1
(btl vader,self inside a node; btl tcp,self when --nodes > 1, with libcoll's TCP send buffer and
again without) and UCX, each also with its tuned
all-reduce algorithm forced to every id --mpi-algorithms lists, and the fastest path per size
counts; "gloo" is torch.distributed's Gloo (bench/peers/torch_allreduce.py, needs
python3-torch). Sweeps compare out-of-place times (Gloo reduces in place only: its in-place time
is set against collbench's in-place time; Open MPI's in-place time, with MPI_IN_PLACE, is too,
in columns of its own). Replays compare collbench's per-tensor replay with a
per-tensor loop of the peer, and collbench --fusion auto (after backward, no overlap) with one
peer all-reduce of the flat buffer. Ratio = peer time / collbench time: > 1 means libcoll is
faster. The table names the algorithm collbench's `auto` ran per size (out of place and in
place; "a/b" where rounds differed), and the JSON keeps every round's time behind each median.
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Open MPI's all-reduce mallocs its scratch per call: without these glibc settings every call of
# 64 MiB maps and first-touches fresh pages (2 ranks: 150 ms instead of 10 ms). collbench's buffers
# come pre-touched from its pool; the peer gets the same advantage.
TUNED_MALLOC = ("glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=17179869184:"
                "glibc.malloc.top_pad=268435456")
# Ranks pinned to cores round robin, as collbench's launcher pins its own (COLL_BIND=core, the
# default): Open MPI pins by itself only ranks that do not outnumber the cores.
BIND = "none" if os.environ.get("COLL_BIND") == "none" else "core:overload-allowed"
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", BIND,
          "-x", "GLIBC_TUNABLES=" + TUNED_MALLOC]


def socket_send_buffer():
    """The TCP send buffer libcoll's sockets get (bytes; None: the kernel's autotuning), as
    libcoll reads COLL_SOCKET_SNDBUF: by default 256K over loopback, autotuned elsewhere."""
    value = os.environ.get("COLL_SOCKET_SNDBUF")
    if value is None:
        return 256 * 1024 if os.environ.get("COLL_UCX_NET_DEVICES", "lo") == "lo" else None
    if value == "auto":
        return None
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(value[:-1]) * units[value[-1]] if value[-1] in units else int(value)


def mpi_paths(nodes, algorithms):
    """Open MPI's two paths with the settings that make each fastest here; for each id in
    `algorithms` both paths again with its tuned all-reduce forced to that algorithm (what a
    dynamic rules file would choose), named mpi-ob1-aID and mpi-ucx-aID. Between nodes they get
    libcoll's TCP send buffer (btl_tcp_sndbuf, UCX_TCP_SNDBUF), and run once more with the
    kernel's autotuning (mpi-ob1-autobuf, mpi-ucx-autobuf)."""
    ob1 = ["--mca", "pml", "ob1", "--mca", "btl", "tcp,self" if nodes > 1 else "vader,self"]
    # OMPI 4.1 refuses pml ucx without InfiniBand unless any transport and device is allowed.
    ucx = ["--mca", "pml", "ucx", "--mca", "pml_ucx_tls", "any", "--mca", "pml_ucx_devices", "any"]
    paths = {}
    if nodes > 1:
        ucx += ["-x", "UCX_TLS=tcp,self"]
        send_buffer = socket_send_buffer()
        if send_buffer is not None:
            paths = {"mpi-ob1-autobuf": ob1, "mpi-ucx-autobuf": ucx}
            ob1 = ob1 + ["--mca", "btl_tcp_sndbuf", str(send_buffer)]
            ucx = ucx + ["-x", f"UCX_TCP_SNDBUF={send_buffer}"]
    paths.update({"mpi-ob1": ob1, "mpi-ucx": ucx})
    for algorithm in algorithms:
        forced = ["--mca", "coll_tuned_use_dynamic_rules", "1",
                  "--mca", "coll_tuned_allreduce_algorithm", str(algorithm)]
        paths[f"mpi-ob1-a{algorithm}"] = ob1 + forced
        paths[f"mpi-ucx-a{algorithm}"] = ucx + forced
    return paths


def run(command, log):
    log.append(" ".join(command))
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        sys.exit(f"compare: failed ({done.returncode}): {' '.join(command)}\n{done.stderr[-2000:]}")


def load(path):
    with open(path) as handle:
        return json.load(handle)


def sweep_times(report, placement):
    return {row["bytes"]: row[placement]["time_us"] for row in report["results"] if placement in row}


def sweep_algorithms(report, field):
    """What collbench's `auto` ran per size ("ran" or "ran_in_place")."""
    return {row["bytes"]: row[field] for row in report["results"] if field in row}


def names(rounds):
    """The algorithms of the rounds, each once, in order: "shm" or "shm/peer_read"."""
    return "/".join(dict.fromkeys(rounds))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--nodes", type=int, default=1)
    parser.add_argument("--ranks-per-node", type=int, default=2)
    parser.add_argument("--peers", default="mpi,gloo", help="mpi, gloo, or both")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("-b", default="8")
    parser.add_argument("-e", default="64M")
    parser.add_argument("-f", default="8")
    parser.add_argument("-n", default="20")
    parser.add_argument("-w", default="5")
    parser.add_argument("--models", default="googlenet,resnet50,alexnet",
                        help="model replays, comma separated; 'none' for sizes only")
    parser.add_argument("--replay-iters", default="5")
    parser.add_argument("--buffers", default="shared", choices=("shared", "private"),
                        help="collbench's buffers: shared (coll::allocate_shared, mapped by the "
                             "peers of a node) or private (plain memory, as the peers' drivers)")
    parser.add_argument("--mpi-algorithms", default="",
                        help="Open MPI tuned all-reduce algorithms to run besides its own choice, "
                             "as coll_tuned_allreduce_algorithm ids (e.g. 4,5,6: ring, segmented "
                             "ring, Rabenseifner); the fastest path counts as 'mpi best'")
    parser.add_argument("--json", help="write the table, commands and machine load here")
    parser.add_argument("--markdown", help="write the table as markdown here")
    args = parser.parse_args()
    peers = [p for p in args.peers.split(",") if p]
    if any(p not in ("mpi", "gloo") for p in peers) or args.rounds < 1:
        parser.error("--peers takes mpi and/or gloo; --rounds >= 1")
    mpi_algorithms = [a for a in args.mpi_algorithms.split(",") if a]
    if any(not a.isdigit() for a in mpi_algorithms):
        parser.error("--mpi-algorithms takes Open MPI's numeric algorithm ids, e.g. 4,5,6")
    if "gloo" in peers and subprocess.run(["/usr/bin/python3", "-c", "import torch"],
                                          capture_output=True).returncode != 0:
        print("# gloo: python3-torch is not installed, left out")
        peers.remove("gloo")
    ranks = args.nodes * args.ranks_per_node
    collbench = os.path.join(args.build, "bench", "collbench")
    mpi_driver = os.path.join(args.build, "bench", "peers", "mpi_allreduce")
    gloo_driver = os.path.join(ROOT, "bench", "peers", "torch_allreduce.py")
    shape = ["--nodes", str(args.nodes), "--ranks-per-node", str(args.ranks_per_node),
             "--buffers", args.buffers]
    sizes = ["-b", args.b, "-e", args.e, "-f", args.f, "-n", args.n, "-w", args.w]
    replay_counts = ["-n", args.replay_iters, "-w", "1"]
    models = [] if args.models == "none" else args.models.split(",")
    paths = mpi_paths(args.nodes, mpi_algorithms) if "mpi" in peers else {}
    uptime = [subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()]
    commands, work = [], tempfile.mkdtemp(prefix="collbench-compare-")
    samples = {}  # (case, who) -> list of per-round values (dict of size -> us, or ms)

    def add(key, value):
        samples.setdefault(key, []).append(value)

    for round_index in range(args.rounds):
        out = lambda name: os.path.join(work, f"{name}-{round_index}.json")  # noqa: E731
        run([collbench, *shape, *sizes, "--algo", "auto", "--json", out("coll")], commands)
        report = load(out("coll"))
        add(("sweep", "libcoll"), sweep_times(report, "out_of_place"))
        add(("sweep-inplace", "libcoll"), sweep_times(report, "in_place"))
        add(("ran", "libcoll"), sweep_algorithms(report, "ran"))
        add(("ran-inplace", "libcoll"), sweep_algorithms(report, "ran_in_place"))
        for name, mca in paths.items():
            run([*MPIRUN, "-np", str(ranks), *mca, mpi_driver, *sizes, "--json", out(name)],
                commands)
            add(("sweep", name), sweep_times(load(out(name)), "out_of_place"))
            add(("sweep-inplace", name), sweep_times(load(out(name)), "in_place"))
        if "gloo" in peers:
            run(["/usr/bin/python3", gloo_driver, "--ranks", str(ranks), *sizes, "--json",
                 out("gloo")], commands)
            add(("sweep-inplace", "gloo"), sweep_times(load(out("gloo")), "in_place"))
        for model in models:
            replay = ["--model-gradients", model, *replay_counts]
            run([collbench, *shape, *replay, "--algo", "auto", "--json", out("coll-" + model)],
                commands)
            add((model + " per tensor", "libcoll"), load(out("coll-" + model))["median_ms"])
            run([collbench, *shape, *replay, "--fusion", "auto", "--compute-scale", "0.001",
                 "--json", out("collf-" + model)], commands)
            add((model + " fused", "libcoll"), load(out("collf-" + model))["exposed_ms"])
            for fused in (False, True):
                case = model + (" fused" if fused else " per tensor")
                flag = ["--fused"] if fused else []
                for name, mca in paths.items():
                    path = out(f"{name}-{model}-{int(fused)}")
                    run([*MPIRUN, "-np", str(ranks), *mca, mpi_driver, *replay, *flag, "--json",
                         path], commands)
                    add((case, name), load(path)["median_ms"])
                if "gloo" in peers:
                    path = out(f"gloo-{model}-{int(fused)}")
                    run(["/usr/bin/python3", gloo_driver, "--ranks", str(ranks), *replay, *flag,
                         "--json", path], commands)
                    add((case, "gloo"), load(path)["median_ms"])
    uptime.append(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    shutil.rmtree(work, ignore_errors=True)

    def median_of(key):
        values = samples.get(key)
        if not values:
            return None
        if isinstance(values[0], dict):
            return {size: statistics.median(v[size] for v in values) for size in values[0]}
        return statistics.median(values)

    def rounds_of(key, size=None):
        """Every round's value of `key` (at `size`, for sweeps); a collbench that predates the
        "ran" fields leaves those rounds out."""
        values = samples.get(key, [])
        return [v[size] for v in values if size in v] if size is not None else list(values)

    def with_mpi(row, times, libcoll_time, placement=""):
        """The fastest Open MPI path of `times` (path -> time) and its ratio to libcoll's time."""
        best = min(times, key=times.get)
        row[f"mpi best{placement}"], row[f"mpi best{placement} path"] = times[best], best
        row[f"ratio mpi{placement}"] = times[best] / libcoll_time

    rows = []
    coll_out, coll_in = median_of(("sweep", "libcoll")), median_of(("sweep-inplace", "libcoll"))
    mpi_out = {name: median_of(("sweep", name)) for name in paths}
    mpi_in = {name: median_of(("sweep-inplace", name)) for name in paths}
    gloo = median_of(("sweep-inplace", "gloo"))
    # Whose every round the JSON keeps; Gloo has no out-of-place sweep.
    timed_out_of_place = ["libcoll", *paths]
    timed = timed_out_of_place + (["gloo"] if gloo else [])
    for size in sorted(coll_out):
        row = {"case": f"{size} B", "bytes": size, "unit": "us", "libcoll": coll_out[size],
               "libcoll ran": names(rounds_of(("ran", "libcoll"), size))}
        # Every round's time behind each median: the spread (and a bimodal size) shows.
        row["rounds"] = {name: rounds_of(("sweep", name), size) for name in timed_out_of_place}
        if paths or gloo:
            row["libcoll in-place"] = coll_in[size]
            row["libcoll ran in-place"] = names(rounds_of(("ran-inplace", "libcoll"), size))
            row["rounds in-place"] = {name: rounds_of(("sweep-inplace", name), size)
                                      for name in timed}
        if paths:  # MPI_IN_PLACE against collbench in place too: Open MPI skips its input copy
            times = {name: mpi_out[name][size] for name in paths}
            row.update(times)
            with_mpi(row, times, coll_out[size])
            with_mpi(row, {name: mpi_in[name][size] for name in paths}, coll_in[size],
                     " in-place")
        if gloo:
            row["gloo"] = gloo[size]
            row["ratio gloo"] = gloo[size] / coll_in[size]
        rows.append(row)
    for model in models:
        for case in (model + " per tensor", model + " fused"):
            row = {"case": case, "unit": "ms", "libcoll": median_of((case, "libcoll"))}
            row["rounds"] = {name: rounds_of((case, name)) for name in timed}
            if paths:
                times = {name: median_of((case, name)) for name in paths}
                row.update(times)
                with_mpi(row, times, row["libcoll"])
            if gloo is not None:
                row["gloo"] = median_of((case, "gloo"))
                row["ratio gloo"] = row["gloo"] / row["libcoll"]
            rows.append(row)

    columns = ["case", "unit", "libcoll", "libcoll ran", *paths, "mpi best", "mpi best path",
               "ratio mpi", "libcoll in-place", "libcoll ran in-place", "mpi best in-place",
               "mpi best in-place path", "ratio mpi in-place", "gloo", "ratio gloo"]
    columns = [c for c in columns if any(c in row for row in rows)]
    fmt = lambda v: v if isinstance(v, str) else ("-" if v is None else f"{v:.3g}")  # noqa: E731
    title = (f"# libcoll vs {', '.join(peers) or 'nothing'}: {args.nodes} node(s) x "
             f"{args.ranks_per_node} rank(s), {args.buffers} libcoll buffers, medians of "
             f"{args.rounds} interleaved rounds; "
             "ratio = peer / libcoll (> 1: libcoll faster)")
    print(title)
    print("# load before/after: " + " | ".join(uptime))
    print("  ".join(f"{c:>16}" for c in columns))
    for row in rows:
        print("  ".join(f"{fmt(row.get(c, '')):>16}" for c in columns))
    ratios = [f"ratio {peer}" for peer in peers]
    missing = [row["case"] for row in rows for ratio in ratios
               if not (isinstance(row.get(ratio), float) and math.isfinite(row[ratio])
                       and row[ratio] > 0)]
    if missing or not rows:
        print(f"compare: no ratio for {', '.join(missing) or 'any row'}", file=sys.stderr)
        return 1
    if args.markdown:
        with open(args.markdown, "w") as handle:
            handle.write(title.lstrip("# ") + "\n\nLoad: " + " | ".join(uptime) + "\n\n")
            handle.write("| " + " | ".join(columns) + " |\n|" + "---|" * len(columns) + "\n")
            for row in rows:
                handle.write("| " + " | ".join(fmt(row.get(c, "")) for c in columns) + " |\n")
    if args.json:
        with open(args.json, "w") as handle:
            # COLL_TUNING_FILE and the like change what collbench ran: keep them with the table.
            settings = {k: v for k, v in os.environ.items() if k.startswith("COLL_")}
            json.dump({"tool": "bench/compare.sh", "nodes": args.nodes,
                       "ranks_per_node": args.ranks_per_node, "rounds": args.rounds,
                       "peers": peers, "environment": settings, "uptime": uptime,
                       "commands": commands, "rows": rows},
                      handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
