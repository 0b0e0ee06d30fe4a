#!/usr/bin/python3
"""One DistributedDataParallel training step of torchvision's ResNet-50, backend coll against gloo.

CPU, float32, torchvision.models.resnet50() (random weights, torch.manual_seed(0)), SGD (--lr
0.01, momentum 0.9), cross entropy on a synthetic batch per rank (--batch images of --resolution
squared pixels, labels of 1000 classes, from a generator seeded 1000 + rank: the same data under
both backends). Each rank is this script with --worker, one thread of torch (torch.set_num_threads
(1)), started on 127.0.0.1 with a TCPStore rendezvous (bench/peers/torch_ranks.py); coll is the
coll_torch module from --module-dir.

Why 16 images of 64x64 by default: Debian's torch 1.13 runs a single-threaded 1x1 convolution of
a batch under 16 images through its own convolution over netlib's reference BLAS rather than
oneDNN; 2 images of 224x224 took 45-51 s forward and backward on one core of the 2-core build VM
(loaded), 16 of 64x64 about 6 s. The gradient all-reduced (25.6 M float32 parameters, 102 MB in
5 of DDP's buckets) is the same at any resolution.

Rounds are interleaved, gloo then coll (--order coll,gloo: the other way round), fresh
processes each; in a round each backend runs --warmup + --steps iterations, each step after a
barrier (on a Gloo group under both backends, as the reference sum below: the benchmark's own
synchronization, outside what is timed):
  1. the step without communication: zero_grad, forward and backward under ddp.no_sync() (DDP
     still broadcasts the BatchNorm buffers from rank 0 at the forward, as in every step); the
     optimizer does not step, so the parameters are not changed; the rank's own gradient is
     kept for the check below;
  2. after a barrier, the step: zero_grad, forward, backward (DDP all-reduces the gradient
     buckets while the backward runs), optimizer.step.
The step's gradient all-reduce goes through a DDP comm hook that is torch's own default
(default_hooks.allreduce_hook: divide the bucket by the world size, all_reduce it) and records
when each bucket was handed to the backend and when its future completed. Per iteration:
  step_ms          the whole step (2.)
  fwd_bwd_ms       forward + backward of the step, all-reduce included
  no_sync_ms       forward + backward without the all-reduce (1.)
  sync_ms          fwd_bwd_ms - no_sync_ms: what the gradient all-reduce added to the step
  allreduce_ms     time some bucket's all-reduce was in flight (union of hand-off..completion)
  exposed_ms       from the last bucket's hand-off (the backward's last gradient) to its
                   completion: the all-reduce the backward waited for
  optimizer_ms     optimizer.step
  step_cpu_ms      CPU time the rank's process used in the step: step_main_cpu_ms in the
                   thread that computes (and calls torch.distributed), step_other_cpu_ms in
                   its other threads (the backend's, torch's);
  no_sync_cpu_ms   the same in the step without communication (and its _main_, _other_ parts);
  barrier_ms       the two barriers before the steps (untimed above), and barrier_cpu_ms the
                   CPU time the process used in them, waiting for the slower rank
each the slowest rank's (the largest); warm-up iterations (the first rebuilds DDP's buckets)
are left out. A run's figure is the median of its iterations; the table gives median [min-max]
over rounds, and gloo's / coll's round by round.
Results are checked; a failed check exits 1 after the table and files are written:
  - every step's all-reduced gradients, on every rank, against the mean of the ranks' own
    gradients (from step 1.) summed in float64 over the Gloo group (outside the timed
    steps): within 1e-5 of each tensor's largest magnitude (a sum over the ranks in another
    order differs in the last place of its terms, not of each, possibly cancelled, result);
  - the first step's all-reduced gradients (same parameters, same data under both backends):
    coll's against gloo's within the same bound;
  - the parameters after the last step: the ranks of a run identical; coll's against gloo's
    element by element (rtol 1e-5, atol 1e-6, as tests/torch_backend/ddp_check.py), required
    at 2 ranks only, where the sum of two is the same in any order (and the results are
    identical). At more ranks the backends add in other orders, and this training turns a
    last-place difference in the gradients into differences of order 0.1 in a few steps (Gloo
    against itself with the sum taken in float64 differs from Gloo as much as coll does:
    bench/results/ddp-resnet50-2026-12-07/README.md): reported, not required.
The largest differences are reported.

usage: torch_ddp_resnet50.py --module-dir DIR [--ranks 2,4] [--rounds 3] [--steps 3]
       [--warmup 1] [--batch 16] [--resolution 64] [--lr 0.01] [--order gloo,coll] [--json FILE]
       [--markdown FILE]
Exits 77 (skipped) when torch or torchvision is missing.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_ranks import free_port, init, report, run_ranks  # noqa: E402

BACKENDS = ("gloo", "coll")  # ratios are the first's time / the second's
TIME_FIELDS = ("step_ms", "fwd_bwd_ms", "no_sync_ms", "sync_ms", "allreduce_ms", "exposed_ms",
               "optimizer_ms")
CPU_FIELDS = ("step_main_cpu_ms", "step_other_cpu_ms", "no_sync_main_cpu_ms",
              "no_sync_other_cpu_ms", "barrier_ms", "barrier_cpu_ms")
FIELDS = TIME_FIELDS + CPU_FIELDS + ("step_cpu_ms", "no_sync_cpu_ms")
STORE_TIMEOUT = datetime.timedelta(seconds=600)
RTOL, ATOL = 1e-5, 1e-6  # parameters, element by element, as tests/torch_backend/ddp_check.py
GRADIENT_TOL = 1e-5  # gradients: the largest difference against the tensor's largest value


class BucketTimer:
    """A DDP comm hook: torch's default all-reduce hook, with each bucket's hand-off and
    completion times recorded."""

    def __init__(self):
        self.spans = []

    def hook(self, process_group, bucket):
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

        span = [time.perf_counter(), None]
        self.spans.append(span)

        def done(future):
            span[1] = time.perf_counter()
            return future.value()

        return default_hooks.allreduce_hook(process_group, bucket).then(done)

    def take(self):
        spans, self.spans = self.spans, []
        return spans


class Clock:
    """Wall time, the process's CPU time (all threads) and this thread's, over the stretches
    between construction or resume() and pause()."""

    def __init__(self):
        self.wall_ms = self.cpu_ms = self.thread_cpu_ms = 0.0
        self.began = time.perf_counter()
        self.resume()

    def resume(self):
        self._marks = (time.perf_counter(), time.process_time(), time.thread_time())

    def pause(self):
        now = (time.perf_counter(), time.process_time(), time.thread_time())
        self.ended = now[0]
        self.wall_ms += 1e3 * (now[0] - self._marks[0])
        self.cpu_ms += 1e3 * (now[1] - self._marks[1])
        self.thread_cpu_ms += 1e3 * (now[2] - self._marks[2])


def in_flight(spans):
    """Seconds during which at least one span was open."""
    total, end = 0.0, None
    for start, stop in sorted(spans):
        if end is None or start > end:
            total += stop - start
            end = stop
        elif stop > end:
            total += stop - end
            end = stop
    return total


def deviation_from_reference(dist, torch, local, parameters, group, size):
    """The step's all-reduced gradients (parameters' .grad) against the mean of every rank's own
    gradient (local, float64), summed in float64 over group: the largest difference against the
    tensor's largest value."""
    flat = torch.cat([gradient.flatten() for gradient in local])
    dist.all_reduce(flat, group=group)
    flat /= size
    worst, offset = 0.0, 0
    for parameter in parameters:
        want = flat[offset:offset + parameter.numel()].view_as(parameter)
        offset += parameter.numel()
        worst = max(worst, ((parameter.grad.double() - want).abs().max() /
                            want.abs().max().clamp_min(1e-30)).item())
    return worst


