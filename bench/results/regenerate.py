#!/usr/bin/python3
"""Runs again every measurement behind bench/results/README.md's "Current headline results".

Each entry below is one row's command, writing into OUT/<entry>/ (default OUT:
bench/results/run-<date>); the row's figure is then read from those files and the row updated by
hand, its file and commit columns pointing at the new folder. `--list` shows the entries, `--only`
runs some. Nothing here judges a figure: a failing command (a wrong result, a missing ratio) stops
the run with its exit status; one that skips (exit 77: torch-ddp-resnet50 without
python3-torchvision) is reported and the run goes on. Several entries need root (network
namespaces: multihost-*, table7-across-hosts) or python3-torch (torch-*; torch-ddp-resnet50
python3-torchvision as well); each says so in its line of --list.

Run it on a quiet machine: every entry compares contenders side by side, but the machine's load
still moves the absolute times. The whole list takes a few hours on the 2-core build VM
(measured 2026-12-06: main-job 5 s, simulation-4096 under a minute, torch-ddp 68 s,
interposer 4 min with 3 rounds, emulated-virtual 20 min; auto-check was stopped after 4 min in
its first of about twenty sweeps; 2026-12-07: torch-ddp-resnet50 7-9 min at load 4-7,
interposer 12 min with 7 rounds, interposer-alternate 3 min).
usage: regenerate.py [--build DIR] [--list] [--only NAME,...] [OUT]
"""
import argparse
import datetime
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMPARE = ["bench/compare.sh", "--build", "{build}"]
NO_TABLE = {"COLL_TUNING_FILE": "none"}

