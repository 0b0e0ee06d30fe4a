#!/usr/bin/python3
"""libcoll against Open MPI across emulated hosts, interleaved, with ratios.

Emulated hosts (tests/multihost/hosts.sh: a network namespace, veth interface, address and
hostname each, joined by a bridge) run collbench and Open MPI's MPI_Allreduce
(bench/peers/mpi_allreduce) under the same launcher (tests/multihost/mpirun.sh: mpirun
--hostfile, the same hosts, interface and --bind-to none), the same sizes, iterations and
pre-touched buffers, and Open MPI with glibc's malloc tuned as bench/peers/compare.py gives it.
Each round runs every contender once per case, so load drifts over all alike; tables hold the
medians of the rounds (out-of-place times), the JSON every round's time.

Contenders: collbench with no COLL_* variable (its default algorithm; with 2 ranks per host also
ring and hierarchical); Open MPI ob1 (btl tcp between hosts, vader inside one) and
UCX (pml ucx over tcp), each with the kernel's socket buffers as libcoll's sockets have them
across hosts, and where ranks outnumber this machine's cores mpi_yield_when_idle (libcoll's
waiter yields there too); "mpi best" is the faster of the two per size. Ratio = Open MPI best / collbench:
> 1 means libcoll is faster. A second table times collbench's 64 MiB all-reduce with every
COLL_SOCKET_SNDBUF, to choose the send buffer for the link from measurement.

usage: compare_hosts.py BUILD_DIR OUT_DIR [--rounds 3] [--hosts 2,4] [--rate RATE]
                        [--parts small,large,sndbuf]
"""
import json
import os
import statistics
import subprocess
import sys

from emulated_hosts import FIXTURE, argument_parser, hosts, parse_as_root

TUNED_MALLOC = ("glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=17179869184:"
                "glibc.malloc.top_pad=268435456")
SMALL = ["-b", "8", "-e", "64K", "-f", "8"]
LARGE = ["-b", "8M", "-e", "64M", "-f", "8"]
SEND_BUFFERS = ["256K", "1M", "4M", "auto"]


