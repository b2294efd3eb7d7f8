"""Start, watch and stop one peer server, and read its CPU time and memory
from /proc for the whole process tree (node, nginx and uvicorn may have
children)."""
from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .peers import CERT, Peer

SERVER_CORE = "1"   # servers run here; load generators on core 0
CLK_TCK = os.sysconf("SC_CLK_TCK")
# After its run a server counts as idle once it uses under SETTLE_BUSY of a core for
# SETTLE_WINDOW_S; one still busy after SETTLE_LIMIT_S is restarted.
SETTLE_WINDOW_S = 0.2
SETTLE_BUSY = 0.05
SETTLE_LIMIT_S = 15.0

_running: set = set()   # every Server started and not yet stopped


def stop_all() -> None:
    """Stop every server this process started (atexit, Ctrl-C, SIGTERM)."""
    for s in list(_running):
        s.stop()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stat(pid: int):
    """(ppid, utime + stime, utime), the times in ticks, from /proc/PID/stat, or None if
    gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may contain spaces.
    fields = raw[raw.rindex(")") + 2:].split()
    return int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[11])


def _thread_runtimes(pids: list) -> dict:
    """On-CPU nanoseconds of every live thread of these processes, keyed by
    (pid, tid), from /proc/PID/task/TID/schedstat."""
    runtimes = {}
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                text = Path(f"/proc/{pid}/task/{tid}/schedstat").read_text()
                runtimes[(pid, int(tid))] = int(text.split()[0])
            except (OSError, ValueError, IndexError):
                pass
    return runtimes


@dataclass
class CpuReading:
    ticks: int        # utime + stime of every process in the tree, dead threads included
    user_ticks: int   # utime alone
    processes: int
    threads: dict     # (pid, tid) -> on-CPU ns, live threads only


def tree(root: int) -> list:
    """PIDs of root and all its descendants."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _stat(int(entry))
            if st:
                children.setdefault(st[0], []).append(int(entry))
    pids, todo = [], [root]
    while todo:
        pid = todo.pop()
        pids.append(pid)
        todo.extend(children.get(pid, []))
    return pids


