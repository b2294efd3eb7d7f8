#!/usr/bin/env python3
"""Cache lines a server touches per request at a fixed low rate, counted under valgrind's lackey.

    bench/tools/cache_lines_per_request.py BINARY [--marker SYMBOL] [--rate N] [--seconds S]
        [-- SERVER ARGS...]

At a low rate every request wakes the server from idle with cold caches, so what a request costs
there grows with how many distinct 64-byte lines of code and data it touches, not only with its
instructions. This runs BINARY under lackey, loads it with bench/tools/bin/fixedrate (50
keep-alive connections, `GET /`), and splits the trace at each execution of SYMBOL, a function
called once per request (default: the engine's `vireo_http::proto::head::parse_head`; for
may_minihttp, `httparse::parse_headers_iter_uninit`). It prints the median count of distinct
code and data lines per request over the second half of the requests (the first half warms up),
and with `--top N` the N functions of BINARY whose code lines are most of that.

BINARY takes `--addr HOST:PORT --workers 1` and any SERVER ARGS, as in
instructions_per_request.sh; a peer that takes its address otherwise gets `{port}` in its
SERVER ARGS (may_minihttp: `-- {port}`). Build Vireo with `--profile profiling` or `--release`:
the marker is found by name in the binary's symbol table.
"""
from __future__ import annotations

import argparse
import bisect
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIXEDRATE = Path(__file__).resolve().parent / "bin" / "fixedrate"
LINE = 64


def parse_args():
    argv = sys.argv[1:]
    server_args = []
    if "--" in argv:
        at = argv.index("--")
        argv, server_args = argv[:at], argv[at + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binary")
    ap.add_argument("--marker", default="vireo_http::proto::head::parse_head",
                    help="a function the server runs once per request (demangled name)")
    ap.add_argument("--rate", type=int, default=200, help="requests per second (default 200)")
    ap.add_argument("--seconds", type=int, default=3, help="seconds of load (default 3)")
    ap.add_argument("--top", type=int, default=0, metavar="N",
                    help="also list the N functions with the most code lines per request")
    a = ap.parse_args(argv)
    a.server_args = server_args
    return a


def functions(binary: str) -> list[tuple[int, str]]:
    """The binary's functions as (offset, demangled name), sorted by offset."""
    out = subprocess.run(["nm", "-C", binary], capture_output=True, text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[0] and parts[1] in "tTwW":
            found.append((int(parts[0], 16), parts[2]))
    return sorted(found)


def symbol_offset(symbols: list[tuple[int, str]], binary: str, name: str) -> int:
    for offset, symbol in symbols:
        if symbol == name:
            return offset
    sys.exit(f"no function named `{name}` in {binary}'s symbol table")


def load_base(pid: int, binary: str) -> int:
    """Where the client binary is mapped in the process valgrind runs (its first segment)."""
    target = os.path.realpath(binary)
    with open(f"/proc/{pid}/maps") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) >= 6 and fields[5] == target and int(fields[2], 16) == 0:
                return int(fields[0].split("-")[0], 16)
    sys.exit(f"{binary} is not mapped in process {pid}")


def wait_for_port(port: int, proc: subprocess.Popen) -> None:
    for _ in range(300):
        if proc.poll() is not None:
            sys.exit("the server exited before it listened")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"nothing listened on port {port}")


def lines_per_request(trace: Path, marker: int) -> list[tuple[dict[int, int], set[int]]]:
    """For each request, from one execution of `marker` to the next: the code lines touched
    (each with the first instruction address seen in it) and the data lines."""
    requests = []
    code = data = None
    with open(trace, "rb") as f:
        for record in f:
            # lackey writes "I  addr,size" for an instruction, " L/S/M addr,size" for data.
            if record.startswith(b"I "):
                addr = int(record[3:record.index(b",")], 16)
                if addr == marker:
                    if code is not None:
                        requests.append((code, data))
                    code, data = {}, set()
                if code is not None:
                    code.setdefault(addr // LINE, addr)
            elif record[:1] == b" " and code is not None and b"," in record:
                data.add(int(record[3:record.index(b",")], 16) // LINE)
    return requests


def by_function(requests, symbols, base: int, top: int) -> list[tuple[float, str]]:
    """The functions of the binary with the most code lines per request, on average."""
    starts = [base + offset for offset, _ in symbols]
    totals: dict[str, int] = {}
    for code, _ in requests:
        for addr in code.values():
            at = bisect.bisect_right(starts, addr) - 1
            name = symbols[at][1] if at >= 0 and addr - starts[at] < (1 << 20) else "(elsewhere)"
            totals[name] = totals.get(name, 0) + 1
    ranked = sorted(totals.items(), key=lambda item: -item[1])[:top]
    return [(count / len(requests), name) for name, count in ranked]


def main() -> None:
    a = parse_args()
    port = random.randint(20000, 39999)
    if any("{port}" in arg for arg in a.server_args):
        server_args = [arg.replace("{port}", str(port)) for arg in a.server_args]
    else:
        server_args = ["--addr", f"127.0.0.1:{port}", "--workers", "1", *a.server_args]
    symbols = functions(a.binary)
    offset = symbol_offset(symbols, a.binary, a.marker)
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace"
        proc = subprocess.Popen(
            ["valgrind", "--tool=lackey", "--trace-mem=yes", f"--log-file={trace}",
             a.binary, *server_args],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for_port(port, proc)
            base = load_base(proc.pid, a.binary)
            marker = base + offset
            subprocess.run([str(FIXEDRATE), "-url", f"http://127.0.0.1:{port}/", "-rate",
                            str(a.rate), "-conns", "50", "-duration", f"{a.seconds}s"],
                           stdout=subprocess.DEVNULL, check=True)
        finally:
            proc.terminate()
            proc.wait()
        requests = lines_per_request(trace, marker)
    if len(requests) < 10:
        sys.exit(f"only {len(requests)} requests passed `{a.marker}`: is it run once per request?")
    measured = requests[len(requests) // 2:]
    code = statistics.median(len(c) for c, _ in measured)
    data = statistics.median(len(d) for _, d in measured)
    print(f"requests={len(requests)} code_lines={code:.0f} data_lines={data:.0f} "
          f"all={code + data:.0f} (median per request over the last {len(measured)})")
    for lines, name in by_function(measured, symbols, base, a.top) if a.top else []:
        print(f"{lines:7.1f}  {name}")


if __name__ == "__main__":
    main()
