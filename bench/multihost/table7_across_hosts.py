#!/usr/bin/python3
"""The paper's Table 7 (8 and 16 GPUs: 2 x 4, 4 x 4) over real TCP across emulated hosts.

Each cell is the child that `collbench --paper-tables --emulate --time-scale K` runs for it
(bench/emulation.cc: `collbench --model-gradients M --strategy S --nodes N -g 4
--compute-profile p40 --compute-scale K --iters I --warmup_iters W --models-dir D --json F`,
COLL_TRANSPORT=shaped:ucx, COLL_COST_PRESET=p40-ib56, COLL_CHECK_ARGS=0; across hosts also
COLL_UCX_TRUST_NETWORK=1, as only the job's hosts are on the bridge), started instead by
Open MPI's mpirun across N emulated hosts (tests/multihost/hosts.sh: a network namespace, veth
interface, address and hostname each, joined by a bridge; tests/multihost/mpirun.sh), 4 ranks
per host, ranks numbered host by host (--map-by slot, as the emulation's launcher and the model
number them). What differs from the emulation is the link between nodes:

- between hosts the bytes go over real TCP sockets through each host's veth, rate-limited by tbf
  to the preset's inter-node bandwidth / K on the host's way out (--rate: its NIC out) and on the
  bridge port towards it (--rate-in: its NIC in), as the shaped transport has a NIC out and a NIC
  in bucket per node; each tbf gets a deep queue (--queue), since a drop costs TCP a timeout of
  real time where InfiniBand drops nothing;
- the shaped transport still shapes every link inside a node as the emulation does (each rank's
  port at beta intra, the node's staging path, alpha intra as work at both ends of a message), and
  a message to another node still crosses its sender's port at beta intra (its GPU's link on the
  way to the NIC); COLL_SHAPE's inter link is 0:0, so the shaped transport adds nothing between
  nodes (COLL_SHAPE must name an inter link: link_shape.cc; 0:0 reserves nothing on the NICs).
  With --inter-alpha the preset's inter-node alpha stays (inter=ALPHA:0): each message between
  nodes then costs its two ends that much work, the bytes still go over TCP.

Times are divided by K (the child runs K times slower: links and compute). Beside each cell: the
modelled cell and the virtual-clock cell, both from a fresh `collbench --paper-tables --emulate
--clock virtual --model-gradients M --nodes N --ranks-per-node 4 --json ...` of the same build
(its JSON holds the modelled cell too), and with --same-machine the real-clock emulation's own
cell (`collbench --paper-tables --emulate --time-scale K ...`, every node on this machine over
127.0.0.1 with shaped inter-node links), run right after the TCP cell so both see the same load.

K defaults to 200: over TCP at 16 ranks on this 2-core machine K = 50 put even GoogLeNet `ddp`'s
large buckets 2.4 times over the model, K = 200 within 8 % (docs/emulation.md, "Table 7 over
real TCP across emulated hosts").

usage: table7_across_hosts.py BUILD_DIR OUT_DIR [--time-scale 200] [--models resnet50,googlenet]
                              [--strategies all] [--shapes 2x4,4x4] [--iters 3] [--warmup 1]
                              [--burst 32kb] [--queue 64mb] [--inter-alpha] [--same-machine]
                              [--keep-scratch]
"""
import datetime
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from emulated_hosts import FIXTURE, argument_parser, hosts, parse_as_root

STRATEGIES = ["cntk", "mxnet", "tensorflow", "caffe-mpi", "horovod", "ddp", "best"]
PER_HOST = 4  # the paper's nodes: 4 GPUs each


def log(text):
    print(f"[{datetime.datetime.now():%H:%M:%S}] {text}", file=sys.stderr, flush=True)


def load_average():
    with open("/proc/loadavg") as file:
        return float(file.read().split()[0])


