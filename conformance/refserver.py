"""Start and stop the reference app binary, and read its resource use from /proc.

The binary is `$VIREO_REFERENCE_BIN`, or `<repo>/target/release/examples/reference` (what
`cargo build --release -p vireo --example reference` produces, and what CI builds).

The server runs without `RUST_BACKTRACE`, whatever the caller's environment: with it, each panic
(the `/panic` route) symbolizes a backtrace, which costs the process about 36 MiB of RSS at the
first panic and milliseconds at each, and would blur every memory reading.
"""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_BIN = REPO / "target" / "release" / "examples" / "reference"
START_TIMEOUT = 10.0
LISTENING = re.compile(rb"listening on (\S+):(\d+)")


def reference_bin() -> str:
    return os.environ.get("VIREO_REFERENCE_BIN") or str(DEFAULT_BIN)


class RefServer:
    """A running reference server on 127.0.0.1 and a free port."""

    def __init__(self, workers: int | None = None, preexec_fn=None, binary: str | None = None,
                 port: int = 0, extra_args: list[str] | None = None):
        self.binary = binary or reference_bin()
        if not os.access(self.binary, os.X_OK):
            raise FileNotFoundError(
                f"reference binary not found at {self.binary}: build it with "
                "`cargo build --release -p vireo --example reference` or set VIREO_REFERENCE_BIN"
            )
        args = [self.binary, "--addr", f"127.0.0.1:{port}"]
        if workers:
            args += ["--workers", str(workers)]
        args += extra_args or []
        # stderr goes to a file, so a failure can show what the server said.
        self.stderr = tempfile.TemporaryFile()
        env = {k: v for k, v in os.environ.items() if k != "RUST_BACKTRACE"}
        self.proc = subprocess.Popen(
            args,
            env=env,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            stdin=subprocess.DEVNULL,
            preexec_fn=preexec_fn,
        )
        self.pid = self.proc.pid
        self.addr = self._wait_listening()

    def _wait_listening(self) -> tuple[str, int]:
        deadline = time.monotonic() + START_TIMEOUT
        out = b""
        fd = self.proc.stdout.fileno()
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            out += chunk
            m = LISTENING.search(out)
            if m:
                return (m.group(1).decode(), int(m.group(2)))
        self.kill()
        raise RuntimeError(f"reference server did not report its address; output: {out!r}")

    def stderr_tail(self, limit: int = 4000) -> str:
        """The end of what the server wrote to stderr, repeated lines collapsed."""
        self.stderr.flush()
        size = self.stderr.seek(0, os.SEEK_END)
        self.stderr.seek(max(0, size - 256 * 1024))
        lines: list[list] = []
        for line in self.stderr.read().decode("utf-8", "replace").splitlines():
            if lines and lines[-1][0] == line:
                lines[-1][1] += 1
            else:
                lines.append([line, 1])
        text = "\n".join(line if n == 1 else f"{line}  (x{n})" for line, n in lines)
        return text[-limit:]

    @property
    def url(self) -> str:
        return f"http://{self.addr[0]}:{self.addr[1]}"

    def alive(self) -> bool:
        return self.proc.poll() is None

    def rss_kib(self) -> int | None:
        return rss_kib(self.pid)

    def memory_kib(self) -> dict:
        return memory_kib(self.pid)

    def cpu_seconds(self) -> float | None:
        return cpu_seconds(self.pid)

    def fd_count(self) -> int | None:
        try:
            return len(os.listdir(f"/proc/{self.pid}/fd"))
        except OSError:
            return None

    def terminate(self) -> None:
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)

    def wait(self, timeout: float) -> int | None:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        if self.alive():
            self.proc.kill()
            self.proc.wait(5)

    def stop(self, timeout: float = 35.0) -> int | None:
        """Graceful stop: SIGTERM, wait up to `timeout`, then SIGKILL. Returns the exit status
        of the graceful stop, or None if it had to be killed."""
        self.terminate()
        code = self.wait(timeout)
        if code is None:
            self.kill()
        if self.proc.stdout:
            self.proc.stdout.close()
        return code

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def rss_kib(pid: int) -> int | None:
    """VmRSS of a process in KiB, from /proc/PID/status."""
    return memory_kib(pid).get("rss")


def memory_kib(pid: int) -> dict:
    """Resident memory of a process in KiB, from /proc/PID/status: all of it (`rss`, VmRSS),
    private memory (`anon`: heap, stacks) and mapped files (`file`: the binary's and the
    libraries' pages, faulted in as code runs for the first time). Empty if it is gone."""
    fields = {"VmRSS:": "rss", "RssAnon:": "anon", "RssFile:": "file"}
    found = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key = fields.get(line.split(maxsplit=1)[0]) if line.strip() else None
                if key:
                    found[key] = int(line.split()[1])
    except OSError:
        return {}
    return found


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process (all its threads), from /proc/PID/stat."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    # The command name is in parentheses and may contain spaces: split after the last ')'.
    fields = stat[stat.rindex(")") + 2 :].split()
    utime, stime = int(fields[11]), int(fields[12])
    return (utime + stime) / os.sysconf("SC_CLK_TCK")
