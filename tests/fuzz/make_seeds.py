#!/usr/bin/python3
"""Writes the store fuzzer's seed corpus (corpus/store/): valid request scripts in the input
format store_fuzzer.cc describes, so that fuzzing starts past the token check."""
import pathlib
import struct


def frame(op, key=b"", value=b""):
    body = op + struct.pack(">I", len(key)) + key + value
    return struct.pack(">I", len(body)) + body


def script(*steps):
    """steps: (connection, bytes) sends, cut into chunks of at most 64 bytes; ('bye', n) hangs up."""
    out = b""
    for connection, data in steps:
        if connection == "bye":
            out += bytes([3, data])
            continue
        for at in range(0, len(data), 64):
            chunk = data[at:at + 64]
            out += bytes([((len(chunk) - 1) << 2) | connection]) + chunk
    return out


def hello(rank):
    return frame(b"H", b"token", f"{rank}/3".encode())


seeds = {
    "set_get": script((0, hello(0) + frame(b"S", b"k", b"v") + frame(b"G", b"k"))),
    "wait_then_set": script((0, hello(0) + frame(b"G", b"addr/1")),
                            (1, hello(1) + frame(b"S", b"addr/1", b"x" * 100))),
    "add": script((0, hello(0) + frame(b"A", b"n", b"5") + frame(b"A", b"n", b"-9"))),
    "add_text": script((0, hello(0) + frame(b"S", b"t", b"abc") + frame(b"A", b"t", b"1"))),
    "taken_rank": script((0, hello(2)), (1, hello(2)), ("bye", 0), (2, hello(2))),
    "wrong_token": script((0, frame(b"H", b"tokem", b"0/3"))),
}
directory = pathlib.Path(__file__).parent / "corpus" / "store"
directory.mkdir(parents=True, exist_ok=True)
for name, data in seeds.items():
    (directory / name).write_bytes(data)
