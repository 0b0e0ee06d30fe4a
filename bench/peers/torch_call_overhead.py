#!/usr/bin/python3
"""What one torch.distributed call costs above the collective itself, layer by layer.

Two ranks on this machine, the coll backend (the coll_torch module from --module-dir), a 2-element
float32 tensor; each layer the mean of -n calls after 200 untimed ones, rank 0's time:
  dist.all_reduce          what a user calls (torch's Python wrapper, the binding, wait)
  pg.allreduce().wait()    the process group's binding and the Work, without the wrapper
  tensor.add_(0)           one binding call into torch that moves no data: the floor of a call
once with COLL_TORCH_RUN_HERE_BYTES unset (short collectives on the calling thread) and once with
0 (every collective handed to the backend's engine thread). collbench's 8-byte all-reduce is the
collective alone. Prints one JSON object.
usage: torch_call_overhead.py --module-dir DIR [-n 20000] [--rounds 3]
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from torch_ranks import free_port, init


def rank_main(rank, module_dir, port, calls, results):
    init("coll", module_dir, port, rank, 2)
    torch.set_num_threads(1)
    tensor = torch.ones(2)
    group = dist.distributed_c10d._get_default_group()
    options = dist.AllreduceOptions()
    layers = {"dist.all_reduce": lambda: dist.all_reduce(tensor),
              "pg.allreduce().wait()": lambda: group.allreduce([tensor], options).wait(),
              "tensor.add_(0)": lambda: tensor.add_(0)}
    for name, call in layers.items():
        for _ in range(200):
            call()
        dist.barrier()
        start = time.perf_counter()
        for _ in range(calls):
            call()
        if rank == 0:
            results[name] = (time.perf_counter() - start) / calls * 1e6
    dist.destroy_process_group()


def measure(module_dir, calls):
    port = free_port()
    results = mp.get_context("spawn").Manager().dict()
    mp.start_processes(rank_main, args=(module_dir, port, calls, results), nprocs=2, join=True,
                       start_method="spawn")
    return dict(results)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module-dir", required=True)
    parser.add_argument("-n", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    settings = {"run here (default)": None, "engine thread (COLL_TORCH_RUN_HERE_BYTES=0)": "0"}
    rounds = {name: [] for name in settings}
    for _ in range(args.rounds):  # interleaved: load drifts over both alike
        for name, value in settings.items():
            os.environ.pop("COLL_TORCH_RUN_HERE_BYTES", None)
            if value is not None:
                os.environ["COLL_TORCH_RUN_HERE_BYTES"] = value
            rounds[name].append(measure(args.module_dir, args.n))
    medians = {name: {layer: statistics.median(r[layer] for r in runs) for layer in runs[0]}
               for name, runs in rounds.items()}
    print(json.dumps({"tool": "bench/peers/torch_call_overhead.py", "calls": args.n,
                      "torch": torch.__version__, "unit": "us per call, median of rounds",
                      "medians": medians, "rounds": rounds}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