# name -> (what the row claims, [(environment, argv, stdout file or None)], needs)
ENTRIES = {
    "small-2": ("one node, 2 ranks, 8 B-64 KiB against Open MPI", [
        (NO_TABLE, [*COMPARE, "--ranks-per-node", "2", "--peers", "mpi", "--rounds", "5", "-b", "8",
                    "-e", "64K", "-f", "2", "-n", "2000", "-w", "200", "--models", "none",
                    "--json", "{out}/small_2.json", "--markdown", "{out}/small_2.md"], None)], ""),
    "small-4": ("the same, 4 ranks", [
        (NO_TABLE, [*COMPARE, "--ranks-per-node", "4", "--peers", "mpi", "--rounds", "5", "-b", "8",
                    "-e", "64K", "-f", "2", "-n", "1000", "-w", "100", "--models", "none",
                    "--json", "{out}/small_4.json", "--markdown", "{out}/small_4.md"], None)], ""),
    "large-2": ("one node, 2 ranks, 64 MiB against Open MPI's fastest of 8 paths", [
        (NO_TABLE, [*COMPARE, "--ranks-per-node", "2", "--peers", "mpi", "--rounds", "5", "-b",
                    "64M", "-e", "64M", "-n", "10", "-w", "2", "--models", "none",
                    "--mpi-algorithms", "4,5,6", "--json", "{out}/large_2.json", "--markdown",
                    "{out}/large_2.md"], None)], ""),
    "large-4": ("the same, 4 ranks", [
        (NO_TABLE, [*COMPARE, "--ranks-per-node", "4", "--peers", "mpi", "--rounds", "5", "-b",
                    "64M", "-e", "64M", "-n", "10", "-w", "2", "--models", "none",
                    "--mpi-algorithms", "4,5,6", "--json", "{out}/large_4.json", "--markdown",
                    "{out}/large_4.md"], None)], ""),
    "replay-4": ("model replays at 4 ranks against Open MPI", [
        (NO_TABLE, [*COMPARE, "--ranks-per-node", "4", "--peers", "mpi", "--rounds", "3", "-b", "8",
                    "-e", "8", "-n", "10", "-w", "2", "--models", "googlenet,resnet50,alexnet",
                    "--json", "{out}/replay_4.json", "--markdown", "{out}/replay_4.md"], None)], ""),
    "tcp-4x1": ("4 emulated nodes over loopback TCP, 64 MiB", [
        (NO_TABLE, [*COMPARE, "--nodes", "4", "--ranks-per-node", "1", "--peers", "mpi",
                    "--rounds", "5", "-b", "64M", "-e", "64M", "-n", "10", "-w", "2", "--models",
                    "none", "--mpi-algorithms", "4,5,6", "--json", "{out}/tcp4_64M.json",
                    "--markdown", "{out}/tcp4_64M.md"], None)], ""),
    "multihost": ("across emulated hosts, 8 and 64 MiB", [
        ({}, ["bench/multihost/compare_hosts.py", "{build}", "{out}", "--rounds", "3", "--hosts",
              "2,4"], None)], "root"),
    "multihost-small": ("across emulated hosts, 8 B-32 KiB", [
        ({}, ["bench/multihost/compare_hosts.py", "{build}", "{out}", "--rounds", "3", "--hosts",
              "2,4", "--parts", "small"], None)], "root"),
    "main-job": ("collbench --model-gradients googlenet --nodes 4", [
        ({}, ["{build}/bench/collbench", "--model-gradients", "googlenet", "--nodes", "4",
              "--json", "{out}/googlenet_4nodes.json"], "{out}/googlenet_4nodes.txt")], ""),
    "paper-tables": ("the paper's tables modelled (and the plots' data)", [
        ({}, ["plots/make_data.sh", "{build}"], None)], ""),
    "emulated-k50": ("the tables emulated on the real clock, K = 50", [
        ({}, ["{build}/bench/collbench", "--paper-tables", "--emulate", "--time-scale", "50",
              "--model-gradients", model, "--json", "{out}/" + model + ".json"],
         "{out}/" + model + ".md") for model in ("resnet50", "googlenet")], ""),
    "emulated-virtual": ("the tables emulated on the virtual clock", [
        ({}, ["{build}/bench/collbench", "--paper-tables", "--emulate", "--clock", "virtual",
              "--json", "{out}/emulated_virtual.json"], "{out}/emulated_virtual.md")], ""),
    "table7-across-hosts": ("Table 7 over real TCP across emulated hosts", [
        ({}, ["bench/multihost/table7_across_hosts.py", "{build}", "{out}", "--time-scale", "200",
              "--iters", "1", "--warmup", "1"], None)], "root"),
    "table7-across-hosts-alexnet": ("Table 7's AlexNet cells over real TCP (about 70 min)", [
        ({}, ["bench/multihost/table7_across_hosts.py", "{build}", "{out}", "--time-scale", "200",
              "--iters", "1", "--warmup", "1", "--models", "alexnet"], None)], "root"),
    "auto-check": ("auto against the fastest algorithm", [
        ({}, ["bench/auto_check.py", "1x2", "1x4", "2x2", "4x1", "--out", "{out}"], None)], ""),
    "shared-buffers": ("shared buffers against plain ones, one node, libcoll alone", [
        ({}, ["bench/buffers_ab.py", "--build", "{build}", "--ranks", str(ranks), "--rounds", "3",
              "-b", "1M", "-e", "64M", "-f", "4", "-n", iterations, "-w", "3", "--json",
              f"{{out}}/buffers_1x{ranks}_run{run}.json"], f"{{out}}/buffers_1x{ranks}_run{run}.md")
        for ranks, iterations in ((2, "20"), (4, "10")) for run in (1, 2, 3)], ""),
    "interposer": ("libcoll_mpi.so against collbench and Open MPI", [
        ({}, ["bench/interposer/compare.py", "--build", "{build}", "--rounds", "7", "--ranks",
              "2,4", "--json", "{out}/compare.json", "--markdown", "{out}/compare.md"], None)], ""),
    "interposer-alternate": ("libcoll_mpi.so against Open MPI in one process, alternated", [
        ({}, ["bench/interposer/alternate.py", "--build", "{build}", "--blocks", "7", "--ranks",
              "2,4", "--json", f"{{out}}/alternate_run{run}.json", "--markdown",
              f"{{out}}/alternate_run{run}.md"], None) for run in (1, 2)], ""),
    "interposer-direct": ("libcoll_mpi.so against libcoll called directly, alternated", [
        ({}, ["bench/interposer/alternate.py", "--build", "{build}", "--blocks", "7", "--ranks",
              "2,4", "--against", "libcoll", "--json", f"{{out}}/direct_run{run}.json",
              "--markdown", f"{{out}}/direct_run{run}.md"], None) for run in (1, 2)], ""),
    "torch-call-overhead": ("the torch backend's per-call overhead", [
        ({}, ["/usr/bin/python3", "bench/peers/torch_call_overhead.py", "--module-dir",
              "{build}/libcoll/torch", "--rounds", "3"], "{out}/overhead.json")], "python3-torch"),
    "torch-ddp": ("a DDP iteration, coll against gloo", [
        ({}, ["/usr/bin/python3", "tests/torch_backend/ddp_check.py", "--ranks", str(ranks),
              "--steps", "30", "--hidden", "512", "--module-dir", "{build}/libcoll/torch"],
         f"{{out}}/ddp_{ranks}ranks_run{run}.txt") for ranks in (2, 4) for run in (1, 2, 3)],
        "python3-torch"),
    "torch-ddp-resnet50": ("a DDP step of torchvision's ResNet-50, coll against gloo", [
        ({}, ["/usr/bin/python3", "bench/peers/torch_ddp_resnet50.py", "--module-dir",
              "{build}/libcoll/torch", "--ranks", "2,4", "--rounds", "3", "--json",
              "{out}/ddp_resnet50.json", "--markdown", "{out}/ddp_resnet50.md"],
         "{out}/ddp_resnet50.txt")], "python3-torch, python3-torchvision"),
    "simulation-4096": ("the simulator's time per 4096-GPU cell", [
        ({}, ["/usr/bin/python3", "bench/simulation_benchmark.py", "--collbench",
              "{build}/bench/collbench", "--repeats", "3"], "{out}/simulation_4096.md")], ""),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?",
                        default=os.path.join(ROOT, "bench", "results",
                                             f"run-{datetime.date.today().isoformat()}"))
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--only", default="", help="entries to run, comma separated")
    args = parser.parse_args()
    chosen = [name for name in args.only.split(",") if name] or list(ENTRIES)
    unknown = [name for name in chosen if name not in ENTRIES]
    if unknown:
        parser.error(f"no entry {', '.join(unknown)}; --list shows them")
    if args.list:
        for name, (claim, _, needs) in ENTRIES.items():
            print(f"{name:22} {claim}" + (f" (needs {needs})" if needs else ""))
        return 0
    build = os.path.abspath(args.build)
    for name in chosen:
        claim, commands, _ = ENTRIES[name]
        out = os.path.join(os.path.abspath(args.out), name)
        os.makedirs(out, exist_ok=True)
        for environment, argv, stdout_file in commands:
            command = [part.format(build=build, out=out) for part in argv]
            shown = " ".join(f"{k}={v}" for k, v in environment.items())
            print(f"# {name}: {shown} {' '.join(command)}".replace(":  ", ": "), flush=True)
            sink = open(stdout_file.format(out=out), "w") if stdout_file else None
            done = subprocess.run(command, cwd=ROOT, env=dict(os.environ, **environment),
                                  stdout=sink)
            if sink:
                sink.close()
            if done.returncode == 77:  # the command's own skip: a package it needs is missing
                print(f"regenerate: {name} skipped (exit 77)", file=sys.stderr)
                break
            if done.returncode != 0:
                print(f"regenerate: {name} failed with status {done.returncode}", file=sys.stderr)
                return done.returncode
    print(f"# wrote {os.path.abspath(args.out)}; update the rows of bench/results/README.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