def worker(args):
    import torch
    import torch.distributed as dist
    import torchvision
    from torch.nn.parallel import DistributedDataParallel

    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    rank, size = init(args.backend, args.module_dir, args.port, timeout=STORE_TIMEOUT)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = torchvision.models.resnet50()
    ddp = DistributedDataParallel(model)
    timer = BucketTimer()
    ddp.register_comm_hook(None, timer.hook)
    # The benchmark's own collectives, outside the timed steps, go through Gloo under both
    # backends: the barriers before the steps and the float64 reference sum of every step's
    # gradients. (coll's barrier keeps the waiting rank's core busy: the peer's timed step would
    # pay for the benchmark's scaffolding.)
    gloo_group = dist.new_group(backend="gloo")
    parameters = list(model.parameters())
    optimizer = torch.optim.SGD(parameters, lr=args.lr, momentum=0.9)
    generator = torch.Generator().manual_seed(1000 + rank)
    loss = torch.nn.functional.cross_entropy
    iterations = []
    for _ in range(args.warmup + args.steps):
        images = torch.randn(args.batch, 3, args.resolution, args.resolution, generator=generator)
        labels = torch.randint(0, 1000, (args.batch,), generator=generator)
        waited = Clock()
        dist.barrier(group=gloo_group)
        waited.pause()
        no_sync = Clock()
        optimizer.zero_grad()  # the last step's all-reduced gradients
        with ddp.no_sync():
            loss(ddp(images), labels).backward()
        no_sync.pause()
        local = [parameter.grad.detach().double() for parameter in parameters]
        waited.resume()
        dist.barrier(group=gloo_group)
        waited.pause()
        timer.take()
        step = Clock()
        optimizer.zero_grad()
        value = loss(ddp(images), labels)
        value.backward()
        backward_done = time.perf_counter()
        if not iterations:  # the first step's all-reduced gradients, before any update
            first_gradients = [p.grad.detach().clone() for p in parameters]
        optimizer.step()
        step.pause()
        spans = timer.take()
        if not spans or any(stop is None for _, stop in spans):
            sys.exit(f"rank {rank}: the step's all-reduce was not seen by the comm hook")
        deviation = deviation_from_reference(dist, torch, local, parameters, gloo_group, size)
        del local
        iterations.append({
            "step_ms": step.wall_ms, "fwd_bwd_ms": 1e3 * (backward_done - step.began),
            "no_sync_ms": no_sync.wall_ms,
            "sync_ms": 1e3 * (backward_done - step.began) - no_sync.wall_ms,
            "allreduce_ms": 1e3 * in_flight(spans),
            "exposed_ms": 1e3 * (max(stop for _, stop in spans) - max(s for s, _ in spans)),
            "optimizer_ms": 1e3 * (step.ended - backward_done),
            "step_cpu_ms": step.cpu_ms, "step_main_cpu_ms": step.thread_cpu_ms,
            "step_other_cpu_ms": step.cpu_ms - step.thread_cpu_ms,
            "no_sync_cpu_ms": no_sync.cpu_ms, "no_sync_main_cpu_ms": no_sync.thread_cpu_ms,
            "no_sync_other_cpu_ms": no_sync.cpu_ms - no_sync.thread_cpu_ms,
            "barrier_ms": waited.wall_ms, "barrier_cpu_ms": waited.cpu_ms,
            "buckets": len(spans), "loss": value.item(), "deviation": deviation})
    torch.save({"parameters": [p.detach() for p in parameters],
                "gradients": first_gradients}, args.output)
    dist.destroy_process_group()
    report({"rank": rank, "iterations": iterations[args.warmup:],
            "deviation": max(iteration["deviation"] for iteration in iterations)})


