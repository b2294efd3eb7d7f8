"""The scenarios. Each one reproduces the load of a published write-up, so
that figure can be set against Vireo's on the same machine."""
from __future__ import annotations

from dataclasses import dataclass, field, replace


# A run measured in slices (a route against `/`, or peers interleaved) takes each side's slices
# in the order A B B A, this many times over: more rounds follow the machine's drift closer.
SLICE_ROUNDS = 2


def slice_pattern(*sides: str, rounds: int = SLICE_ROUNDS) -> str:
    """The slice order in words: `A, B, B, A, twice`."""
    once = ", ".join(list(sides) + list(sides[::-1]))
    return once + ("" if rounds == 1 else ", twice" if rounds == 2 else f", {rounds} times")


@dataclass
class Scenario:
    id: str
    tool: str            # wrk | ab | fixedrate | idle | soak | h2load | handshake | wsecho | wsidle
    route: str           # key in peers.ROUTES
    about: str           # what it reproduces
    conns: int = 100
    pipeline: int = 0    # wrk: requests per write
    requests: int = 0    # ab: -n
    rate: int = 0        # fixedrate: requests per second
    min_seconds: int = 0  # the shortest measured run, whatever --duration says
    keepalive: bool = False        # skip peers that close every connection
    quick: dict = field(default_factory=dict)   # overrides under --quick; {"skip": True} to leave out
    peers: frozenset = None        # the only peers it is run against (None: every peer)
    protocol: str = None           # the capability a peer needs: h2c, h2, https (peers.PROTOCOL_MODE)
    streams: int = 0               # h2load: concurrent streams per connection (-m)
    message: int = 0               # wsecho: bytes per message
    # wrk or ab: a route measured in alternating slices with this one on the same server
    # (A B B A; for ab, each slice a whole ab run), for these peers only, so a ratio to it is
    # free of the drift between scenarios.
    baseline: str = None
    baseline_peers: frozenset = frozenset()

    def seconds(self, duration: int) -> int:
        """How long a measured run lasts when --duration asks for `duration`."""
        return max(duration, self.min_seconds)

    def slice_seconds(self, duration: int) -> int:
        """The length of each slice of a run paired with a baseline route."""
        return max(1, self.seconds(duration) // (2 * SLICE_ROUNDS))

    def params(self, duration: int) -> str:
        seconds = self.seconds(duration)
        if self.tool == "wrk":
            p = f"wrk -t1 -c{self.conns} -d{seconds}s" + (" over TLS" if self.protocol == "https" else "")
            if self.baseline:
                p += (f"; for {', '.join(sorted(self.baseline_peers))} in {4 * SLICE_ROUNDS} slices "
                      f"of {self.slice_seconds(duration)}s alternating with `/` "
                      f"({slice_pattern('route', '`/`')})")
            return p + f", {self.pipeline} requests pipelined per write" if self.pipeline else p
        if self.tool == "h2load":
            how = "over TLS (ALPN h2)" if self.protocol == "h2" else "cleartext, prior knowledge (h2c)"
            return f"h2load -t1 -c{self.conns} -m{self.streams} -D{seconds}, {how}"
        if self.tool == "handshake":
            return (f"ab -n {self.requests} -c {self.conns} over TLS without keep-alive: "
                    "a new connection and a full TLS handshake per request")
        if self.tool == "wsecho":
            return (f"{self.conns} WebSocket connections for {seconds}s, each sending a "
                    f"{_size(self.message)} binary message and waiting for its echo, in a loop "
                    "(`tools/wsecho`)")
        if self.tool == "wsidle":
            return f"{self.conns} idle WebSocket connections (`tools/wsecho -idle`)"
        if self.tool == "ab":
            p = f"ab -k -n {self.requests} -c {self.conns}"
            if self.baseline:
                p += (f"; for {', '.join(sorted(self.baseline_peers))} {4 * SLICE_ROUNDS} whole "
                      f"ab runs alternating with `/` ({slice_pattern('route', '`/`')})")
            return p
        if self.tool == "fixedrate":
            return f"{self.rate} req/s over {self.conns} keep-alive connections for {seconds}s"
        if self.tool == "soak":
            return (f"{self.requests:,} requests over {self.conns} connections (`wrk -t1 -c{self.conns}`), "
                    f"round-robin over the routes; RSS read after the first {self.requests // 10:,} "
                    "and at the end")
        return f"{self.conns} idle keep-alive connections"


def _size(n: int) -> str:
    return f"{n // 1024} KiB" if n >= 1024 and n % 1024 == 0 else f"{n}-byte"


SATURATION_NOTE = (
    "One wrk thread pinned to one core saturates somewhere near 130-170k req/s on a machine "
    "like this one (floor-c, which does no HTTP work at all, shows where). The fastest servers "
    "all reach that ceiling in the plaintext runs, so there req/s no longer separates them: "
    "CPU time per request (µs of server CPU per completed request) does.")

# The peers whose targets set a route against their own `/` (Vireo for Python's).
PAIRED_WITH_ROOT = frozenset({"vireo-python"})
# `/users/:id` is also set against Vireo's own `/` (a first-pass target).
USERS_PAIRED_WITH_ROOT = PAIRED_WITH_ROOT | {"vireo"}

SCENARIOS = [
    Scenario("plaintext-100", "wrk", "plaintext",
             "`GET /` plaintext at 100 connections, zap's README setup at a lighter load"),
    Scenario("plaintext-400", "wrk", "plaintext",
             "`GET /` plaintext as in zap's README benchmark (`wrk -t1 -c400 -d10s` style)",
             conns=400),
    Scenario("users", "wrk", "users",
             "tinyhttp's benchmark: `GET /users/:id` through two app-wide middlewares, -c100",
             baseline="plaintext", baseline_peers=USERS_PAIRED_WITH_ROOT),
    Scenario("favicon", "wrk", "favicon",
             "tinyhttp's `/favicon.ico` case: a 204 with no body, -c100"),
    Scenario("json", "wrk", "json",
             "TechEmpower's JSON serialization test shape: `GET /json`, -c100",
             baseline="plaintext", baseline_peers=PAIRED_WITH_ROOT),
    Scenario("compute", "wrk", "compute",
             "TurboAPI's CPU-bound handler (`/compute`, sum of squares below 1000) under wrk, -c100, "
             "for a CPU-per-request figure finer than ab's",
             baseline="plaintext", baseline_peers=PAIRED_WITH_ROOT),
    Scenario("async", "wrk", "async",
             "TurboAPI's async handler (`/async?ms=0`) under wrk, -c100, for a CPU-per-request "
             "figure finer than ab's",
             baseline="plaintext", baseline_peers=PAIRED_WITH_ROOT),
    Scenario("async-nowait", "wrk", "async-nowait",
             "Vireo for Python's `async def` handler that awaits nothing (`/async-nowait`), -c100: "
             "the coroutine path's cost, set against its `def` handler for `/`",
             baseline="plaintext", baseline_peers=PAIRED_WITH_ROOT),
    Scenario("pipelined", "wrk", "plaintext",
             "TechEmpower's plaintext test: 16 requests pipelined per write, 256 connections",
             conns=256, pipeline=16, keepalive=True),
    Scenario("ab-hello", "ab", "plaintext",
             "TurboAPI's write-up: `ab -k -n 10000 -c 100` on `/`",
             requests=10000, quick={"requests": 2000}),
    Scenario("ab-compute", "ab", "compute",
             "TurboAPI's write-up: `ab -k -n 10000 -c 100` on `/compute` (CPU-bound handler)",
             requests=10000, quick={"requests": 2000},
             baseline="plaintext", baseline_peers=PAIRED_WITH_ROOT),
    Scenario("ab-async", "ab", "async",
             "TurboAPI's write-up: `ab -k -n 10000 -c 100` on `/async?ms=0` (async handler)",
             requests=10000, quick={"requests": 2000},
             baseline="plaintext", baseline_peers=PAIRED_WITH_ROOT),
    Scenario("ab-hello-500", "ab", "plaintext",
             "TurboAPI's write-up: `ab -k -n 50000 -c 500` on `/`",
             requests=50000, conns=500, quick={"requests": 5000}),
    Scenario("fixed-rate", "fixedrate", "plaintext",
             "wrk2-style latency at a fixed 1000 req/s (open loop, no coordinated omission); "
             "tools/fixedrate stands in for wrk2, which Debian does not package",
             # At 1,000 req/s each request pays for waking the server, a cost that swings with
             # what the host is doing; a longer run averages more of that noise away.
             rate=1000, conns=50, min_seconds=12, quick={"min_seconds": 0}),
    Scenario("idle-5k", "idle", "plaintext",
             "memory per idle keep-alive connection, 5,000 connections (server RSS growth / connections)",
             conns=5000, keepalive=True, quick={"conns": 1000}),
    Scenario("idle-20k", "idle", "plaintext",
             "memory per idle keep-alive connection, 20,000 connections",
             conns=20000, keepalive=True, quick={"skip": True}),
    Scenario("memory-1m", "soak", "plaintext",
             "memory under sustained load: Vireo for Python's (and `vireo serve`'s) RSS after a "
             "million requests (`--soak-requests` sets the count) mixed over the routes the peer "
             "serves of `/`, `/json`, `/users/42`, `/compute`, `/async`, `/async-nowait`, against "
             "its RSS after the first tenth of them, on a freshly started server",
             requests=1_000_000, keepalive=True, quick={"requests": 50_000},
             peers=frozenset({"vireo-python", "vireo-serve-asgi", "vireo-serve-fastapi",
                              "vireo-serve-flask"})),
    # The protocols of issue 17: HTTP/2, HTTPS/1.1, TLS handshakes and WebSockets. Each runs
    # only against the peers that declare its protocol (or serve its route, for WebSockets).
    Scenario("h2c-hello", "h2load", "plaintext",
             "HTTP/2 in cleartext with prior knowledge (h2c), as a proxy speaks it: `GET /`, "
             "100 connections × 10 streams",
             protocol="h2c", streams=10),
    Scenario("h2c-json", "h2load", "json",
             "HTTP/2 in cleartext (h2c): `GET /json`, 100 connections × 10 streams",
             protocol="h2c", streams=10),
    Scenario("h2-tls-hello", "h2load", "plaintext",
             "HTTP/2 over TLS (ALPN h2): `GET /`, 100 connections × 10 streams",
             protocol="h2", streams=10),
    Scenario("h2-tls-json", "h2load", "json",
             "HTTP/2 over TLS (ALPN h2): `GET /json`, 100 connections × 10 streams",
             protocol="h2", streams=10),
    Scenario("https-hello", "wrk", "plaintext",
             "HTTPS/1.1: `GET /` over TLS at 100 keep-alive connections, plaintext-100's load "
             "with TLS on top",
             protocol="https"),
    Scenario("tls-handshake", "handshake", "plaintext",
             "TLS handshakes per second: `GET /` over HTTPS with a new connection, and so a "
             "full handshake (no session resumption), per request",
             protocol="https", conns=50, requests=10000, quick={"requests": 500}),
    Scenario("ws-echo-32", "wsecho", "ws",
             "WebSocket echo, 32-byte messages: messages per second and server CPU per message",
             message=32),
    Scenario("ws-echo-16k", "wsecho", "ws",
             "WebSocket echo, 16 KiB messages: messages per second and server CPU per message",
             message=16384),
    Scenario("ws-idle-5k", "wsidle", "ws",
             "memory per idle WebSocket connection, 5,000 connections (server RSS growth / "
             "connections)",
             conns=5000, quick={"conns": 1000}),
]

# The routes a soak run mixes, where the peer serves them.
SOAK_ROUTES = ["plaintext", "json", "users", "compute", "async", "async-nowait"]

BY_ID = {s.id: s for s in SCENARIOS}


def for_mode(scenarios: list, quick: bool) -> list:
    """The scenarios with --quick overrides applied (and quick skips dropped)."""
    if not quick:
        return scenarios
    return [replace(s, **{k: v for k, v in s.quick.items() if k != "skip"})
            for s in scenarios if not s.quick.get("skip")]