def clean_environment():
    """The caller's COLL_* variables would reach the local runs (the emulation's children)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("COLL_")}


def links(preset_shape):
    """{'intra': (alpha, beta), 'inter': (alpha, beta), 'staging': beta} of a COLL_SHAPE text."""
    parts = dict(item.split("=", 1) for item in preset_shape.split(","))
    pair = lambda text: tuple(float(x) for x in text.split(":"))
    return {"intra": pair(parts["intra"]), "inter": pair(parts["inter"]),
            "staging": float(parts.get("staging", "0"))}


def deepen_queues(run_id, count, rate, burst, limit):
    """hosts.sh gives tbf a 20 ms queue (latency 20ms); many flows converging on one host (a
    parameter server's fan-in) overflow it at these rates, and every drop costs TCP a
    retransmission timeout (200 ms real). InfiniBand's credit flow control loses nothing: give
    each tbf a queue of `limit` bytes instead (only on the run's own namespaces)."""
    for i in range(1, count + 1):
        for ns, dev in ((f"ch-{run_id}-{i}", "eth0"), (f"cbr-{run_id}", f"vh{i}")):
            subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", dev, "root",
                            "tbf", "rate", rate, "burst", burst, "limit", limit], check=True)


def retransmissions(run_id, count):
    """TCP segments the hosts retransmitted so far (each host namespace's own counters)."""
    total = 0
    for i in range(1, count + 1):
        text = subprocess.run(["ip", "netns", "exec", f"ch-{run_id}-{i}", "cat", "/proc/net/snmp"],
                              capture_output=True, text=True).stdout
        rows = [line.split()[1:] for line in text.splitlines() if line.startswith("Tcp:")]
        if len(rows) == 2:
            total += int(dict(zip(rows[0], rows[1]))["RetransSegs"])
    return total


def tc_stats(run_id, count):
    """Per host: bytes sent and dropped by its egress tbf (host's eth0) and ingress tbf (bridge
    port vhI)."""
    out = {}
    for i in range(1, count + 1):
        entry = {}
        for side, ns, dev in (("out", f"ch-{run_id}-{i}", "eth0"),
                              ("in", f"cbr-{run_id}", f"vh{i}")):
            text = subprocess.run(["ip", "netns", "exec", ns, "tc", "-s", "qdisc", "show", "dev",
                                   dev], capture_output=True, text=True).stdout
            sent = re.search(r"Sent (\d+) bytes (\d+) pkt \(dropped (\d+), overlimits (\d+)", text)
            if sent:
                entry[side] = {"bytes": int(sent.group(1)), "dropped": int(sent.group(3)),
                               "overlimits": int(sent.group(4))}
        out[i] = entry
    return out


def tc_delta(before, after):
    total = {"bytes_out": 0, "dropped": 0}
    for host, sides in after.items():
        for side, numbers in sides.items():
            old = before.get(host, {}).get(side, {"bytes": 0, "dropped": 0})
            if side == "out":
                total["bytes_out"] += numbers["bytes"] - old["bytes"]
            total["dropped"] += numbers["dropped"] - old["dropped"]
    return total


def virtual_cells(collbench, model, nodes, scratch, env):
    """Fresh virtual-clock emulation of one model's cells at one shape: {strategy: cell} (the
    table's own rows; closing-line extras on other tables are left out) and the preset's shape."""
    path = os.path.join(scratch, f"virtual_{model}_{nodes}x{PER_HOST}.json")
    command = [collbench, "--paper-tables", "--emulate", "--clock", "virtual", "--model-gradients",
               model, "--nodes", str(nodes), "--ranks-per-node", str(PER_HOST), "--json", path]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if not os.path.exists(path):
        sys.exit(f"table7_across_hosts: {' '.join(command)} failed:\n{done.stderr[-3000:]}")
    with open(path) as file:
        doc = json.load(file)
    cells = {}
    for cell in doc["cells"]:
        strategy = cell["modelled"]["strategy"]
        cells.setdefault(strategy, cell)  # the first row of a strategy is the table's own
    shown = ["collbench"] + command[1:-1] + [os.path.basename(path)]
    return cells, doc["shape"], " ".join(shown)