def mpirun(run_id, ranks, program, arguments, mca=(), environment=()):
    command = [os.path.join(FIXTURE, "mpirun.sh"), run_id, "-np", str(ranks), "--map-by", "node"]
    for name, value in environment:
        command += ["-x", f"{name}={value}"]
    command += list(mca) + [program] + arguments
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        sys.exit(f"compare_hosts: {' '.join(command)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def times(path, name_of=lambda row: None):
    """{(algorithm or None, bytes): out-of-place microseconds} of a collbench-format JSON."""
    with open(path) as file:
        report = json.load(file)
    if report.get("wrong_total", 0) != 0:
        sys.exit(f"compare_hosts: {path}: wrong elements")
    return {(name_of(row), row["bytes"]): row["out_of_place"]["time_us"]
            for row in report["results"]}


class Case:
    def __init__(self, hosts_count, per_host):
        self.hosts, self.per_host = hosts_count, per_host
        self.ranks = hosts_count * per_host
        self.rounds = []  # one {contender: {key: us}} per round

    def name(self):
        return f"{self.hosts} x {self.per_host}"


def run_round(case, run_id, build, scratch, iterations, parts):
    collbench = os.path.join(build, "bench", "collbench")
    peer = os.path.join(build, "bench", "peers", "mpi_allreduce")
    results = {}
    # More ranks than cores: Open MPI yields the core while it polls, as libcoll's waiter does.
    fair = ["--mca", "mpi_yield_when_idle", "1"] if case.ranks > os.cpu_count() else []
    ob1 = ["--mca", "pml", "ob1", "--mca", "btl", "tcp,vader,self"] + fair
    ucx = ["--mca", "pml", "ucx", "--mca", "pml_ucx_tls", "any", "--mca", "pml_ucx_devices",
           "any"] + fair
    ucx_env = [("UCX_TLS", "tcp,sm,self"), ("UCX_NET_DEVICES", "eth0")]
    for sizes, label in ((SMALL, "small"), (LARGE, "large")):
        if label not in parts:
            continue
        counts = ["-n", str(iterations[label]), "-w", "100" if label == "small" else "2"]
        if case.per_host == 1:
            path = os.path.join(scratch, f"collbench-{label}.json")
            mpirun(run_id, case.ranks, collbench, sizes + counts + ["--json", path])
            results.setdefault("collbench", {}).update(times(path))
        else:
            path = os.path.join(scratch, f"collbench-{label}.json")
            mpirun(run_id, case.ranks, collbench,
                   sizes + counts + ["--algo", "auto,ring,hierarchical", "--rounds", "1", "--json",
                                     path])
            for key, value in times(path, lambda row: row["algorithm"]).items():
                results.setdefault(f"collbench {key[0]}", {})[(None, key[1])] = value
        for peer_name, mca, environment in (("mpi ob1", ob1, []), ("mpi ucx", ucx, ucx_env)):
            path = os.path.join(scratch, f"{peer_name.replace(' ', '-')}-{label}.json")
            mpirun(run_id, case.ranks, peer, sizes + counts + ["--json", path], mca,
                   [("GLIBC_TUNABLES", TUNED_MALLOC)] + environment)
            results.setdefault(peer_name, {}).update(times(path))
    case.rounds.append(results)


def send_buffer_round(run_id, ranks, build, scratch):
    collbench = os.path.join(build, "bench", "collbench")
    row = {}
    for buffer in SEND_BUFFERS:
        path = os.path.join(scratch, f"sndbuf-{buffer}.json")
        mpirun(run_id, ranks, collbench, ["-b", "64M", "-e", "64M", "-n", "5", "-w", "2",
                                          "--json", path],
               environment=[("COLL_SOCKET_SNDBUF", buffer)])
        row[buffer] = times(path)[(None, 64 << 20)]
    return row


def medians(case):
    contenders = sorted({name for round_ in case.rounds for name in round_})
    keys = sorted({key for round_ in case.rounds for name in round_ for key in round_[name]},
                  key=lambda key: key[1])
    table = {}
    for name in contenders:
        table[name] = {key[1]: statistics.median(round_[name][key] for round_ in case.rounds)
                       for key in keys if all(key in round_[name] for round_ in case.rounds)}
    return table


def size_text(size):
    for unit, scale in (("M", 1 << 20), ("K", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale}{unit}"
    return str(size)


def markdown(cases, send_buffers, command, rate):
    lines = [f"# libcoll vs Open MPI across emulated hosts{f', links at {rate}' if rate else ''}",
             "", f"Command: `{command}`", "",
             "Medians of the rounds, out-of-place, µs. Ratio = Open MPI's faster path / collbench "
             "(> 1: libcoll faster).", ""]
    for case in cases:
        table = medians(case)
        lines.append(f"## {case.name()} (hosts x ranks per host)")
        ours = [name for name in table if name.startswith("collbench")]
        lines.append("| size | " + " | ".join(ours) + " | mpi ob1 | mpi ucx | mpi best | ratio |")
        lines.append("|---" * (len(ours) + 5) + "|")
        for size in sorted(table["mpi ob1"]):
            best = min(table["mpi ob1"][size], table["mpi ucx"].get(size, float("inf")))
            mine = min(table[name][size] for name in ours)
            cells = " | ".join(f"{table[name][size]:.1f}" for name in ours)
            lines.append(f"| {size_text(size)} | {cells} | {table['mpi ob1'][size]:.1f} | "
                         f"{table['mpi ucx'].get(size, float('nan')):.1f} | {best:.1f} | "
                         f"{best / mine:.2f} |")
        lines.append("")
    if send_buffers:
        lines.append("## collbench 64 MiB by COLL_SOCKET_SNDBUF (µs, median of the rounds)")
        lines.append("| hosts | " + " | ".join(SEND_BUFFERS) + " |")
        lines.append("|---" * (len(SEND_BUFFERS) + 1) + "|")
        for hosts_count, rounds in send_buffers.items():
            cells = " | ".join(f"{statistics.median(r[b] for r in rounds):.0f}"
                               for b in SEND_BUFFERS)
            lines.append(f"| {hosts_count} x 1 | {cells} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argument_parser(__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hosts", default="2,4")
    parser.add_argument("--rate", help="tbf rate per host link, e.g. 2gbit (default: none)")
    parser.add_argument("--parts", default="small,large,sndbuf",
                        help="what to time: small and large sizes, the send buffer's table")
    args = parse_as_root(parser, "compare_hosts")
    os.makedirs(args.out, exist_ok=True)
    build = os.path.abspath(args.build)
    scratch = os.path.join(os.path.abspath(args.out), "scratch")
    os.makedirs(scratch, exist_ok=True)
    cases, send_buffers = [], {}
    parts = args.parts.split(",")
    # Small sizes take microseconds: many calls, and a warm-up long enough for TCP's first
    # round trips (slow start, delayed acknowledgements) to be over for every contender.
    iterations = {"small": 1000, "large": 5}
    for count in [int(h) for h in args.hosts.split(",")]:
        run_id = f"cmp{count}{os.getpid() % 1000}"
        extra = ["--slots", "2"] + (["--rate", args.rate] if args.rate else [])
        hosts("up", run_id, str(count), *extra)
        try:
            flat, stacked = Case(count, 1), Case(count, 2)
            if "sndbuf" in parts:
                send_buffers[count] = []
            for _ in range(args.rounds):
                run_round(flat, run_id, build, scratch, iterations, parts)
                run_round(stacked, run_id, build, scratch, iterations, parts)
                if "sndbuf" in parts:
                    send_buffers[count].append(send_buffer_round(run_id, count, build, scratch))
            cases += [flat, stacked]
        finally:
            hosts("down", run_id)
    command = "bench/multihost/compare_hosts.py " + " ".join(sys.argv[1:])
    report = {"command": command, "rate": args.rate, "rounds": args.rounds,
              "cases": [{"hosts": c.hosts, "per_host": c.per_host,
                         "rounds": [{name: {str(k[1]): v for k, v in r[name].items()}
                                     for name in r} for r in c.rounds],
                         "medians": {name: {str(s): v for s, v in row.items()}
                                     for name, row in medians(c).items()}} for c in cases],
              "send_buffer_64M_us": send_buffers}
    with open(os.path.join(args.out, "compare_hosts.json"), "w") as file:
        json.dump(report, file, indent=1)
    text = markdown(cases, send_buffers, command, args.rate)
    with open(os.path.join(args.out, "README.md"), "w") as file:
        file.write(text)
    print(text)


if __name__ == "__main__":
    main()