class Server:
    def __init__(self, peer: Peer, log_dir: Path, mode: str = "plain"):
        self.peer = peer
        self.mode = mode      # plain, h2c or tls: see peers.PROTOCOL_MODE
        self.log_path = log_dir / f"{peer.name}.log"
        self.proc = None
        self.tmp = None
        self.port = None
        self.loaded = False   # has it served any load since it started?

    def start(self, timeout: float = 60) -> None:
        self.port = free_port()
        self.tmp = Path(tempfile.mkdtemp(prefix=f"vireo-bench-{self.peer.name}-"))
        argv = ["taskset", "-c", SERVER_CORE] + self.peer.command(self.port, self.tmp, self.mode)
        with open(self.log_path, "a") as log:
            log.write(f"\n=== {time.strftime('%H:%M:%S')} ({self.mode}) {' '.join(argv)}\n")
            log.flush()
            # A session of its own: Ctrl-C in the terminal reaches the runner
            # only, and the runner stops the server, so it always knows the state.
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True,
                                         env=dict(os.environ, **self.peer.env))
        _running.add(self)
        self.loaded = False
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"exited with status {self.proc.returncode} (see {self.log_path})")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"did not accept on port {self.port} within {timeout:.0f}s")

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 5 s; then SIGKILL any children it left."""
        if self.proc is None:
            return
        children = tree(self.proc.pid)[1:] if self.proc.poll() is None else []
        try:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for pid in children:   # e.g. an nginx worker whose master was killed
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc = None
        _running.discard(self)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def restart(self) -> None:
        self.stop()
        self.start()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def cpu_reading(self) -> CpuReading:
        """The CPU time of the whole process tree so far, two ways."""
        pids = tree(self.proc.pid)
        stats = [_stat(pid) or (0, 0, 0) for pid in pids]
        return CpuReading(sum(s[1] for s in stats), sum(s[2] for s in stats), len(pids),
                          _thread_runtimes(pids))

    def cpu_since(self, before: CpuReading) -> tuple:
        """(CPU seconds used since `before`, how it was counted, the user-space part of it).

        The kernel keeps each thread's on-CPU time in nanoseconds (schedstat),
        but /proc/PID/stat reports it in 10 ms ticks: at 1,000 req/s a few
        seconds of load use ~100 ms of CPU, so ticks alone would be good to
        ±10 %. The thread sum is used when it can be trusted: no thread seen
        before has ended, and it agrees with the tick count within the ticks'
        own resolution (one tick per process either side). A thread that
        started and ended between the readings shows only in the ticks, which
        are then used. The user-space part (the server's own code, without its
        system calls) is in ticks only: the kernel keeps no finer split."""
        after = self.cpu_reading()
        ticks_s = (after.ticks - before.ticks) / CLK_TCK
        user_s = (after.user_ticks - before.user_ticks) / CLK_TCK
        if before.threads.keys() <= after.threads.keys():
            precise_s = (sum(after.threads.values()) - sum(before.threads.values())) / 1e9
            slack_s = (before.processes + after.processes) / CLK_TCK
            if abs(precise_s - ticks_s) <= slack_s:
                return precise_s, "schedstat", user_s
        return ticks_s, "ticks", user_s

    def settle(self, window: float = SETTLE_WINDOW_S, busy: float = SETTLE_BUSY,
               limit: float = SETTLE_LIMIT_S) -> bool:
        """Wait until the server is idle: a `window` of seconds in which it used under `busy`
        of a core. Servers share one core, so one still working after its run (closing
        connections, draining a queue) would take CPU from the next server measured. False if
        it was still busy after `limit` seconds."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if not self.alive():
                return True
            before = self.cpu_reading()
            time.sleep(window)
            if not self.alive() or self.cpu_since(before)[0] < busy * window:
                return True
        return False

    def rss_kib(self) -> int:
        total = 0
        for pid in tree(self.proc.pid):
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
            except OSError:
                pass
        return total

    @property
    def scheme(self) -> str:
        return "https" if self.mode == "tls" else "http"

    def url(self, path: str) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}{path}"

    def check(self, route: str) -> str | None:
        """GET the route once, in the server's mode, and compare status and body with
        what every peer must answer. Returns a description of the mismatch, or None.
        A WebSocket route is checked by its client, when a scenario loads it."""
        path, status, body = self.peer.route(route)
        if status == 101:
            return None
        try:
            got_status, got = self._get(path)
        except (OSError, http.client.HTTPException, subprocess.SubprocessError, ValueError) as e:
            return f"GET {path}: {e}"
        same = got == body
        if route == "json" and not same:
            try:
                same = json.loads(got) == json.loads(body)
            except ValueError:
                pass
        if got_status != status or not same:
            return f"GET {path}: got {got_status} {got[:60]!r}, want {status} {body!r}"
        return None

    def _get(self, path: str) -> tuple:
        """(status, body) of one GET: HTTP/1.1, over TLS (verified against the bench
        certificate) in tls mode, and HTTP/2 with prior knowledge (by curl) in h2c mode,
        where a peer may speak nothing else."""
        if self.mode == "h2c":
            res = subprocess.run(["curl", "-sS", "--max-time", "5", "--http2-prior-knowledge",
                                  "-w", "\n%{http_code}", self.url(path)],
                                 capture_output=True, text=True, timeout=10)
            if res.returncode != 0:
                raise OSError(res.stderr.strip() or f"curl exited {res.returncode}")
            got, _, code = res.stdout.rpartition("\n")
            return int(code), got
        if self.mode == "tls":
            conn = http.client.HTTPSConnection(
                "127.0.0.1", self.port, timeout=5, context=ssl.create_default_context(cafile=CERT))
        else:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
        try:
            conn.request("GET", path)
            res = conn.getresponse()
            return res.status, res.read().decode("utf-8", "replace")
        finally:
            conn.close()
