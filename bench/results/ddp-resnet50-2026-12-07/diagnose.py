#!/usr/bin/python3
"""Two diagnostics of bench/peers/torch_ddp_resnet50.py's run, each running its worker (same
model, data, seeds, steps) with one thing changed.

sensitivity: how far this training moves on a last-place difference in the summed gradients.
  Three runs at --ranks ranks (default 4): gloo; gloo with the DDP hook summing each bucket in
  float64 and rounding once (the same mean, about one unit in the last place off Gloo's float32
  sum in some elements); coll. Prints each run's largest deviation of every step's gradients
  from the float64 reference (the worker's own check), the losses rank 0 saw, and the last two
  runs' parameters against gloo's, tensor by tensor (the five largest absolute differences, the
  three largest against the tensor's largest value).
threads: where each rank's CPU time went. gloo, then coll, at --ranks ranks (default 2); each
  rank reports, when it ends, the CPU seconds of each of its threads over the whole run (the
  main thread computes; the others are the backend's and torch's), with its timed steps.
usage: diagnose.py sensitivity|threads --module-dir DIR [--ranks N] [--steps 3] [--warmup 1]
       [--batch 16] [--resolution 64] [--lr 0.01]
"""
import argparse
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "peers"))


def float64_sum(process_group, bucket):
    import torch
    import torch.distributed as dist

    tensor = bucket.buffer()
    wide = tensor.double()
    dist.all_reduce(wide, group=process_group)
    wide /= dist.get_world_size(process_group)
    tensor.copy_(wide)
    future = torch.futures.Future()
    future.set_result(tensor)
    return future


def thread_cpu_seconds():
    """{thread id: CPU seconds (user + system)} of this process's threads."""
    ticks = os.sysconf("SC_CLK_TCK")
    seconds = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        seconds[int(tid)] = (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    return seconds


def worker():
    """The benchmark's worker, with --float64-sum replacing torch's default hook and
    --thread-cpu adding the threads' CPU time to its report."""
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    import torch_ddp_resnet50

    if "--float64-sum" in sys.argv:
        sys.argv.remove("--float64-sum")
        default_hooks.allreduce_hook = float64_sum
    if "--thread-cpu" in sys.argv:
        sys.argv.remove("--thread-cpu")
        report = torch_ddp_resnet50.report

        def with_threads(values):
            threads = thread_cpu_seconds()
            main_thread = threads.pop(os.getpid(), 0.0)
            report({**values, "main_thread_cpu_s": main_thread,
                    "other_threads_cpu_s": sorted(threads.values(), reverse=True)})

        torch_ddp_resnet50.report = with_threads
    return torch_ddp_resnet50.main()


def run(args, name, backend, extra, output):
    """One run of the worker at args.ranks ranks; returns every rank's report."""
    from torch_ranks import free_port, run_ranks

    command = [sys.executable, os.path.abspath(__file__), "--worker", "--backend", backend,
               "--port", str(free_port()), "--module-dir", args.module_dir, "--steps",
               str(args.steps), "--warmup", str(args.warmup), "--batch", str(args.batch),
               "--resolution", str(args.resolution), "--lr", str(args.lr), "--output", output,
               *extra]
    environment = dict(os.environ, COLL_TIMEOUT="600")
    results = run_ranks(command, args.ranks, environment, timeout=3600, label=name)
    if results is None:
        sys.exit(f"diagnose: the {name} run failed")
    return results


def sensitivity(args, directory):
    import torch
    import torchvision

    names = [name for name, _ in torchvision.models.resnet50().named_parameters()]
    saved = {}
    for name, backend, extra in (("gloo", "gloo", []),
                                 ("gloo, float64 sum", "gloo", ["--float64-sum"]),
                                 ("coll", "coll", [])):
        output = os.path.join(directory, f"{len(saved)}_{{rank}}.pt")
        results = run(args, name, backend, extra, output)
        losses = [iteration["loss"] for iteration in results[0]["iterations"]]
        print(f"{name}: every step's gradients against the float64 reference, largest "
              f"difference against the tensor's largest value "
              f"{max(result['deviation'] for result in results):.3g}; rank 0's losses after "
              f"the warm-up {losses}", flush=True)
        saved[name] = torch.load(output.format(rank=0))["parameters"]
    reference = saved["gloo"]
    for name in ("gloo, float64 sum", "coll"):
        rows = [((a - b).abs().max().item(),
                 (a - b).abs().max().item() / b.abs().max().item(), tensor)
                for tensor, a, b in zip(names, saved[name], reference)]
        identical = sum(torch.equal(a, b) for a, b in zip(saved[name], reference))
        print(f"{name} against gloo after {args.warmup + args.steps} steps: {identical} of "
              f"{len(rows)} tensors identical; largest absolute differences:")
        for absolute, relative, tensor in sorted(rows)[-5:]:
            print(f"    {tensor}: {absolute:.3g} ({relative:.3g} of the tensor's largest value)")
        print("  largest against the tensor's largest value:")
        for absolute, relative, tensor in sorted(rows, key=lambda row: row[1])[-3:]:
            print(f"    {tensor}: {relative:.3g} ({absolute:.3g})")


def threads(args, directory):
    for backend in ("gloo", "coll"):
        began = time.monotonic()
        results = run(args, backend, backend, ["--thread-cpu"],
                      os.path.join(directory, f"{backend}_{{rank}}.pt"))
        print(f"{backend}, {args.ranks} ranks, {time.monotonic() - began:.1f} s wall (load "
              f"{os.getloadavg()[0]:.1f} at the end); CPU seconds over the run:", flush=True)
        for result in sorted(results, key=lambda result: result["rank"]):
            others = result["other_threads_cpu_s"]
            busy = ", ".join(f"{seconds:.2f}" for seconds in others if seconds >= 0.05)
            steps = [round(iteration["step_ms"]) for iteration in result["iterations"]]
            print(f"    rank {result['rank']}: main thread {result['main_thread_cpu_s']:.2f}, "
                  f"{len(others)} other threads {sum(others):.2f} (those over 0.05 s: "
                  f"{busy or 'none'}); timed steps {steps} ms", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["sensitivity", "threads"])
    parser.add_argument("--module-dir", required=True)
    parser.add_argument("--ranks", type=int)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--resolution", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.01)
    args = parser.parse_args()
    args.ranks = args.ranks or (4 if args.what == "sensitivity" else 2)
    with tempfile.TemporaryDirectory() as directory:
        (sensitivity if args.what == "sensitivity" else threads)(args, directory)
    return 0


if __name__ == "__main__":
    sys.exit(worker() if "--worker" in sys.argv else main())
