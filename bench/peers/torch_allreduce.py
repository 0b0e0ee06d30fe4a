#!/usr/bin/python3
"""torch.distributed's all-reduce on Gloo or on libcoll's backend, measured as collbench measures
libcoll.

--backend gloo (the default) or coll (libcoll's torch.distributed backend: the coll_torch module
from --module-dir, e.g. build/libcoll/torch). Starts --ranks processes on this machine
(rendezvous over loopback; Gloo also talks TCP over it), each with a
float32 buffer whose pages are advised as huge pages (MADV_HUGEPAGE) and touched before timing.
  sweep:  sizes -b..-e times -f; per size -w untimed calls, a barrier, the mean of -n calls on
          the slowest rank. Gloo reduces in place, so only "in_place" is reported. JSON fields
          are collbench --json's sweep fields.
  replay: --model-gradients M: one all_reduce per gradient tensor in backward order, or with
          --fused one over the flat buffer; JSON fields are collbench's model-gradients fields.
Results are checked against exact sums (small integers, exact in float32).
"""
import argparse
import csv
import ctypes
import json
import mmap
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from torch_ranks import free_port, init

MADV_HUGEPAGE = 14
UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_size(text):
    unit = text[-1].upper() if text and text[-1].isalpha() else ""
    if unit not in UNITS or not text[: len(text) - len(unit)].isdigit():
        raise argparse.ArgumentTypeError(f"'{text}' is not a size (8, 64K, 32M)")
    return int(text[: len(text) - len(unit)]) * UNITS[unit]


def model_tensors(models_dir, model, variant):
    """Element counts of the model's gradient tensors in backward order (bench/models CSV)."""
    if not variant:
        variant = {"alexnet": "bvlc_caffe", "googlenet": "bvlc_caffe", "resnet50": "caffe_he"}[model]
    path = os.path.join(models_dir, f"{model}_{variant}.csv")
    with open(path) as handle:
        rows = csv.DictReader(line for line in handle if not line.startswith("#"))
        return variant, [int(row["elements"]) for row in rows]


def hugepage_buffer(elements):
    """A float32 tensor over pages advised as huge pages, touched (as coll::BufferPool does)."""
    libc = ctypes.CDLL(None, use_errno=True)
    size = max(elements * 4, mmap.PAGESIZE)
    region = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    address = ctypes.addressof(ctypes.c_char.from_buffer(region))
    libc.madvise(ctypes.c_void_p(address), ctypes.c_size_t(size), MADV_HUGEPAGE)
    tensor = torch.frombuffer(region, dtype=torch.float32, count=elements)
    tensor.zero_()
    return region, tensor


def exact_inputs(tensor, rank):
    tensor.copy_(torch.arange(tensor.numel(), dtype=torch.int64).remainder_(7).add_(rank))


