"""One rank of a torchrun job across hosts: torch.distributed backend "coll" against "gloo".

usage (per host):  torchrun --nnodes N --node-rank R --master-addr ADDR --master-port PORT \
                       --nproc-per-node K --redirects 1 --tee 1 \
                       torch_ddp_step.py --module-dir BUILD/libcoll/torch [--steps S]

Rendezvous is torchrun's (env://: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT); nothing else is
configured, so the backend must pick its interface and address by itself.
  (a) all-reduces a few tensors (several types and sizes, small integers, so sums are exact)
      with backend "coll" and checks every element;
  (b) trains the same 2-layer MLP (fixed seeds, per-rank data) with DistributedDataParallel
      once over a "coll" group and once over a "gloo" group, interleaving their steps, and
      requires every coll rank to end with the same parameters as rank 0 and within float
      rounding (max abs difference < 1e-6) of gloo's.
Rank 0 prints "RESULT {json}" with the hosts, the step times (median of each rank's steps after
the first quarter; the slowest rank) and the largest parameter difference. Any failure exits
non-zero with a line starting "FAIL".

--fail-once-at-step K: in torchrun's first attempt (TORCHELASTIC_RESTART_COUNT 0) the last rank
dies at step K, as a lost host's would; an elastic torchrun (--max_restarts) starts every worker
again, and the new attempt must form its communicator afresh and train to the same parameters.
"""
import argparse
import datetime
import json
import os
import socket
import statistics
import sys
import time

TOLERANCE = 1e-6


def fail(rank, message):
    print(f"FAIL: rank {rank} ({socket.gethostname()}): {message}", file=sys.stderr, flush=True)
    sys.stdout.flush()
    os._exit(1)  # do not wait in destroy_process_group for peers that may be gone


def check_all_reduce(dist, torch, rank, size):
    checked = 0
    for dtype in (torch.float32, torch.float64, torch.int32, torch.int64, torch.bfloat16):
        for count in (1, 7, 1000, 65537, 1 << 20):
            if dtype == torch.bfloat16 and count > 1000:
                continue
            index = torch.arange(count, dtype=torch.int64)
            want = sum((index * 7 + r * 3) % 11 for r in range(size)).to(dtype)
            tensor = ((index * 7 + rank * 3) % 11).to(dtype)
            dist.all_reduce(tensor)  # default group: coll
            if not torch.equal(tensor, want):
                wrong = (tensor != want).nonzero()
                fail(rank, f"coll all_reduce sum of {count} {dtype} wrong at {wrong.numel()} "
                     f"elements, first index {wrong[0].item()}: "
                     f"{tensor[wrong[0]].item()} != {want[wrong[0]].item()}")
            checked += 1
    # Async works queued back to back, completed in order.
    tensors = [torch.full((4096,), float(rank + k)) for k in range(4)]
    works = [dist.all_reduce(t, async_op=True) for t in tensors]
    for k, (work, tensor) in enumerate(zip(works, tensors)):
        work.wait()
        want = float(sum(r + k for r in range(size)))
        if not torch.equal(tensor, torch.full((4096,), want)):
            fail(rank, f"coll async all_reduce {k} wrong: {tensor[0].item()} != {want}")
        checked += 1
    return checked