def load_average():
    return [round(value, 2) for value in os.getloadavg()]


def run_backend(args, backend, ranks, output):
    """One run: returns its per-iteration figures (slowest rank) and the loads around it."""
    command = [sys.executable, os.path.abspath(__file__), "--worker", "--backend", backend,
               "--port", str(free_port()), "--module-dir", args.module_dir, "--steps",
               str(args.steps), "--warmup", str(args.warmup), "--batch", str(args.batch),
               "--resolution", str(args.resolution), "--lr", str(args.lr), "--output", output]
    environment = dict(os.environ)
    environment.setdefault("COLL_TIMEOUT", "600")  # a rank may wait out a slow peer's step
    load_before, began = load_average(), time.monotonic()
    results = run_ranks(command, ranks, environment, timeout=3600, label=f"{backend} x{ranks}")
    if results is None:
        sys.exit(f"FAIL: {backend} with {ranks} ranks")
    per_rank = [result["iterations"] for result in results]
    slowest = [{field: max(rank[i][field] for rank in per_rank) for field in FIELDS}
               for i in range(args.steps)]
    for i, iteration in enumerate(slowest):
        iteration["buckets"] = per_rank[0][i]["buckets"]
        iteration["loss_rank0"] = per_rank[0][i]["loss"]
    return {"backend": backend, "ranks": ranks, "load_before": load_before,
            "deviation": max(result["deviation"] for result in results),
            "load_after": load_average(), "seconds": round(time.monotonic() - began, 1),
            "iterations": slowest,
            "median": {field: statistics.median(it[field] for it in slowest) for field in FIELDS}}