def wrong_elements(tensor, ranks):
    expected = torch.arange(tensor.numel(), dtype=torch.int64).remainder_(7).mul_(ranks)
    expected.add_(ranks * (ranks - 1) // 2)
    return int((tensor != expected.to(torch.float32)).sum())


def slowest(seconds):
    value = torch.tensor([seconds], dtype=torch.float64)
    dist.all_reduce(value, op=dist.ReduceOp.MAX)
    return float(value[0])


def total(count):
    value = torch.tensor([count], dtype=torch.int64)
    dist.all_reduce(value)
    return int(value[0])


def sweep(args, rank, ranks):
    _, buffer = hugepage_buffer(args.maxbytes // 4 + 16)
    bus = 2 * (ranks - 1) / ranks if ranks > 1 else 0
    results, wrong_total, size = [], 0, args.minbytes
    while size <= args.maxbytes:
        count = size // 4
        data = buffer[:count]
        exact_inputs(data, rank)
        for _ in range(args.warmup):
            dist.all_reduce(data)
        dist.barrier()
        start = time.perf_counter()
        for _ in range(args.iters):
            dist.all_reduce(data)
        time_us = slowest((time.perf_counter() - start) / args.iters) * 1e6
        exact_inputs(data, rank)
        dist.all_reduce(data)
        wrong = total(wrong_elements(data, ranks))
        wrong_total += wrong
        algbw = count * 4 / (time_us * 1e-6) / 1e9 if time_us > 0 else 0
        results.append({"algorithm": args.backend, "bytes": count * 4, "count": count,
                        "in_place": {"time_us": time_us, "algbw_gbps": algbw,
                                     "busbw_gbps": algbw * bus, "wrong": wrong}})
        if rank == 0:
            print(f"{count * 4:12d} {count:12d} {time_us:10.2f} {algbw * bus:7.2f} {wrong:6d}",
                  flush=True)
        size *= args.stepfactor
    return {"mode": "sweep", "collective": "allreduce", "bus_factor": bus, "results": results,
            "wrong_total": wrong_total}


def replay(args, rank, ranks):
    variant, sizes = model_tensors(args.models_dir, args.model_gradients, args.model_variant)
    elements = sum(sizes)
    _, flat = hugepage_buffer(elements)
    exact_inputs(flat, rank)
    views, offset = [], 0
    for count in sizes:
        views.append(flat[offset : offset + count])
        offset += count
    per_iteration = []
    for i in range(args.warmup + args.iters):
        exact_inputs(flat, rank)  # all_reduce is in place: every iteration reduces fresh inputs
        dist.barrier()
        start = time.perf_counter()
        for tensor in [flat] if args.fused else views:
            dist.all_reduce(tensor)
        seconds = slowest(time.perf_counter() - start)
        if i >= args.warmup:
            per_iteration.append(seconds * 1e3)
    wrong = total(wrong_elements(flat, ranks))
    median = statistics.median(per_iteration)
    if rank == 0:
        how = "one flat all_reduce" if args.fused else "per tensor"
        print(f"{args.model_gradients} ({variant}), {len(sizes)} tensors, {elements * 4} bytes, "
              f"{how}: {median:.3f} ms per iteration (median), {wrong} wrong", flush=True)
    return {"mode": "model-gradients", "model": args.model_gradients, "variant": variant,
            "algorithm": args.backend, "fusion": "flat" if args.fused else "none",
            "tensors": len(sizes), "elements": elements, "bytes": elements * 4,
            "median_ms": median, "wrong": wrong, "iteration_ms": per_iteration}


def rank_main(rank, args, port, failures):
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    init(args.backend, args.module_dir, port, rank, args.ranks)
    torch.set_num_threads(1)
    report = replay(args, rank, args.ranks) if args.model_gradients else sweep(args, rank, args.ranks)
    report = {"tool": "torch_allreduce", "backend": args.backend, "ranks": args.ranks, "type": "float", "op": "sum",
              "iterations": args.iters, "warmup": args.warmup, "torch": torch.__version__, **report}
    if rank == 0 and args.json:
        with open(args.json, "w") as handle:
            json.dump(report, handle, indent=1)
    if report.get("wrong_total", report.get("wrong", 0)):
        failures.value += 1
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--backend", choices=["gloo", "coll"], default="gloo")
    parser.add_argument("--module-dir", help="where the coll_torch module is (--backend coll)")
    parser.add_argument("-b", "--minbytes", type=parse_size, default=8)
    parser.add_argument("-e", "--maxbytes", type=parse_size, default=32 << 20)
    parser.add_argument("-f", "--stepfactor", type=int, default=2)
    parser.add_argument("-n", "--iters", type=int, default=20)
    parser.add_argument("-w", "--warmup", type=int, default=5)
    parser.add_argument("--json")
    parser.add_argument("--model-gradients", choices=["alexnet", "googlenet", "resnet50"])
    parser.add_argument("--model-variant", default="")
    parser.add_argument("--models-dir",
                        default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
    parser.add_argument("--fused", action="store_true")
    args = parser.parse_args()
    if args.ranks < 1 or args.stepfactor < 2 or args.iters < 1 or args.minbytes < 4 or \
            args.minbytes > args.maxbytes:
        parser.error("need --ranks >= 1, -f >= 2, -n >= 1 and 4 <= -b <= -e")
    if args.backend == "coll" and not args.module_dir:
        parser.error("--backend coll needs --module-dir (the folder of the coll_torch module)")
    port = free_port()  # for the rendezvous
    failures = mp.get_context("spawn").Value("i", 0)
    mp.start_processes(rank_main, args=(args, port, failures), nprocs=args.ranks, join=True,
                       start_method="spawn")
    return 1 if failures.value else 0


if __name__ == "__main__":
    sys.exit(main())
