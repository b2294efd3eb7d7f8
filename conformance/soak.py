#!/usr/bin/env python3
"""Soak the reference app with a mixed keep-alive load and check every answer.

    python3 conformance/soak.py --requests 200000 --seconds 60 --connections 50
    python3 conformance/soak.py --requests 100000 --seconds 30 --sigterm-after 5
    python3 conformance/soak.py --url http://127.0.0.1:8080 --seconds 10

`--connections` keep-alive connections (asyncio streams) each send one request at a time, mixed:
plaintext `/`, `/echo` with random binary bodies (Content-Length or chunked, checked byte for
byte), `/users/<random id>` (checked), `/panic` (expects 500 and a close, then reconnects),
blocking `/sleep?ms=5`, `/stream?chunks=N` (checked), and short pipelines of small requests. The
run stops at `--requests` requests sent or `--seconds` seconds, whichever comes first.

It counts every request sent and every response verified, and prints a JSON summary: sent,
verified, failures by kind, requests per second, and the server's RSS over time (from
/proc/PID/status, when it started the server itself).

`--sigterm-after S` keeps the load up, sends SIGTERM to the server after S seconds, and checks the
graceful shutdown: every request fully sent before the signal got a complete, correct response or
a clean close with no byte of a response (never a partial one); connections opened after the
signal are refused; the server exits with status 0 within the shutdown bound (30 s).

The server is the reference binary (`$VIREO_REFERENCE_BIN`, default
`<repo>/target/release/examples/reference`), started on a free port, unless `--url` is given.
The exit status is 0 when nothing was lost or failed.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import json
import random
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

from refserver import RefServer, rss_kib  # noqa: E402

RESPONSE_TIMEOUT = 15.0
CONNECT_TIMEOUT = 5.0
SHUTDOWN_BOUND = 30.0
# Connections attempted this long after SIGTERM must be refused; earlier ones may still have
# reached the listener before it closed.
REFUSE_GRACE = 1.0
MAX_EXAMPLES = 20
# Failure kinds that are not about one request.
NOT_REQUESTS = {"connect", "send", "shutdown", "shutdown_exit"}

# name, weight
MIX = [
    ("plaintext", 30),
    ("echo", 20),
    ("users", 20),
    ("sleep", 8),
    ("stream", 10),
    ("pipeline", 10),
    ("panic", 2),
]


class NoResponse(Exception):
    """The connection ended cleanly before any byte of the response."""


class PartialResponse(Exception):
    """The connection ended in the middle of a response."""


class WrongResponse(Exception):
    """A complete response that is not the right one."""


@dataclass
class Resp:
    status: int
    headers: dict[str, str]
    body: bytes

    def asks_close(self) -> bool:
        return "close" in [t.strip().lower() for t in self.headers.get("connection", "").split(",")]


@dataclass
class Request:
    kind: str
    data: bytes
    check: object  # callable(Resp) -> None, raising WrongResponse
    closes: bool = False  # the server must close after answering it


@dataclass
class Stats:
    sent: int = 0
    verified: int = 0
    failed: Counter = field(default_factory=Counter)
    closed_unanswered: Counter = field(default_factory=Counter)
    sent_by_kind: Counter = field(default_factory=Counter)
    verified_by_kind: Counter = field(default_factory=Counter)
    connects: int = 0
    examples: list = field(default_factory=list)
    # graceful shutdown bookkeeping
    sent_before_signal_unanswered: int = 0
    post_signal_connects: Counter = field(default_factory=Counter)

    def fail(self, kind: str, message: str) -> None:
        self.failed[kind] += 1
        if len(self.examples) < MAX_EXAMPLES:
            self.examples.append(f"{kind}: {message}")


# ------------------------------------------------------------------------------ HTTP parsing


async def read_response(reader: asyncio.StreamReader, head_request: bool = False) -> Resp:
    """Read one response. NoResponse if the connection ends before its first byte,
    PartialResponse if it ends inside it."""
    try:
        line = await reader.readuntil(b"\r\n")
    except asyncio.IncompleteReadError as e:
        if not e.partial:
            raise NoResponse() from None
        raise PartialResponse(f"ended inside the status line: {e.partial[:80]!r}") from None
    except (ConnectionResetError, BrokenPipeError):
        raise NoResponse() from None
    try:
        parts = line.split(b" ", 2)
        if not parts[0].startswith(b"HTTP/1.") or len(parts) < 2:
            raise WrongResponse(f"bad status line {line[:80]!r}")
        status = int(parts[1])
        headers: dict[str, str] = {}
        while True:
            line = await reader.readuntil(b"\r\n")
            if line == b"\r\n":
                break
            name, _, value = line.partition(b":")
            headers[name.decode("latin-1").lower()] = value.strip().decode("latin-1")
        if head_request or status in (204, 304) or 100 <= status < 200:
            body = b""
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            parts_ = []
            while True:
                size_line = await reader.readuntil(b"\r\n")
                size = int(size_line.split(b";")[0], 16)
                if size == 0:
                    while await reader.readuntil(b"\r\n") != b"\r\n":
                        pass
                    break
                parts_.append(await reader.readexactly(size))
                if await reader.readexactly(2) != b"\r\n":
                    raise WrongResponse("chunk not followed by CRLF")
            body = b"".join(parts_)
        elif "content-length" in headers:
            body = await reader.readexactly(int(headers["content-length"]))
        else:
            body = await reader.read()  # until close
    except asyncio.IncompleteReadError:
        raise PartialResponse(f"ended inside a response (status line {line[:60]!r})") from None
    except (ConnectionResetError, BrokenPipeError):
        raise PartialResponse("reset inside a response") from None
    except ValueError as e:
        raise WrongResponse(f"unparseable response: {e}") from None
    return Resp(status, headers, body)


# --------------------------------------------------------------------------- the request mix

ID_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"


def expect(status: int, body: bytes | None = None, header: tuple[str, str] | None = None):
    def check(resp: Resp) -> None:
        if resp.status != status:
            raise WrongResponse(f"status {resp.status}, expected {status}; body {resp.body[:80]!r}")
        if body is not None and resp.body != body:
            raise WrongResponse(
                f"body of {len(resp.body)} bytes differs from the {len(body)} expected "
                f"(first bytes {resp.body[:40]!r} vs {body[:40]!r})"
            )
        if header is not None and resp.headers.get(header[0], "").lower() != header[1]:
            raise WrongResponse(f"header {header[0]}: {resp.headers.get(header[0])!r}, expected {header[1]!r}")

    return check


def echo_body_size(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.70:
        return rng.randint(0, 1024)
    if r < 0.95:
        return rng.randint(1024, 32 * 1024)
    return rng.randint(32 * 1024, 256 * 1024)


def chunk_encode(body: bytes, rng: random.Random) -> bytes:
    out, i = [], 0
    while i < len(body):
        n = min(len(body) - i, rng.randint(1, 16 * 1024))
        out.append(b"%x\r\n" % n + body[i : i + n] + b"\r\n")
        i += n
    out.append(b"0\r\n\r\n")
    return b"".join(out)


def simple_request(rng: random.Random) -> Request:
    """A small GET that can be pipelined."""
    if rng.random() < 0.5:
        return Request("plaintext", b"GET / HTTP/1.1\r\nHost: soak\r\n\r\n", expect(200, b"Hello, World!"))
    uid = "".join(rng.choice(ID_CHARS) for _ in range(rng.randint(1, 24)))
    return Request(
        "users", f"GET /users/{uid} HTTP/1.1\r\nHost: soak\r\n\r\n".encode(), expect(200, f"User: {uid}".encode())
    )


def make_requests(kind: str, rng: random.Random) -> list[Request]:
    if kind == "plaintext":
        return [Request(kind, b"GET / HTTP/1.1\r\nHost: soak\r\n\r\n", expect(200, b"Hello, World!"))]
    if kind == "users":
        uid = "".join(rng.choice(ID_CHARS) for _ in range(rng.randint(1, 24)))
        return [
            Request(kind, f"GET /users/{uid} HTTP/1.1\r\nHost: soak\r\n\r\n".encode(), expect(200, f"User: {uid}".encode()))
        ]
    if kind == "echo":
        body = rng.randbytes(echo_body_size(rng))
        if rng.random() < 0.25:
            head = b"POST /echo HTTP/1.1\r\nHost: soak\r\nTransfer-Encoding: chunked\r\n\r\n"
            data = head + chunk_encode(body, rng)
        else:
            head = b"POST /echo HTTP/1.1\r\nHost: soak\r\nContent-Length: %d\r\n\r\n" % len(body)
            data = head + body
        return [Request(kind, data, expect(200, body, ("content-type", "application/octet-stream")))]
    if kind == "sleep":
        return [Request(kind, b"GET /sleep?ms=5 HTTP/1.1\r\nHost: soak\r\n\r\n", expect(200, b"slept 5"))]
    if kind == "stream":
        n = rng.randint(0, 300)
        body = "".join(f"chunk {k}\n" for k in range(n)).encode()
        return [
            Request(
                kind,
                f"GET /stream?chunks={n} HTTP/1.1\r\nHost: soak\r\n\r\n".encode(),
                expect(200, body, ("transfer-encoding", "chunked")),
            )
        ]
    if kind == "panic":
        return [Request(kind, b"GET /panic HTTP/1.1\r\nHost: soak\r\n\r\n", expect(500), closes=True)]
    if kind == "pipeline":
        reqs = [simple_request(rng) for _ in range(rng.randint(2, 6))]
        for r in reqs:
            r.kind = "pipeline"
        return reqs
    raise ValueError(kind)


# ------------------------------------------------------------------------------- the soak


class Soak:
    def __init__(self, host: str, port: int, *, requests: int, seconds: float, connections: int,
                 seed: int, sigterm_after: float | None, server: RefServer | None,
                 rss_interval: float, mix: dict[str, int] | None = None):
        self.host, self.port = host, port
        self.budget = requests
        self.seconds = seconds
        self.connections = connections
        self.rng = random.Random(seed)
        self.sigterm_after = sigterm_after
        self.server = server
        self.rss_interval = rss_interval
        self.stats = Stats()
        mix = mix or dict(MIX)
        self.kinds = [k for k, w in mix.items() if w > 0]
        self.weights = [mix[k] for k in self.kinds]
        self.signal_at: float | None = None  # monotonic time SIGTERM was sent
        self.exit_status = None
        self.exit_after: float | None = None
        self.rss: list[tuple[float, int]] = []
        self.start = 0.0
        self.stopping = False

    def over(self) -> bool:
        if time.monotonic() - self.start >= self.seconds or self.budget <= 0:
            self.stopping = True
        return self.stopping

    def take(self, n: int) -> int:
        """Take up to n requests from the budget; 0 when the run is over."""
        if self.over():
            return 0
        n = min(n, self.budget)
        self.budget -= n
        return n

    async def connect(self):
        self.stats.connects += 1
        attempted = time.monotonic()
        try:
            conn = await asyncio.wait_for(asyncio.open_connection(self.host, self.port), CONNECT_TIMEOUT)
        except (ConnectionRefusedError, OSError, asyncio.TimeoutError) as e:
            if self.signal_at is not None:
                refused = isinstance(e, ConnectionRefusedError) or getattr(e, "errno", None) == errno.ECONNREFUSED
                self.stats.post_signal_connects["refused" if refused else f"error {type(e).__name__}"] += 1
                return None
            self.stats.fail("connect", repr(e))
            return None
        if self.signal_at is not None:
            late = attempted - self.signal_at >= REFUSE_GRACE
            self.stats.post_signal_connects["accepted_after_grace" if late else "accepted_in_grace"] += 1
            if late:
                self.stats.fail("shutdown", "a connection attempted after SIGTERM was accepted")
        return conn

    async def connection_task(self, idx: int) -> None:
        rng = random.Random(self.rng.getrandbits(64))
        conn = None
        while True:
            if conn is None:
                if self.signal_at is not None and self.server is not None and not self.server.alive():
                    return
                conn = await self.connect()
                if conn is None:
                    if self.signal_at is not None:
                        return  # refused after the signal: this connection's work is done
                    await asyncio.sleep(0.1)
                    if self.over():
                        return
                    continue
            kind = rng.choices(self.kinds, self.weights)[0]
            reqs = make_requests(kind, rng)
            n = self.take(len(reqs))
            if n == 0:
                conn[1].close()
                return
            reqs = reqs[:n]
            keep = await self.exchange(conn, reqs)
            if not keep:
                conn[1].close()
                try:
                    await conn[1].wait_closed()
                except Exception:
                    pass
                conn = None

    async def exchange(self, conn, reqs: list[Request]) -> bool:
        """Send the requests (one write) and check every answer. False if the connection is done."""
        reader, writer = conn
        st = self.stats
        try:
            writer.write(b"".join(r.data for r in reqs))
            await writer.drain()
        except (ConnectionResetError, BrokenPipeError) as e:
            # The server closed before or while we wrote: none of these was fully sent.
            if self.signal_at is None:
                st.fail("send", repr(e))
            return False
        before_signal = self.signal_at is None
        for r in reqs:
            st.sent += 1
            st.sent_by_kind[r.kind] += 1
        for i, r in enumerate(reqs):
            try:
                resp = await asyncio.wait_for(read_response(reader), RESPONSE_TIMEOUT)
            except NoResponse:
                for rest in reqs[i:]:
                    st.closed_unanswered[rest.kind] += 1
                if self.signal_at is None and len(st.examples) < MAX_EXAMPLES:
                    st.examples.append(f"{r.kind}: the server closed without answering")
                if before_signal and self.signal_at is not None:
                    st.sent_before_signal_unanswered += len(reqs) - i
                return False
            except PartialResponse as e:
                st.fail("partial", f"{r.kind}: {e}")
                return False
            except asyncio.TimeoutError:
                st.fail("timeout", f"{r.kind}: no complete answer in {RESPONSE_TIMEOUT} s")
                return False
            except WrongResponse as e:
                st.fail(r.kind, str(e))
                return False
            try:
                r.check(resp)
            except WrongResponse as e:
                st.fail(r.kind, str(e))
                return False
            if r.closes:
                if not resp.asks_close():
                    st.fail(r.kind, "the answer did not say Connection: close")
                try:
                    rest = await asyncio.wait_for(reader.read(1), 5)
                except (ConnectionResetError, BrokenPipeError):
                    rest = b""
                except asyncio.TimeoutError:
                    st.fail(r.kind, "the connection stayed open after the 500")
                    return False
                if rest:
                    st.fail(r.kind, f"bytes after the final answer: {rest!r}")
                    return False
                st.verified += 1
                st.verified_by_kind[r.kind] += 1
                return False
            st.verified += 1
            st.verified_by_kind[r.kind] += 1
            if resp.asks_close():
                # Shutting down (or told to close): the rest of a pipeline is not answered.
                if self.signal_at is None:
                    st.fail("unexpected_close", f"{r.kind}: Connection: close while not shutting down")
                for rest in reqs[i + 1 :]:
                    st.closed_unanswered[rest.kind] += 1
                    if before_signal and self.signal_at is not None:
                        st.sent_before_signal_unanswered += 1
                return False
        return True

    async def sample_rss(self) -> None:
        if self.server is None:
            return
        while True:
            kib = rss_kib(self.server.pid)
            if kib is None:
                return
            self.rss.append((round(time.monotonic() - self.start, 2), kib))
            await asyncio.sleep(self.rss_interval)

    async def signal_later(self) -> None:
        await asyncio.sleep(self.sigterm_after)
        self.signal_at = time.monotonic()
        self.server.terminate()
        loop = asyncio.get_running_loop()
        status = await loop.run_in_executor(None, self.server.wait, SHUTDOWN_BOUND + 5)
        self.exit_after = time.monotonic() - self.signal_at
        self.exit_status = status

    async def run(self) -> dict:
        self.start = time.monotonic()
        sampler = asyncio.ensure_future(self.sample_rss())
        signaller = asyncio.ensure_future(self.signal_later()) if self.sigterm_after is not None else None
        tasks = [asyncio.ensure_future(self.connection_task(i)) for i in range(self.connections)]
        await asyncio.gather(*tasks)
        elapsed = time.monotonic() - self.start
        if signaller is not None:
            if self.signal_at is None:
                # The load ended before the signal was due: signal now.
                signaller.cancel()
                self.signal_at = time.monotonic()
                self.server.terminate()
                signaller = asyncio.ensure_future(self._wait_exit())
            await signaller
            # A connection attempted well after the signal must be refused.
            wait = self.signal_at + REFUSE_GRACE - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            await self.probe_refused()
        if self.server is not None and self.server.alive():
            self.rss.append((round(time.monotonic() - self.start, 2), rss_kib(self.server.pid) or 0))
        sampler.cancel()
        return self.summary(elapsed)

    async def _wait_exit(self) -> None:
        loop = asyncio.get_running_loop()
        self.exit_status = await loop.run_in_executor(None, self.server.wait, SHUTDOWN_BOUND + 5)
        self.exit_after = time.monotonic() - self.signal_at

    async def probe_refused(self) -> None:
        for _ in range(3):
            conn = await self.connect()
            if conn is not None:
                conn[1].close()

    def summary(self, elapsed: float) -> dict:
        st = self.stats
        failed = dict(st.failed)
        request_failures = sum(n for k, n in failed.items() if k not in NOT_REQUESTS)
        unanswered = sum(st.closed_unanswered.values())
        # Sent but neither verified, nor failed, nor closed unanswered: the rest of a pipeline
        # after a failure.
        unaccounted = max(0, st.sent - st.verified - request_failures - unanswered)
        sigterm = self.sigterm_after is not None
        # A clean close before the answer is allowed only while the server shuts down.
        lost = unaccounted + (0 if sigterm else unanswered)
        out = {
            "mode": "sigterm" if sigterm else "steady",
            "connections": self.connections,
            "elapsed_s": round(elapsed, 2),
            "sent": st.sent,
            "verified": st.verified,
            "lost": lost,
            "failed": failed,
            "closed_unanswered": unanswered,
            "req_per_s": round(st.verified / elapsed, 1) if elapsed > 0 else 0.0,
            "sent_by_kind": dict(st.sent_by_kind),
            "verified_by_kind": dict(st.verified_by_kind),
            "connects": st.connects,
            "examples": st.examples,
        }
        if self.rss:
            out["rss_kib"] = {
                "first": self.rss[0][1],
                "max": max(k for _, k in self.rss),
                "last": self.rss[-1][1],
                "samples": self.rss,
            }
        if sigterm:
            ok_exit = (
                self.exit_status == 0 and self.exit_after is not None and self.exit_after <= SHUTDOWN_BOUND
            )
            if not ok_exit:
                failed["shutdown_exit"] = 1
            out["sigterm"] = {
                "after_s": self.sigterm_after,
                "exit_status": self.exit_status,
                "exit_after_s": round(self.exit_after, 2) if self.exit_after is not None else None,
                "exited_0_within_bound": ok_exit,
                "sent_before_signal_closed_unanswered": st.sent_before_signal_unanswered,
                "partial_responses": failed.get("partial", 0),
                "post_signal_connects": dict(st.post_signal_connects),
            }
        out["failures"] = sum(failed.values())
        out["ok"] = out["failures"] == 0 and lost == 0
        return out


def run_soak(*, requests: int = 20_000, seconds: float = 30.0, connections: int = 50,
             url: str | None = None, server: RefServer | None = None, sigterm_after: float | None = None,
             seed: int | None = None, workers: int | None = None, rss_interval: float = 1.0,
             mix: dict[str, int] | None = None) -> dict:
    """Run one soak and return its summary. Starts (and stops) a server unless `url` or `server`
    is given; with `server`, RSS is sampled from its process."""
    own = None
    if url is not None:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port or 80
        if host not in ("127.0.0.1", "localhost"):
            raise SystemExit("soak.py only targets 127.0.0.1")
    else:
        if server is None:
            server = own = RefServer(workers=workers)
        host, port = server.addr
    if sigterm_after is not None and server is None:
        raise SystemExit("--sigterm-after needs a server started by soak.py (not --url)")
    seed = seed if seed is not None else random.randrange(2**32)
    try:
        soak = Soak(host, port, requests=requests, seconds=seconds, connections=connections, seed=seed,
                    sigterm_after=sigterm_after, server=server, rss_interval=rss_interval, mix=mix)
        summary = asyncio.run(soak.run())
        summary["seed"] = seed
        return summary
    finally:
        if own is not None and own.alive():
            status = own.stop()
            if sigterm_after is None and status != 0 and "summary" in locals():
                summary["failed"]["shutdown_exit"] = status
                summary["failures"] += 1
                summary["ok"] = False


def parse_mix(text: str) -> dict[str, int]:
    """`plaintext=3,echo=1` -> {"plaintext": 3, "echo": 1}; kinds not named get weight 0."""
    known = dict(MIX)
    mix = {}
    for item in text.split(","):
        name, _, weight = item.partition("=")
        name = name.strip()
        if name not in known:
            raise argparse.ArgumentTypeError(f"unknown kind {name!r}; kinds: {', '.join(known)}")
        mix[name] = int(weight or 1)
    return mix


def to_json(summary: dict) -> str:
    """The summary as indented JSON, with each [time, kib] sample on one line."""
    text = json.dumps(summary, indent=2)
    text = re.sub(r"\[\s+([-\d.e]+),\s+([-\d.e]+)\s+\]", r"[\1, \2]", text)
    # Lists of plain numbers on one line.
    return re.sub(r"\[\s+((?:[-\d.e]+,\s+)*[-\d.e]+)\s+\]", lambda m: "[" + re.sub(r",\s+", ", ", m.group(1)) + "]", text)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--requests", type=int, default=100_000, help="stop after this many requests sent")
    p.add_argument("--seconds", type=float, default=60.0, help="stop after this many seconds")
    p.add_argument("--connections", type=int, default=50, help="keep-alive connections")
    p.add_argument("--url", help="target a running server (127.0.0.1 only) instead of starting one")
    p.add_argument("--workers", type=int, help="--workers for the server soak.py starts")
    p.add_argument("--sigterm-after", type=float, help="send SIGTERM after this many seconds and check the shutdown")
    p.add_argument("--seed", type=int, help="random seed, for a reproducible mix")
    p.add_argument("--rss-interval", type=float, default=1.0, help="seconds between RSS samples")
    p.add_argument("--mix", type=parse_mix, help="weights, e.g. plaintext=3,echo=1 (default: " +
                   ",".join(f"{k}={w}" for k, w in MIX) + ")")
    args = p.parse_args(argv)
    summary = run_soak(requests=args.requests, seconds=args.seconds, connections=args.connections,
                       url=args.url, sigterm_after=args.sigterm_after, seed=args.seed,
                       workers=args.workers, rss_interval=args.rss_interval, mix=args.mix)
    print(to_json(summary))
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