def compare_results(torch, files, first_files):
    """files: backend -> [per rank]. Each backend's ranks must agree exactly. Returns how far
    coll's first all-reduced gradients and final parameters are from gloo's, and whether each
    backend's are identical to its first round's (first_files)."""
    loaded = {backend: [torch.load(name) for name in names] for backend, names in files.items()}
    first = {backend: torch.load(names[0]) for backend, names in first_files.items()}
    for backend, ranks in loaded.items():
        for rank, saved in enumerate(ranks):
            for what in ("gradients", "parameters"):
                if any(not torch.equal(a, b) for a, b in zip(saved[what], ranks[0][what])):
                    sys.exit(f"FAIL: {backend} rank {rank}'s {what} differ from rank 0's")
    check = {}
    for what in ("gradients", "parameters"):
        coll, gloo = loaded["coll"][0][what], loaded["gloo"][0][what]
        normwise = max(((a - b).abs().max() / b.abs().max().clamp_min(1e-30)).item()
                       for a, b in zip(coll, gloo))
        check[what] = {
            "max_abs_difference": max((a - b).abs().max().item() for a, b in zip(coll, gloo)),
            "max_normwise_difference": normwise,
            "identical": all(torch.equal(a, b) for a, b in zip(coll, gloo)),
            # A sum over the ranks taken in another order differs by a few units in the last
            # place of its terms, not of each (possibly cancelled, tiny) result: gradients are
            # compared against each tensor's largest value; parameters element by element.
            "within_rounding": normwise <= GRADIENT_TOL if what == "gradients" else
            all(torch.allclose(a, b, rtol=RTOL, atol=ATOL) for a, b in zip(coll, gloo))}
    check["as_first_round"] = {
        backend: all(torch.equal(a, b) for what in ("gradients", "parameters")
                     for a, b in zip(loaded[backend][0][what], first[backend][what]))
        for backend in BACKENDS}
    return check