def same_machine_cell(collbench, model, strategy, nodes, k, iters, warmup, scratch, env):
    """The real-clock emulation's own cell (every node on this machine), as it prints it."""
    path = os.path.join(scratch, f"shaped_{model}_{strategy}_{nodes}x{PER_HOST}.json")
    command = [collbench, "--paper-tables", "--emulate", "--time-scale", f"{k:g}",
               "--model-gradients", model, "--strategy", strategy, "--nodes", str(nodes),
               "--ranks-per-node", str(PER_HOST), "--iters", str(iters), "--warmup_iters",
               str(warmup), "--json", path]
    started = time.time()
    subprocess.run(command, capture_output=True, text=True, env=env, timeout=3600)
    if not os.path.exists(path):
        return {"error": "no JSON", "seconds": time.time() - started}
    with open(path) as file:
        cell = json.load(file)["cells"][0]
    return {"comm_ms": cell["comm_ms"], "exposed_ms": cell["exposed_ms"],
            "iteration_ms": cell["iteration_ms"], "warning": cell["warning"],
            "error": cell["error"], "seconds": time.time() - started}


def tcp_cell(run_id, nodes, collbench, models_dir, modelled, shape, k, iters, warmup, scratch):
    """One cell across the emulated hosts: the emulation's child under mpirun, times / K."""
    model, strategy = modelled["model"], modelled["strategy"]
    path = os.path.join(scratch, f"tcp_{model}_{strategy}_{nodes}x{PER_HOST}.json")
    logfile = path[:-5] + ".log"
    if os.path.exists(path):
        os.remove(path)
    # bench/emulation.cc child_compute_scale: K x the cell's batch over the P40 profile's.
    p40_batch = {"alexnet": 1024, "googlenet": 128, "resnet50": 32}[model]
    compute_scale = k * modelled["batch_per_gpu"] / p40_batch
    arguments = [collbench, "--model-gradients", model, "--strategy", strategy, "--nodes",
                 str(nodes), "--ranks-per-node", str(PER_HOST), "--compute-profile", "p40",
                 "--compute-scale", f"{compute_scale:g}", "--iters", str(iters), "--warmup_iters",
                 str(warmup), "--models-dir", models_dir, "--json", path]
    if strategy == "best":  # `best` on the table it is compared on, as the emulation gives it
        arguments += ["--model-variant", modelled["variant"]]
    # UCX between hosts takes connections it cannot authenticate, so libcoll refuses it unless
    # told that only the job's hosts reach the network: here the bridge joins only them.
    environment = [("COLL_TRANSPORT", "shaped:ucx"), ("COLL_UCX_TRUST_NETWORK", "1"),
                   ("COLL_SHAPE", shape), ("COLL_COST_PRESET", "p40-ib56"),
                   ("COLL_CHECK_ARGS", "0")]
    command = [os.path.join(FIXTURE, "mpirun.sh"), run_id, "-np", str(nodes * PER_HOST),
               "--map-by", "slot"]
    for name, value in environment:
        command += ["-x", f"{name}={value}"]
    command += arguments
    started = time.time()
    with open(logfile, "w") as out:
        try:
            status = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT,
                                    timeout=3600).returncode
        except subprocess.TimeoutExpired:
            status = "timeout"
    seconds = time.time() - started
    if status != 0 or not os.path.exists(path):
        with open(logfile) as file:  # the first rank's error, not mpirun's banner after it
            lines = file.read().strip().splitlines()
        said = next((line for line in lines if line.startswith("collbench:")),
                    lines[-1] if lines else "no output")
        return {"error": f"exit {status}: {said}", "seconds": seconds,
                "command": " ".join(command)}
    with open(path) as file:
        doc = json.load(file)
    comm, exposed, backward = (doc[key] / k for key in
                               ("communication_ms", "exposed_ms", "backward_ms"))
    return {"comm_ms": comm, "exposed_ms": exposed, "backward_ms": backward,
            # bench/emulation.cc: forward is not replayed, the model's forward is taken
            "iteration_ms": modelled["forward_ms"] + backward + exposed,
            "error": "wrong results" if doc["wrong"] else "", "seconds": seconds,
            "command": " ".join(command)}


def small_message_alpha(run_id, collbench, scratch):
    """Real TCP's per-message cost between two of the emulated hosts (1 rank each, no shaping):
    an 8-byte ring all-reduce of 2 ranks is 2 messages in sequence."""
    path = os.path.join(scratch, "alpha.json")
    command = [os.path.join(FIXTURE, "mpirun.sh"), run_id, "-np", "2", "--map-by", "node",
               "-x", "COLL_CHECK_ARGS=0", collbench, "-b", "8", "-e", "8", "--algo", "ring",
               "-n", "2000", "-w", "200", "-c", "0", "--json", path]
    subprocess.run(command, capture_output=True, text=True, timeout=600)
    with open(path) as file:
        row = json.load(file)["results"][0]
    return row["out_of_place"]["time_us"] / 2


