"""The torch.distributed backend "coll" against "gloo": checks coll's collectives on exact
inputs, its asynchronous Work and its errors, then trains the same small model with
DistributedDataParallel on each backend and compares the final parameters; prints DDP's median
iteration time per backend.

usage: ddp_check.py --module-dir DIR [--ranks N] [--steps S] [--hidden H] [--check-collectives]
Each rank is this script with --worker, started on 127.0.0.1 with a TCPStore rendezvous.
"""
import argparse
import datetime
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench",
                                "peers"))
from torch_ranks import free_port, init, report, run_ranks  # noqa: E402


def expect_error(action, words, rank):
    try:
        action()
    except RuntimeError as error:
        message = str(error)
        if all(word in message for word in words):
            return
        sys.exit(f"rank {rank}: error without {words}: {message}")
    sys.exit(f"rank {rank}: expected an error mentioning {words}")


def check_collectives(dist, torch, rank, size):
    """Exact inputs (small integers; powers of two for product) in every supported type."""
    dtypes = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8,
              torch.uint8, torch.int32, torch.int64]
    ops = {"sum": dist.ReduceOp.SUM, "product": dist.ReduceOp.PRODUCT,
           "min": dist.ReduceOp.MIN, "max": dist.ReduceOp.MAX}
    for dtype in dtypes:
        for count in (0, 1, size - 1, 1000, 65537):
            index = torch.arange(count, dtype=torch.int64)
            for name, op in ops.items():
                def base(r):  # int64, so that the expected value is computed exactly
                    if name == "product":
                        return 1 + (index + r) % 2
                    return (index * 7 + r * 3) % 11
                stacked = torch.stack([base(r) for r in range(size)])
                want = {"sum": stacked.sum(0), "product": stacked.prod(0),
                        "min": stacked.min(0).values if count else index,
                        "max": stacked.max(0).values if count else index}[name].to(dtype)
                values = lambda r: base(r).to(dtype)  # noqa: E731
                tensor = values(rank)
                work = dist.all_reduce(tensor, op=op, async_op=True)
                work.wait()
                if not torch.equal(tensor, want):
                    sys.exit(f"rank {rank}: all_reduce {name} {dtype} count {count} wrong")
            if dtype.is_floating_point:
                tensor = ((index * 7 + rank * 3) % 11).to(dtype)
                dist.all_reduce(tensor, op=dist.ReduceOp.AVG)
                want = sum((index * 7 + r * 3) % 11 for r in range(size)).double() / size
                if not torch.allclose(tensor.double(), want, rtol=1e-2):
                    sys.exit(f"rank {rank}: all_reduce avg {dtype} count {count} wrong")
            root = size - 1
            tensor = (index + rank).to(dtype)
            dist.broadcast(tensor, src=root)
            if not torch.equal(tensor, (index + root).to(dtype)):
                sys.exit(f"rank {rank}: broadcast {dtype} count {count} wrong")
            contributions = torch.stack([(index * 7 + r * 3) % 11 for r in range(size)])
            for root in range(size):
                tensor = contributions[rank].to(dtype)
                dist.reduce(tensor, dst=root, op=dist.ReduceOp.MAX)
                if rank == root and count and not torch.equal(
                        tensor, contributions.max(0).values.to(dtype)):
                    sys.exit(f"rank {rank}: reduce {dtype} count {count} to {root} wrong")
            gathered = [torch.empty(count, dtype=dtype) for _ in range(size)]
            dist.all_gather(gathered, (index % 5 + rank).to(dtype))
            if any(not torch.equal(g, (index % 5 + r).to(dtype)) for r, g in enumerate(gathered)):
                sys.exit(f"rank {rank}: all_gather {dtype} count {count} wrong")
            blocks = [(index % 5 + rank + block).to(dtype) for block in range(size)]
            out = torch.empty(count, dtype=dtype)
            dist.reduce_scatter(out, blocks)
            want = sum((index % 5 + r + rank) for r in range(size)).to(dtype)
            if not torch.equal(out, want):
                sys.exit(f"rank {rank}: reduce_scatter {dtype} count {count} wrong")
    dist.barrier()
    # Bad input fails at once, on the caller's rank; a collective the ranks disagree on fails in
    # wait(), with the ranks named.
    expect_error(lambda: dist.all_reduce(torch.zeros(4, 4).t()), ["rank", "contiguous"], rank)
    expect_error(lambda: dist.all_reduce(torch.zeros(4, dtype=torch.bool)), ["rank", "Bool"],
                 rank)
    mismatched = torch.zeros(8 + rank)
    expect_error(lambda: dist.all_reduce(mismatched, async_op=True).wait(),
                 ["coll backend", "rank"], rank)


