"""One rank of a torchrun job whose link is pulled: asynchronous coll all-reduces until one fails.

usage (per host):  torchrun ... torch_link_fault.py --module-dir DIR

Queues 1 MiB all-reduces (async_op=True) and waits for each, checking the sums, and prints
"READY" once 20 have completed. When a wait() raises RuntimeError (the test pulls a host's
link), prints "CAUGHT RuntimeError after S s: <message>" (S: since the last completed wait) and
exits 3; any other outcome is a line starting "FAIL" and exit 1.
"""
import argparse
import datetime
import os
import socket
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--module-dir", required=True, help="directory of coll_torch*.so")
    parser.add_argument("--seconds", type=float, default=120, help="give up after this long")
    args = parser.parse_args()

    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    sys.path.insert(0, args.module_dir)
    import coll_torch  # noqa: F401  registers the backend "coll"

    rank = int(os.environ["RANK"])
    dist.init_process_group("coll", init_method="env://", timeout=datetime.timedelta(seconds=60))
    size = dist.get_world_size()
    want = torch.full((1 << 18,), float(sum(range(1, size + 1))))
    start = last = time.monotonic()
    completed = 0
    while time.monotonic() - start < args.seconds:
        tensor = torch.full((1 << 18,), float(rank + 1))
        work = dist.all_reduce(tensor, async_op=True)
        try:
            work.wait()
        except RuntimeError as error:
            print(f"CAUGHT RuntimeError after {time.monotonic() - last:.2f} s: {error}",
                  flush=True)
            os._exit(3)  # the job is broken: no destroy_process_group with gone peers
        if not torch.equal(tensor, want):
            print(f"FAIL: rank {rank} ({socket.gethostname()}): wrong sum", flush=True)
            os._exit(1)
        completed += 1
        last = time.monotonic()
        if completed == 20:
            print("READY", flush=True)
    print(f"FAIL: rank {rank} ({socket.gethostname()}): no error within {args.seconds} s",
          flush=True)
    os._exit(1)


if __name__ == "__main__":
    main()