def percent(value, reference):
    if value is None or reference in (None, 0):
        return "-"
    return f"{(value - reference) / reference * 100:+.0f} %"


def ms(value):
    if value is None:
        return "-"
    return f"{value:.3g}" if value < 100 else f"{value:.0f}"


def markdown(report):
    k = report["time_scale"]
    lines = [
        "# The paper's Table 7 over real TCP across emulated hosts", "",
        f"Command: `{report['command']}`", "",
        f"Started {report['started']}, {report['minutes']:.0f} min; this machine: "
        f"{os.cpu_count()} cores; load average at each cell's start in the JSON "
        f"({report['load_min']:.1f}-{report['load_max']:.1f}).", "",
        f"- K = {k:g}; preset p40-ib56, inter-node beta {report['inter_beta']:.5g} s/B "
        f"({1 / report['inter_beta'] / 1e9:.3f} GB/s); tbf rate per host, out and in: "
        f"**{report['rate']}** ({report['rate_bytes'] / 1e6:.1f} MB/s), burst {report['burst']}, "
        f"queue {report['queue']}.",
        f"- COLL_SHAPE across hosts: `{report['tcp_shape']}` (inside a node as the emulation; "
        "between nodes " + ("the preset's alpha as work at both ends, bytes over TCP)"
                            if report["inter_alpha"] else "nothing: real TCP only)") + ".",
        f"- Real TCP's small-message cost between two hosts (8 B ring all-reduce of 2 ranks / 2): "
        f"{report['tcp_alpha_us']:.1f} us real, {report['tcp_alpha_us'] / k:.2f} us emulated "
        f"(the preset's inter-node alpha: {report['inter_alpha_s'] * 1e6:.1f} us).",
        f"- Virtual clock: `{report['virtual_commands'][0]}` (and the same per model and shape).",
        "- Times in ms of the emulated cluster (measured / K); deviation = (x - model) / model. "
        "comm: the largest sum of all-reduce durations over the ranks; exposed: after the "
        "slowest rank's backward; iteration: model's forward + measured backward + exposed.",
        ""]
    header = ("| model | strategy | GPUs | comm model | comm TCP | dev | comm virtual | dev |")
    rule = "|---|---|---|---|---|---|---|---|"
    if report["same_machine"]:
        header += " comm shaped | dev |"
        rule += "---|---|"
    header += (" exposed model | exposed TCP | dev | exposed virtual | dev |")
    rule += "---|---|---|---|---|"
    if report["same_machine"]:
        header += " exposed shaped | dev |"
        rule += "---|---|"
    header += (" iteration model / TCP / virtual | TCP MB out per host | drops / resent | load |"
               " real s |")
    rule += "---|---|---|---|---|"
    lines += [header, rule]
    for cell in report["cells"]:
        m, t, v = cell["modelled"], cell["tcp"], cell["virtual"]
        s = cell.get("same_machine") or {}
        per_host_mb = (cell["tc"]["bytes_out"] / m["nodes"] / 1e6 /
                       (report["iters"] + report["warmup"]))
        if t.get("error"):
            lines.append(f"| {m['model']} | {m['strategy']} | {m['gpus']} ({m['nodes']}x"
                         f"{m['ranks_per_node']}) | {ms(m['comm_ms'])} | failed: {t['error']} |")
            continue
        row = (f"| {m['model']} | {m['strategy']} | {m['gpus']} "
               f"({m['nodes']}x{m['ranks_per_node']})"
               f" | {ms(m['comm_ms'])} | {ms(t['comm_ms'])} | {percent(t['comm_ms'], m['comm_ms'])}"
               f" | {ms(v['comm_ms'])} | {percent(v['comm_ms'], m['comm_ms'])} |")
        if report["same_machine"]:
            row += f" {ms(s.get('comm_ms'))} | {percent(s.get('comm_ms'), m['comm_ms'])} |"
        row += (f" {ms(m['exposed_ms'])} | {ms(t['exposed_ms'])} | "
                f"{percent(t['exposed_ms'], m['exposed_ms'])} | {ms(v['exposed_ms'])} | "
                f"{percent(v['exposed_ms'], m['exposed_ms'])} |")
        if report["same_machine"]:
            row += (f" {ms(s.get('exposed_ms'))} | "
                    f"{percent(s.get('exposed_ms'), m['exposed_ms'])} |")
        row += (f" {ms(m['iteration_ms'])} / {ms(t['iteration_ms'])} / "
                f"{ms(v['iteration_ms'])} | {per_host_mb:.1f} | "
                f"{cell['tc']['dropped']} / {cell['tc'].get('retransmitted', '-')} | "
                f"{cell['load']:.1f} | {t['seconds']:.0f} |")
        lines.append(row)
    lines.append("")
    lines.append("TCP MB out per host: bytes through each host's egress tbf per iteration "
                 "(warm-up included in the count, divided by iterations + warm-up). "
                 "drops / resent: packets tbf dropped during the cell (out and in), TCP "
                 "segments the hosts retransmitted. Warnings of the virtual "
                 "clock" + (" and of the same-machine emulation" if report["same_machine"] else "")
                 + " are in table7.json.")
    return "\n".join(lines) + "\n"