def train(torch, DDP, group, steps, rank):
    """One DDP model over `group`; returns (model, ddp, optimizer, generator)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 10))
    ddp = DDP(model, process_group=group)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    generator = torch.Generator().manual_seed(1000 + rank)
    return model, ddp, optimizer, generator


def step(torch, ddp, optimizer, generator):
    inputs = torch.randn(32, 64, generator=generator)
    labels = torch.randint(0, 10, (32,), generator=generator)
    start = time.perf_counter()
    optimizer.zero_grad()
    torch.nn.functional.cross_entropy(ddp(inputs), labels).backward()
    optimizer.step()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--module-dir", required=True, help="directory of coll_torch*.so")
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--timeout", type=int, default=120, help="rendezvous timeout, seconds")
    parser.add_argument("--fail-once-at-step", type=int, default=-1,
                        help="the last rank dies at this step of torchrun's first attempt")
    args = parser.parse_args()

    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.set_num_threads(1)
    sys.path.insert(0, args.module_dir)
    import coll_torch  # noqa: F401  registers the backend "coll"

    rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    host = socket.gethostname()
    timeout = datetime.timedelta(seconds=args.timeout)
    stage = "init_process_group(coll)"
    try:
        dist.init_process_group("coll", init_method="env://", timeout=timeout)
        stage = "new_group(gloo)"
        gloo = dist.new_group(backend="gloo", timeout=timeout)
        stage = "new_group(coll)"
        coll = dist.new_group(backend="coll", timeout=timeout)
        # Where every rank runs (over gloo, so that this does not depend on coll).
        stage = "host exchange over gloo"
        hosts = [None] * size
        dist.all_gather_object(hosts, host, group=gloo)

        stage = "coll all_reduce checks"
        checked = check_all_reduce(dist, torch, rank, size)

        stage = "DDP training"
        runs = {name: train(torch, DDP, group, args.steps, rank)
                for name, group in (("coll", coll), ("gloo", gloo))}
        times = {name: [] for name in runs}
        attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
        for index in range(args.steps):  # interleaved, so both see the same machine load
            if index == args.fail_once_at_step and attempt == 0 and rank == size - 1:
                print(f"rank {rank} ({host}): dying at step {index} of attempt 0", flush=True)
                os._exit(1)
            for name, (_, ddp, optimizer, generator) in runs.items():
                times[name].append(step(torch, ddp, optimizer, generator))
    except Exception as error:  # noqa: BLE001  one clear line, then out
        fail(rank, f"{stage} failed: {type(error).__name__}: {error}")

    # Parameters: coll's against gloo's here, and every rank's coll parameters against rank 0's.
    coll_params = [p.detach().clone() for p in runs["coll"][0].parameters()]
    gloo_params = [p.detach().clone() for p in runs["gloo"][0].parameters()]
    worst = max((a - b).abs().max().item() for a, b in zip(coll_params, gloo_params))
    flat = torch.cat([p.reshape(-1) for p in coll_params])
    reference = flat.clone()
    dist.broadcast(reference, src=0, group=gloo)
    differs_from_rank0 = not torch.equal(flat, reference)
    warm = {name: 1e3 * statistics.median(t[len(t) // 4:]) for name, t in times.items()}
    summary = torch.tensor([worst, float(differs_from_rank0), warm["coll"], warm["gloo"]],
                           dtype=torch.float64)
    everyone = [torch.zeros_like(summary) for _ in range(size)]
    dist.all_gather(everyone, summary, group=gloo)
    everyone = torch.stack(everyone)

    if rank == 0:
        result = {
            "world_size": size, "hosts": hosts, "all_reduce_checks": checked,
            "attempt": int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")),
            "steps": args.steps,
            "max_abs_diff_coll_vs_gloo": everyone[:, 0].max().item(),
            "coll_ranks_differing_from_rank0": [r for r in range(size) if everyone[r, 1] > 0],
            "step_ms_coll": round(everyone[:, 2].max().item(), 3),
            "step_ms_gloo": round(everyone[:, 3].max().item(), 3),
        }
        print("RESULT " + json.dumps(result), flush=True)
    bad = everyone[:, 0].max().item() >= TOLERANCE or everyone[:, 1].max().item() > 0
    dist.destroy_process_group(coll)
    dist.destroy_process_group(gloo)
    dist.destroy_process_group()
    if bad:
        if differs_from_rank0:
            fail(rank, "coll DDP parameters differ from rank 0's")
        if worst >= TOLERANCE:
            fail(rank, f"coll and gloo DDP parameters differ by up to {worst:.3g} "
                 f"(tolerance {TOLERANCE})")
        sys.exit(1)  # another rank failed the check and said so


if __name__ == "__main__":
    main()