def spread(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def shown(figure, digits=0):
    return (f"{figure['median']:.{digits}f} [{figure['min']:.{digits}f}-"
            f"{figure['max']:.{digits}f}]")


def summarize(runs, ranks):
    """Per backend the spread over rounds of each run's medians; gloo / coll per round."""
    summary = {}
    for backend in BACKENDS:
        mine = [run for run in runs if run["backend"] == backend and run["ranks"] == ranks]
        summary[backend] = {field: spread([run["median"][field] for run in mine])
                            for field in FIELDS}
    pairs = list(zip(*[[run for run in runs if run["backend"] == backend and
                        run["ranks"] == ranks] for backend in BACKENDS]))
    summary["gloo_over_coll"] = {
        field: spread([gloo["median"][field] / coll["median"][field] for gloo, coll in pairs
                       if coll["median"][field] > 0]) for field in ("step_ms", "allreduce_ms")}
    return summary


def markdown(report_, ranks_list):
    lines = [f"torchvision resnet50 ({report_['parameters_count']} parameters), DDP on CPU, "
             f"float32, {report_['batch_per_rank']} images of {report_['resolution']}x"
             f"{report_['resolution']} per rank, {report_['optimizer']}, one thread per rank; "
             f"torch {report_['torch']}, torchvision {report_['torchvision']}, commit "
             f"{report_['commit']}; {report_['order']}.", "",
             "| ranks | backend | step ms | fwd+bwd ms | no_sync fwd+bwd ms | sync cost ms | "
             "all-reduce in flight ms | exposed all-reduce ms | optimizer ms |",
             "|---|---|---|---|---|---|---|---|---|"]
    cpu = ["| ranks | backend | step CPU ms, main thread | step CPU ms, other threads | "
           "no_sync CPU ms, main thread | no_sync CPU ms, other threads | barriers ms | "
           "barriers CPU ms |", "|---|---|---|---|---|---|---|---|"]
    for ranks in ranks_list:
        summary = report_["summary"][str(ranks)]
        for backend in BACKENDS:
            row = summary[backend]
            lines.append(f"| {ranks} | {backend} | " +
                         " | ".join(shown(row[field]) for field in TIME_FIELDS) + " |")
            cpu.append(f"| {ranks} | {backend} | " +
                       " | ".join(shown(row[field]) for field in CPU_FIELDS) + " |")
        ratio = summary["gloo_over_coll"]
        lines.append(f"| {ranks} | gloo / coll | {shown(ratio['step_ms'], 2)} | | | | "
                     f"{shown(ratio['allreduce_ms'], 2)} | | |")
    lines += ["", *cpu, ""]
    lines.append(f"Median [min-max] over {report_['rounds']} rounds (each round's figure: the "
                 f"median of its {report_['steps']} timed steps, the slowest rank's); gloo / coll "
                 "per round.")
    tolerance = {"gradients": f"{GRADIENT_TOL:g} of each tensor's largest value",
                 "parameters": f"rtol {RTOL:g}, atol {ATOL:g}"}
    for ranks in ranks_list:
        deviations = ", ".join(
            f"{backend} " + format(max(run["deviation"] for run in report_["runs"]
                                       if run["ranks"] == ranks and run["backend"] == backend),
                                   ".3g") for backend in BACKENDS)
        lines.append(f"{ranks} ranks, every step's all-reduced gradients against the mean of the "
                     f"ranks' own gradients summed in float64, largest difference against the "
                     f"tensor's largest value: {deviations} (tolerance {GRADIENT_TOL:g}).")
        checks = report_["checks"][str(ranks)]
        updates = report_["warmup"] + report_["steps"]
        for what, when in (("gradients", "the first step's all-reduced gradients"),
                           ("parameters", f"the parameters after {updates} steps")):
            mine = [check[what] for check in checks]
            lines.append(
                f"{ranks} ranks, {when}, coll against gloo: largest difference "
                f"{max(c['max_abs_difference'] for c in mine):.3g} (largest against the "
                f"tensor's largest value {max(c['max_normwise_difference'] for c in mine):.3g}); "
                f"identical in {sum(c['identical'] for c in mine)} of {len(mine)} rounds, within "
                f"{tolerance[what]} in {sum(c['within_rounding'] for c in mine)}" +
                (" (not required beyond 2 ranks: see the script's header)."
                 if what == "parameters" and ranks > 2 else "."))
        again = ", ".join(f"{backend} {sum(c['as_first_round'][backend] for c in checks)}"
                          for backend in BACKENDS)
        lines.append(f"{ranks} ranks, rounds whose gradients and parameters are identical to the "
                     f"same backend's first round: {again} of {len(checks)}.")
    loads = [run["load_before"][0] for run in report_["runs"]] + \
        [run["load_after"][0] for run in report_["runs"]]
    lines.append(f"1-minute load average around the runs: {min(loads):.1f}-{max(loads):.1f} on "
                 f"{os.cpu_count()} CPUs.")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module-dir", help="the folder of the coll_torch module")
    parser.add_argument("--ranks", default="2", help="rank counts, comma separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=3, help="timed iterations per run")
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--batch", type=int, default=16, help="images per rank")
    parser.add_argument("--resolution", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.01, help="SGD's learning rate")
    parser.add_argument("--order", default="gloo,coll",
                        help="the backends' order within a round (default gloo,coll)")
    parser.add_argument("--json")
    parser.add_argument("--markdown")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--backend", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    if not args.module_dir:
        parser.error("--module-dir is required (the folder of the coll_torch module)")
    try:
        import torch
        import torchvision
    except ImportError as error:
        print(f"torch_ddp_resnet50: SKIP: {error} (needs python3-torch and python3-torchvision)")
        return 77
    ranks_list = [int(r) for r in args.ranks.split(",")]
    order = args.order.split(",")
    if sorted(order) != sorted(BACKENDS):
        parser.error("--order names gloo and coll once each")
    if args.rounds < 1 or args.steps < 1 or args.warmup < 0 or min(ranks_list) < 2:
        parser.error("need --rounds >= 1, --steps >= 1, --warmup >= 0 and ranks >= 2")
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, cwd=os.path.dirname(os.path.abspath(__file__)),
                                check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = None
    runs, checks = [], {}
    with tempfile.TemporaryDirectory() as directory:
        for ranks in ranks_list:
            checks[str(ranks)], first_files = [], None
            for round_ in range(args.rounds):
                files = {}
                for backend in order:
                    output = os.path.join(directory, f"{backend}_{ranks}_{round_}_{{rank}}.pt")
                    run = run_backend(args, backend, ranks, output)
                    run["round"] = round_
                    runs.append(run)
                    files[backend] = [output.format(rank=r) for r in range(ranks)]
                    print(f"{ranks} ranks, round {round_ + 1}, {backend}: step "
                          f"{run['median']['step_ms']:.0f} ms, all-reduce in flight "
                          f"{run['median']['allreduce_ms']:.0f} ms, exposed "
                          f"{run['median']['exposed_ms']:.0f} ms ({run['seconds']} s, load "
                          f"{run['load_before'][0]}-{run['load_after'][0]})", flush=True)
                first_files = first_files or files
                check = compare_results(torch, files, first_files)
                check["round"] = round_
                checks[str(ranks)].append(check)
    result = {
        "tool": "bench/peers/torch_ddp_resnet50.py", "command": " ".join(sys.argv),
        "date": datetime.datetime.now().isoformat(timespec="seconds"), "commit": commit,
        "torch": torch.__version__, "torchvision": torchvision.__version__,
        "python": platform.python_version(), "cpus": os.cpu_count(),
        "model": "torchvision.models.resnet50", "parameters_count":
            sum(p.numel() for p in torchvision.models.resnet50().parameters()),
        "batch_per_rank": args.batch, "resolution": args.resolution, "dtype": "float32",
        "optimizer": f"SGD lr {args.lr:g} momentum 0.9", "threads_per_rank": 1,
        "rounds": args.rounds, "steps": args.steps, "warmup": args.warmup,
        "order": "interleaved: " + ", ".join(order) + " per round, fresh processes",
        "unit": "ms, slowest rank per iteration; medians per run",
        "summary": {str(ranks): summarize(runs, ranks) for ranks in ranks_list},
        "checks": checks, "runs": runs}
    table = markdown(result, ranks_list)
    print(table, end="")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(result, handle, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as handle:
            handle.write(table)
    wrong = [f"{what} at {ranks} ranks, round {check['round'] + 1}"
             for ranks, mine in checks.items() for check in mine
             for what in ("gradients", "parameters") if not check[what]["within_rounding"] and
             (what == "gradients" or ranks == "2")]
    wrong += [f"{run['backend']}'s all-reduce at {run['ranks']} ranks, round {run['round'] + 1}"
              for run in runs if run["deviation"] > GRADIENT_TOL]
    if wrong:
        print(f"FAIL: coll's results differ from gloo's beyond rounding: {'; '.join(wrong)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
