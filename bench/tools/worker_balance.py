#!/usr/bin/env python3
"""How evenly does a multi-worker server spread connections over its workers?

    python3 bench/tools/worker_balance.py                       # the engine's hello, 2 workers
    python3 bench/tools/worker_balance.py --connections 400 --rounds 20
    python3 bench/tools/worker_balance.py --server 'bench/.bin/vireo-reference --addr {addr} --workers 2'

Starts the server, then for each round opens `--connections` keep-alive connections at once
(as wrk does when it starts), sends one request on each, and counts how many sockets each
worker's epoll instance watches, from /proc/PID/fdinfo (an epoll descriptor lists every file it
watches as a `tfd:` line; a worker's runtime has one epoll instance, possibly under two
descriptors with the same watch list, counted once). Nothing in the server is instrumented, so the count is
exact and the measurement does not disturb the timing it measures. Prints, per round, the
connections each worker holds and, at the end, the median and worst share of the busiest worker
as JSON (0.5 is perfect balance for two workers).

Linux only; 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SERVER = str(ROOT / "target/release/examples/engine_hello") + " --addr {addr} --workers 2"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def watched_per_epoll(pid: int) -> dict[frozenset, int]:
    """Each epoll instance (the set of files it watches) -> how many files it watches."""
    counts: dict[frozenset, int] = {}
    fd_dir = Path(f"/proc/{pid}/fd")
    for fd in fd_dir.iterdir():
        try:
            if "eventpoll" not in os.readlink(fd):
                continue
            info = (Path(f"/proc/{pid}/fdinfo") / fd.name).read_text()
        except OSError:
            continue
        watched = frozenset(line.split()[1] for line in info.splitlines() if line.startswith("tfd:"))
        counts[watched] = len(watched)
    return counts


def open_connections(port: int, n: int) -> list[socket.socket]:
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        socks.append(s)
    request = b"GET / HTTP/1.1\r\nHost: balance\r\n\r\n"
    for s in socks:
        s.sendall(request)
    for s in socks:
        s.settimeout(5)
        if not s.recv(4096).startswith(b"HTTP/1.1 200"):
            raise RuntimeError("unexpected answer")
    return socks


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", default=DEFAULT_SERVER, help="command line; {addr} is replaced")
    p.add_argument("--connections", type=int, default=100)
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--workers", type=int, default=2,
                   help="how many of the busiest epoll instances to report (the server may run "
                        "others, such as a signal thread's)")
    args = p.parse_args(argv)

    port = free_port()
    cmd = shlex.split(args.server.format(addr=f"127.0.0.1:{port}"))
    server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    print("the server did not start", file=sys.stderr)
                    return 1
                time.sleep(0.05)
        time.sleep(0.3)  # let the probe connection close
        # Instances watching something before any client connects: the workers' (listener,
        # wake-up descriptor) and the signal thread's. Connections only ever add to them.
        baseline = sorted(watched_per_epoll(server.pid).items(), key=lambda kv: sorted(kv[0]))
        shares, rounds = [], []
        for _ in range(args.rounds):
            socks = open_connections(port, args.connections)
            now = watched_per_epoll(server.pid)
            held = []
            for before, count in baseline:
                grown = [n for watched, n in now.items() if before <= watched]
                held.append(max(grown, default=count) - count)
            held = sorted(held, reverse=True)[: args.workers]
            rounds.append(held)
            shares.append(held[0] / max(1, sum(held)))
            print(f"round {len(rounds)}: connections per worker {held}", file=sys.stderr)
            for s in socks:
                s.close()
            time.sleep(0.3)  # the server closes its ends
        print(json.dumps({
            "server": cmd,
            "connections": args.connections,
            "rounds": rounds,
            "busiest_share_median": round(statistics.median(shares), 3),
            "busiest_share_worst": round(max(shares), 3),
        }, indent=2))
    finally:
        server.terminate()
        try:
            server.wait(5)
        except subprocess.TimeoutExpired:
            server.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
