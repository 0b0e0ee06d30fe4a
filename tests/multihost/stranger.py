#!/usr/bin/env python3
"""stranger.py ADDRESS:PORT [--case CASE]... : a process that is not part of a libcoll job
connects to one of a rank's listening ports and misbehaves, then measures how long the server
takes to close each connection.

Cases (all by default):
  idle            connects and sends nothing
  garbage         256 random bytes
  huge-length     a frame header announcing 2^62 bytes (SocketLinks' header: u64 tag, u64
                  length; its first 4 bytes also read as a store frame's u32 length 0xFFFFFFF0)
  wrong-proof     a well-formed hello (socket_rendezvous.cc: u32 from, u32 to, 16-byte nonce,
                  32-byte HMAC-SHA-256) claiming rank 0 linking to rank 1, the digest under a
                  made-up key over the challenge it was sent
  wrong-rank      the same, claiming a rank the job does not have (7 -> 1)
  duplicate-rank  the same shape claiming rank 0 twice, on two connections at once
  replay          the hello bytes of a first connection replayed on a second one
  idle-500        500 connections at once that send nothing
  slow            a hello trickled one byte every 100 ms

Without the job's secret no stranger can make a proof that passes, so the acceptor refuses the
greeting cases at the digest, before it looks at the rank (socket_rendezvous.cc, examine()); a
replayed hello of a real rank would fail the same way, since its digest covers the nonce of the
connection it was recorded on, and what is replayed here is what the first connection sent. The
greetings are still built to the byte as a rank builds them, so that a check that ever moved
before the digest, or a listener that took a bare rank number, would be exercised.

For each connection the outcome is one of: refused (the kernel answered the connect with a reset:
nothing listens there), closed (end of stream or reset, after how long since the connect ended),
open (still open when the limit ran out). One JSON object per case goes to stdout:
  {"case", "target", "connections", "refused", "closed", "open", "max_close_s", "median_close_s",
   "challenge"}
(challenge: how many connections received libcoll's challenge, "collink1" + nonce). Exit 1 when a
connection stayed open past --limit (default 1.5 s: libcoll's 1 s handshake deadline plus its
100 ms poll and scheduling on a busy machine), 2 on a usage error.
"""

import argparse
import errno
import hashlib
import hmac
import json
import os
import selectors
import socket
import statistics
import struct
import sys
import time

MAGIC = b"collink1"
CHALLENGE_BYTES = len(MAGIC) + 16
CASES = ["idle", "garbage", "huge-length", "wrong-proof", "wrong-rank", "duplicate-rank",
         "replay", "idle-500", "slow"]


class Connection:
    """One stranger's connection and what became of it."""

    def __init__(self, target, bind_ip):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if bind_ip:
            self.sock.bind((bind_ip, 0))
        self.sock.setblocking(False)
        self.received = b""
        self.started = time.monotonic()
        self.connected_at = None
        self.outcome = None  # "refused", "closed" or "open"
        self.close_s = None  # from the connect's end to the close
        code = self.sock.connect_ex(target)
        if code not in (0, errno.EINPROGRESS):
            self._finish("refused" if code == errno.ECONNREFUSED else "closed")

    def _finish(self, outcome):
        now = time.monotonic()
        self.outcome = outcome
        self.close_s = now - (self.connected_at or self.started)
        self.sock.close()

    @property
    def done(self):
        return self.outcome is not None

    def on_writable(self):
        """The connect finished: either it failed or the connection is up."""
        code = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if code == 0:
            self.connected_at = self.connected_at or time.monotonic()
        elif code == errno.ECONNREFUSED:
            self._finish("refused")
        else:
            self._finish("closed")

    def on_readable(self):
        try:
            data = self.sock.recv(4096)
        except (ConnectionResetError, ConnectionAbortedError):
            data = b""
        except ConnectionRefusedError:
            return self._finish("refused")
        except BlockingIOError:
            return
        if not data:
            return self._finish("closed")
        self.received += data[: 4096 - len(self.received)]

    def send(self, data):
        """Best effort: a closed connection shows up as a read of end of stream."""
        if self.done:
            return
        try:
            self.sock.send(data)
        except BlockingIOError:
            pass
        except OSError:
            self._finish("closed")

    def challenge(self):
        """The acceptor's nonce when libcoll's challenge arrived, else None."""
        if len(self.received) >= CHALLENGE_BYTES and self.received.startswith(MAGIC):
            return self.received[len(MAGIC):CHALLENGE_BYTES]
        return None