# Bounds every rendezvous wait, so that a rank stuck in the store fails the test instead of hanging.
STORE_TIMEOUT = datetime.timedelta(seconds=300)


def worker(args):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    rank, size = init(args.backend, args.module_dir, args.port, timeout=STORE_TIMEOUT)
    if args.check_collectives and args.backend == "coll":
        check_collectives(dist, torch, rank, size)
        # A collective that failed leaves the communicator unusable: start a fresh group.
        dist.destroy_process_group()
        init(args.backend, args.module_dir, args.port2, timeout=STORE_TIMEOUT)

    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(64, args.hidden), torch.nn.ReLU(),
                                torch.nn.Linear(args.hidden, args.hidden), torch.nn.ReLU(),
                                torch.nn.Linear(args.hidden, 10))
    ddp = DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05)
    generator = torch.Generator().manual_seed(1000 + rank)
    times = []
    for _ in range(args.steps):
        inputs = torch.randn(32, 64, generator=generator)
        labels = torch.randint(0, 10, (32,), generator=generator)
        start = time.perf_counter()
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(ddp(inputs), labels).backward()
        optimizer.step()
        times.append(time.perf_counter() - start)
    torch.save([p.detach() for p in model.parameters()], args.output)
    dist.destroy_process_group()
    warm = times[len(times) // 4:]
    report({"rank": rank, "iteration_ms": 1e3 * statistics.median(warm)})


def launch(args, backend, directory):
    ports = (free_port(), free_port())
    command = [sys.executable, __file__, "--worker", "--backend", backend, "--port",
               str(ports[0]), "--port2", str(ports[1]), "--module-dir", args.module_dir,
               "--steps", str(args.steps), "--hidden", str(args.hidden), "--output",
               os.path.join(directory, f"{backend}_{{rank}}.pt")]
    if args.check_collectives:
        command.append("--check-collectives")
    results = run_ranks(command, args.ranks, label=backend)
    if results is None:
        sys.exit(f"FAIL: {backend} with {args.ranks} ranks")
    return max(result["iteration_ms"] for result in results)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--module-dir", required=True)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--check-collectives", action="store_true")
    parser.add_argument("--worker", action="store_true")
    parser.add_argument("--backend")
    parser.add_argument("--port", type=int)
    parser.add_argument("--port2", type=int)
    parser.add_argument("--output")
    args = parser.parse_args()
    if args.worker:
        return worker(args)

    import torch
    with tempfile.TemporaryDirectory() as directory:
        timing = {backend: launch(args, backend, directory) for backend in ("coll", "gloo")}
        load = lambda backend, rank: torch.load(os.path.join(directory, f"{backend}_{rank}.pt"))
        reference = load("gloo", 0)
        for rank in range(args.ranks):
            mine = load("coll", rank)
            if any(not torch.equal(a, b) for a, b in zip(mine, load("coll", 0))):
                sys.exit(f"FAIL: coll rank {rank}'s parameters differ from rank 0's")
            worst = max((a - b).abs().max().item() for a, b in zip(mine, reference))
            if not all(torch.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in zip(mine, reference)):
                sys.exit(f"FAIL: coll and gloo parameters differ by up to {worst}")
        print(f"{args.ranks} ranks, {args.steps} steps, hidden {args.hidden}: coll and gloo "
              f"parameters agree (max difference {worst:.3g}); DDP iteration median "
              f"(slowest rank): coll {timing['coll']:.3f} ms, gloo {timing['gloo']:.3f} ms")


if __name__ == "__main__":
    main()
