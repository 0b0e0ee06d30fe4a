"""Ranks of a torch.distributed job as processes on this machine, for the scripts that run torch's
backends side by side (tests/torch_backend/ddp_check.py, bench/peers/torch_*.py).

free_port()            a free TCP port on 127.0.0.1, for a TCPStore rendezvous
init(backend, ...)     init_process_group over tcp://127.0.0.1:PORT; "coll" first imports the
                       coll_torch module from module_dir (which registers the backend)
report(values)         a worker's result: one line "RESULT {json}" on stdout
run_ranks(argv, ranks) starts argv once per rank ("{rank}" in an argument replaced by the rank;
                       RANK and WORLD_SIZE in its environment), waits for all, and returns every rank's RESULT objects; prints the output of a
                       rank that failed and returns None
"""
import json
import os
import socket
import subprocess
import sys

RESULT = "RESULT "


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def init(backend, module_dir, port, rank=None, size=None, timeout=None):
    """Joins the group; rank and size default to $RANK and $WORLD_SIZE. Returns (rank, size)."""
    import torch.distributed as dist

    if backend == "coll":
        sys.path.insert(0, module_dir)
        import coll_torch  # noqa: F401  registers the backend
    rank = int(os.environ["RANK"]) if rank is None else rank
    size = int(os.environ["WORLD_SIZE"]) if size is None else size
    options = {"timeout": timeout} if timeout is not None else {}
    dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=size, **options)
    return rank, size


def report(values):
    print(RESULT + json.dumps(values), flush=True)


def run_ranks(argv, ranks, environment=None, timeout=900, label=""):
    processes = []
    for rank in range(ranks):
        env = dict(os.environ if environment is None else environment, RANK=str(rank),
                   WORLD_SIZE=str(ranks))
        command = [part.replace("{rank}", str(rank)) for part in argv]
        processes.append(subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                                          stderr=subprocess.STDOUT, text=True))
    results, failed = [], False
    for rank, process in enumerate(processes):
        try:
            output, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
            output += f"\n(killed after {timeout} s)"
        if process.returncode != 0:
            failed = True
            print(f"--- {label} rank {rank} exited {process.returncode}:\n{output}", flush=True)
        results += [json.loads(line[len(RESULT):]) for line in output.splitlines()
                    if line.startswith(RESULT)]
    return None if failed else results