def pump(connections, until, stop_when_connected=False):
    """Waits for events on the connections until `until` (monotonic), or until each is connected
    (or done) when stop_when_connected, or until every one is done."""
    selector = selectors.DefaultSelector()
    for c in connections:
        if not c.done:
            events = selectors.EVENT_READ | (0 if c.connected_at else selectors.EVENT_WRITE)
            selector.register(c.sock, events, c)
    try:
        while True:
            live = [c for c in connections if not c.done]
            if not live:
                return
            if stop_when_connected and all(c.connected_at for c in live):
                return
            left = until - time.monotonic()
            if left <= 0:
                return
            for key, mask in selector.select(min(left, 0.05)):
                c = key.data
                if c.done:
                    continue
                if mask & selectors.EVENT_WRITE and not c.connected_at:
                    c.on_writable()
                    if not c.done:
                        selector.modify(c.sock, selectors.EVENT_READ, c)
                if not c.done and mask & selectors.EVENT_READ and c.connected_at:
                    c.on_readable()
                if c.done:
                    selector.unregister(c.sock)
    finally:
        selector.close()


def hello(nonce, sender, receiver, key=b"not the job's secret"):
    """A hello as socket_rendezvous.cc builds it: u32 from, u32 to (little-endian), the
    connector's nonce, HMAC-SHA-256 over ("hello", from, to, acceptor nonce, connector nonce)."""
    mine = os.urandom(16)
    ranks = struct.pack("<II", sender, receiver)
    digest = hmac.new(key, b"hello" + ranks + (nonce or bytes(16)) + mine, hashlib.sha256)
    return ranks + mine + digest.digest()


def open_connections(target, bind_ip, count, deadline):
    connections = [Connection(target, bind_ip) for _ in range(count)]
    # Until connected (or refused), and long enough for a challenge to come.
    pump(connections, deadline, stop_when_connected=True)
    pump(connections, min(deadline, time.monotonic() + 0.05))
    return connections


def run_case(case, target, bind_ip, limit):
    deadline = time.monotonic() + limit
    if case == "idle-500":
        connections = open_connections(target, bind_ip, 500, deadline)
    elif case == "duplicate-rank":
        connections = open_connections(target, bind_ip, 2, deadline)
        for c in connections:
            c.send(hello(c.challenge(), 0, 1))
    elif case == "replay":
        first = open_connections(target, bind_ip, 1, deadline)
        recorded = hello(first[0].challenge(), 0, 1)
        first[0].send(recorded)
        second = open_connections(target, bind_ip, 1, deadline)
        second[0].send(recorded)
        connections = first + second
    else:
        connections = open_connections(target, bind_ip, 1, deadline)
        c = connections[0]
        if case == "garbage":
            c.send(os.urandom(256))
        elif case == "huge-length":
            c.send(struct.pack("<QQ", 0xFFFFFFF0, 1 << 62))
        elif case == "wrong-proof":
            c.send(hello(c.challenge(), 0, 1))
        elif case == "wrong-rank":
            c.send(hello(c.challenge(), 7, 1))
        elif case == "slow":
            greeting = hello(c.challenge(), 0, 1)
            for byte in greeting:
                if c.done or time.monotonic() >= deadline:
                    break
                c.send(bytes([byte]))
                pump(connections, min(deadline, time.monotonic() + 0.1))
    pump(connections, deadline)
    for c in connections:
        if not c.done:
            c.outcome = "open"
            c.close_s = time.monotonic() - (c.connected_at or c.started)
            c.sock.close()
    closes = [c.close_s for c in connections if c.outcome == "closed"]
    return {
        "case": case,
        "target": f"{target[0]}:{target[1]}",
        "connections": len(connections),
        "refused": sum(c.outcome == "refused" for c in connections),
        "closed": len(closes),
        "open": sum(c.outcome == "open" for c in connections),
        "max_close_s": round(max(closes), 3) if closes else None,
        "median_close_s": round(statistics.median(closes), 3) if closes else None,
        "challenge": sum(c.challenge() is not None for c in connections),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", help="ADDRESS:PORT of a rank's listener")
    parser.add_argument("--case", action="append", choices=CASES,
                        help="a case to run (repeatable; default: every case)")
    parser.add_argument("--limit", type=float, default=1.5,
                        help="seconds a connection may stay open (default 1.5)")
    parser.add_argument("--bind", help="connect from this local address")
    args = parser.parse_args()
    host, _, port = args.target.rpartition(":")
    if not host or not port.isdigit():
        parser.error(f"expected ADDRESS:PORT, got {args.target!r}")
    target = (host, int(port))
    failed = False
    for case in args.case or CASES:
        result = run_case(case, target, args.bind, args.limit)
        failed |= result["open"] > 0
        print(json.dumps(result), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