def main():
    parser = argument_parser(__doc__)
    parser.add_argument("--time-scale", type=float, default=200)
    parser.add_argument("--models", default="resnet50,googlenet")
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--shapes", default="2x4,4x4", help="NODESx4 shapes")
    parser.add_argument("--iters", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--burst", default="32kb", help="tbf burst per host link")
    parser.add_argument("--queue", default="64mb",
                        help="tbf queue per host link, bytes (tc's limit; '20ms': hosts.sh's own)")
    parser.add_argument("--inter-alpha", action="store_true",
                        help="keep the preset's inter-node alpha (work at both ends) in COLL_SHAPE")
    parser.add_argument("--keep-scratch", action="store_true",
                        help="keep the scratch folder (the cells' logs and JSON; printed)")
    parser.add_argument("--same-machine", action="store_true",
                        help="also run the real-clock emulation's own cell after each TCP cell")
    args = parse_as_root(parser, "table7_across_hosts")
    started_at, started = datetime.datetime.now(), time.time()
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    # SIGTERM ends the run through the `finally`s below, so the hosts are torn down.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGINT, lambda *_: sys.exit(130))
    scratch = tempfile.mkdtemp(prefix="table7-")
    try:
        run(args, out, scratch, started_at, started)
    finally:
        if args.keep_scratch:
            log(f"scratch kept: {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


def run(args, out, scratch, started_at, started):
    env = clean_environment()
    # The installed tools, not the build tree (which others may rebuild during the run).
    prefix = os.path.join(scratch, "prefix")
    subprocess.run(["cmake", "--install", os.path.abspath(args.build), "--prefix", prefix],
                   check=True, stdout=subprocess.DEVNULL)
    collbench = os.path.join(prefix, "bin", "collbench")
    models_dir = os.path.join(prefix, "share", "coll", "models")
    k = args.time_scale
    models = args.models.split(",")
    strategies = args.strategies.split(",") if args.strategies != "all" else STRATEGIES
    shapes = [int(s.split("x")[0]) for s in args.shapes.split(",")]

    virtual, virtual_commands, preset_shape = {}, [], None
    for model in models:
        for nodes in shapes:
            log(f"virtual clock: {model} {nodes}x{PER_HOST}")
            cells, preset_shape, command = virtual_cells(collbench, model, nodes, scratch, env)
            virtual[(model, nodes)] = cells
            virtual_commands.append(command)
    preset = links(preset_shape)
    inter_alpha, inter_beta = preset["inter"]
    intra_alpha, intra_beta = preset["intra"]
    rate_bytes = 1 / inter_beta / k
    rate = f"{round(rate_bytes * 8 / 1000)}kbit"
    tcp_shape = (f"intra={intra_alpha:g}:{intra_beta:g},"
                 f"inter={inter_alpha if args.inter_alpha else 0:g}:0,"
                 f"staging={preset['staging']:g},scale={k:g}")
    log(f"preset inter-node: alpha {inter_alpha:g} s, beta {inter_beta:g} s/B "
        f"({1 / inter_beta / 1e9:.3f} GB/s); K = {k:g}: tbf rate {rate} "
        f"({rate_bytes / 1e6:.2f} MB/s) per host, out and in; COLL_SHAPE={tcp_shape}")

    report_cells, tcp_alpha_us, loads = [], None, []
    for nodes in shapes:
        run_id = f"t7{nodes}{os.getpid() % 10000}"
        hosts("up", run_id, str(nodes), "--rate", rate, "--rate-in", rate, "--burst", args.burst,
              "--slots", str(PER_HOST))
        try:
            if args.queue != "20ms":
                deepen_queues(run_id, nodes, rate, args.burst, args.queue)
            if tcp_alpha_us is None:
                tcp_alpha_us = small_message_alpha(run_id, collbench, scratch)
                log(f"real TCP small-message cost between two hosts: {tcp_alpha_us:.1f} us "
                    f"(emulated {tcp_alpha_us / k:.2f} us at K = {k:g})")
            for model in models:
                for strategy in strategies:
                    cell = virtual[(model, nodes)].get(strategy)
                    if cell is None:
                        continue
                    modelled = cell["modelled"]
                    load = load_average()
                    loads.append(load)
                    log(f"TCP: {model} {strategy} {nodes}x{PER_HOST} (load {load:.2f})")
                    before, resent = tc_stats(run_id, nodes), retransmissions(run_id, nodes)
                    tcp = tcp_cell(run_id, nodes, collbench, models_dir, modelled, tcp_shape, k,
                                   args.iters, args.warmup, scratch)
                    traffic = tc_delta(before, tc_stats(run_id, nodes))
                    traffic["retransmitted"] = retransmissions(run_id, nodes) - resent
                    entry = {"modelled": modelled, "tcp": tcp, "tc": traffic, "load": load,
                             "virtual": {key: cell[key] for key in
                                         ("comm_ms", "exposed_ms", "iteration_ms", "warning",
                                          "error")}}
                    log(f"  comm {tcp.get('comm_ms', 0):.3f} ms (model {modelled['comm_ms']:.3f},"
                        f" virtual {cell['comm_ms']:.3f}), exposed {tcp.get('exposed_ms', 0):.3f}"
                        f" (model {modelled['exposed_ms']:.3f}, virtual {cell['exposed_ms']:.3f})"
                        f", {traffic['dropped']} drops, {traffic['retransmitted']} retransmitted, "
                        f"{tcp['seconds']:.0f} s {tcp['error']}")
                    if args.same_machine:
                        entry["same_machine"] = same_machine_cell(
                            collbench, model, strategy, nodes, k, args.iters, args.warmup, scratch,
                            env)
                        sm = entry["same_machine"]
                        log(f"  same machine: comm {sm.get('comm_ms', 0):.3f} exposed "
                            f"{sm.get('exposed_ms', 0):.3f}, {sm['seconds']:.0f} s")
                    report_cells.append(entry)
        finally:
            hosts("down", run_id)

    command = "bench/multihost/table7_across_hosts.py " + " ".join(sys.argv[1:])
    report = {"command": command, "started": f"{started_at:%Y-%m-%d %H:%M}",
              "minutes": (time.time() - started) / 60, "time_scale": k,
              "iters": args.iters, "warmup": args.warmup, "preset_shape": preset_shape,
              "inter_alpha_s": inter_alpha, "inter_beta": inter_beta, "rate": rate,
              "rate_bytes": rate_bytes, "burst": args.burst, "queue": args.queue,
              "tcp_shape": tcp_shape,
              "inter_alpha": args.inter_alpha, "same_machine": args.same_machine,
              "tcp_alpha_us": tcp_alpha_us, "virtual_commands": virtual_commands,
              "load_min": min(loads) if loads else 0, "load_max": max(loads) if loads else 0,
              "cells": report_cells}
    with open(os.path.join(out, "table7.json"), "w") as file:
        json.dump(report, file, indent=1)
    text = markdown(report)
    with open(os.path.join(out, "README.md"), "w") as file:
        file.write(text)
    print(text, flush=True)  # before the exit line below, which goes to stderr
    failed = [cell for cell in report_cells if cell["tcp"]["error"]]
    if failed:
        sys.exit(f"table7_across_hosts: {len(failed)} of {len(report_cells)} cells failed")


if __name__ == "__main__":
    main()
