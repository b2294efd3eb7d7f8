"""The load generators: wrk, ab, h2load, the fixed-rate client, the WebSocket echo client
and the idle-connection openers. Each runs pinned to core 0 and returns a dict of metrics:
requests (completed; WebSocket messages echoed), rps, p50_ms, p99_ms, errors (socket
level), non2xx."""
from __future__ import annotations

import json
import re
import select
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from .util import BENCH

CLIENT_CORE = "0"
PIN = ["taskset", "-c", CLIENT_CORE]
WRK_DIR = BENCH / "wrk"
TOOLS = BENCH / "tools" / "bin"


class LoadError(RuntimeError):
    pass


def _run(argv: list, timeout: float) -> str:
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise LoadError(f"{argv[3]} did not finish within {timeout:.0f}s")
    if res.returncode != 0:
        raise LoadError(f"{argv[3]} exited {res.returncode}: {(res.stderr or res.stdout).strip()[-300:]}")
    return res.stdout


def wrk(url: str, conns: int, seconds: int, pipeline: int = 0) -> dict:
    """One wrk thread (it is pinned to one core, so more threads would only
    compete with each other) with the report.lua / pipeline.lua script."""
    script = WRK_DIR / ("pipeline.lua" if pipeline else "report.lua")
    argv = PIN + ["wrk", "-t1", f"-c{conns}", f"-d{seconds}s", "--timeout", "5s",
                  "-s", str(script), url]
    if pipeline:
        argv += ["--", str(pipeline)]
    out = _run(argv, timeout=seconds + 60)
    line = next((l for l in out.splitlines() if l.startswith("WRK_JSON ")), None)
    if line is None:
        raise LoadError("wrk printed no WRK_JSON line: " + out[-300:])
    r = json.loads(line[len("WRK_JSON "):])
    e, lat = r["errors"], r["latency_us"]
    m = {
        "requests": r["requests"],
        "rps": r["requests"] / (r["duration_us"] / 1e6),
        "p50_ms": lat["p50"] / 1000,
        "p99_ms": lat["p99"] / 1000,
        "errors": e["connect"] + e["read"] + e["write"] + e["timeout"],
        "non2xx": e["status"],
        "raw": r,
    }
    if pipeline:
        # wrk's latency histogram is not meaningful when it pipelines (it
        # times batches, and its percentiles come out inconsistent), so like
        # TechEmpower we keep only throughput for this scenario.
        m["p50_ms"] = m["p99_ms"] = None
    return m


_AB_NUMBERS = {
    "requests": r"Complete requests:\s+(\d+)",
    "failed": r"Failed requests:\s+(\d+)",
    "non2xx": r"Non-2xx responses:\s+(\d+)",
    "keepalive": r"Keep-Alive requests:\s+(\d+)",
    "rps": r"Requests per second:\s+([\d.]+)",
    "seconds": r"Time taken for tests:\s+([\d.]+)",
    "p50_ms": r"^\s+50%\s+(\d+)",
    "p99_ms": r"^\s+99%\s+(\d+)",
    "max_ms": r"^\s+100%\s+(\d+)",
}


def ab(url: str, requests: int, conns: int, keepalive: bool = True) -> dict:
    """ApacheBench as the TurboAPI write-up ran it (ab -k -n N -c C). -r keeps
    ab going after a socket error so errors are counted rather than fatal; -e writes
    the latency percentiles to a CSV file in microseconds, where ab's own report
    rounds them to whole milliseconds. Without keep-alive every request opens a new
    connection (over https://, a full TLS handshake: ab resumes no session)."""
    with tempfile.TemporaryDirectory(prefix="vireo-bench-ab-") as tmp:
        csv = Path(tmp) / "percentiles.csv"
        try:
            out = _run(PIN + ["ab"] + (["-k"] if keepalive else []) + [
                "-r", "-q", "-s", "10", "-e", str(csv),
                "-n", str(requests), "-c", str(conns), url], timeout=600)
        except LoadError as e:
            if "timeout specified has expired" in str(e):
                raise LoadError("ab waited 10 s for a response or a close: the server stalled, or kept "
                                "an HTTP/1.0 keep-alive connection open without saying `keep-alive`")
            raise
        percentiles = _ab_percentiles(csv)
    m = {}
    for key, pattern in _AB_NUMBERS.items():
        found = re.search(pattern, out, re.M)
        m[key] = float(found.group(1)) if found else 0.0
    # The CSV's figures are the same percentiles as the report's, unrounded.
    m["p50_ms"] = percentiles.get(50, m["p50_ms"])
    m["p99_ms"] = percentiles.get(99, m["p99_ms"])
    for key in ("requests", "failed", "non2xx", "keepalive"):
        m[key] = int(m[key])
    # ab counts failed requests by cause: connect, receive, length, exceptions.
    # A "length" failure is a body of a different size than the first one,
    # which is a wrong response rather than a socket error; report it apart.
    causes = re.search(r"\(Connect: (\d+), Receive: (\d+), Length: (\d+), Exceptions: (\d+)\)", out)
    c = [int(x) for x in causes.groups()] if causes else [0, 0, 0, 0]
    m["errors"] = c[0] + c[1] + c[3]
    m["length_mismatch"] = c[2]
    # ab's completed count includes failed ones; CPU per request uses answered ones.
    m["requests"] -= m["errors"]
    m["raw"] = out[out.find("Server Software"):] if "Server Software" in out else out[-2000:]
    return m


_H2LOAD_NUMBERS = {
    "seconds": r"finished in ([\d.]+)s",
    "done": r"requests: \d+ total, \d+ started, (\d+) done",
    "errored": r"(\d+) errored",
    "timeout": r"(\d+) timeout",
    "s2xx": r"status codes: (\d+) 2xx",
    "s3xx": r"(\d+) 3xx",
    "s4xx": r"(\d+) 4xx",
    "s5xx": r"(\d+) 5xx",
}


def h2load(url: str, conns: int, streams: int, seconds: int) -> dict:
    """nghttp2's h2load: one thread, `conns` connections with `streams` concurrent streams
    each, for `seconds`. An http:// URL is HTTP/2 with prior knowledge; https:// negotiates
    h2 by ALPN, and anything else is an error. h2load reports no latency percentiles."""
    out = _run(PIN + ["h2load", "-t1", f"-c{conns}", f"-m{streams}", f"-D{seconds}", url],
               timeout=seconds + 60)
    proto = re.search(r"Application protocol: (\S+)", out)
    if url.startswith("https:") and (not proto or proto.group(1) != "h2"):
        raise LoadError("h2load did not negotiate h2: " + (proto.group(1) if proto else out[-300:]))
    n = {}
    for key, pattern in _H2LOAD_NUMBERS.items():
        found = re.search(pattern, out)
        if not found:
            raise LoadError(f"h2load printed no {key!r}: " + out[-300:])
        n[key] = float(found.group(1))
    return {
        "requests": int(n["done"]),
        "rps": n["done"] / n["seconds"] if n["seconds"] else 0.0,
        "p50_ms": None, "p99_ms": None,
        "errors": int(n["errored"] + n["timeout"]),
        "non2xx": int(n["s3xx"] + n["s4xx"] + n["s5xx"]),
        "raw": out[out.find("finished in"):] if "finished in" in out else out[-2000:],
    }


def wsecho(url: str, conns: int, size: int, seconds: int) -> dict:
    """tools/wsecho: `conns` WebSocket connections, each sending a `size`-byte message and
    waiting for its echo, in a loop; `requests` counts the messages echoed."""
    out = _run(PIN + [str(TOOLS / "wsecho"), "-url", url, "-conns", str(conns),
                      "-size", str(size), "-duration", f"{seconds}s"], timeout=seconds + 60)
    r = json.loads(out)
    return {
        "requests": r["messages"],
        "rps": r["messages"] / r["seconds"] if r["seconds"] else 0.0,
        "p50_ms": r["latency_us"]["p50"] / 1000,
        "p99_ms": r["latency_us"]["p99"] / 1000,
        "errors": r["errors"],
        "non2xx": 0,
        "raw": r,
    }


def _ab_percentiles(csv: Path) -> dict:
    """{percent: ms} from ab's -e file ("Percentage served,Time in ms" lines)."""
    out = {}
    try:
        for line in csv.read_text().splitlines()[1:]:
            percent, _, ms = line.partition(",")
            out[int(percent)] = float(ms)
    except (OSError, ValueError):
        return {}
    return out


def soak(server, paths: list, total: int, conns: int) -> dict:
    """`total` requests cycling through `paths`, as two wrk runs: the first tenth, then the
    rest. The server's RSS is read before, after the first tenth and at the end, each time
    once wrk has exited and its connections are closed."""
    first = max(total // 10, 1)
    rss_start = server.rss_kib()
    a = _soak_phase(server.port, paths, first, conns)
    time.sleep(0.3)
    rss_first = server.rss_kib()
    b = _soak_phase(server.port, paths, total - first, conns)
    time.sleep(0.3)
    rss_end = server.rss_kib()
    requests = a["requests"] + b["requests"]
    seconds = (a["duration_us"] + b["duration_us"]) / 1e6
    lat = b["latency_us"]
    errors = [sum(r["errors"][k] for k in ("connect", "read", "write", "timeout")) for r in (a, b)]
    return {
        "requests": requests,
        "rps": requests / seconds if seconds else 0.0,
        "p50_ms": lat["p50"] / 1000,
        "p99_ms": lat["p99"] / 1000,
        "errors": sum(errors),
        "non2xx": a["errors"]["status"] + b["errors"]["status"],
        "first_requests": a["requests"],
        "rss_start_kib": rss_start,
        "rss_first_kib": rss_first,
        "rss_end_kib": rss_end,
        "rss_growth": rss_end / rss_first if rss_first else None,
        "raw": [a, b],
    }


def _soak_phase(port: int, paths: list, limit: int, conns: int) -> dict:
    """One wrk run that stops after `limit` responses (wrk/soak.lua); returns wrk's summary."""
    # A cap on the run, in case the server stalls: below 1,000 req/s something is wrong.
    cap = 60 + limit // 1000
    argv = PIN + ["wrk", "-t1", f"-c{conns}", f"-d{cap}s", "--timeout", "5s",
                  "-s", str(WRK_DIR / "soak.lua"), f"http://127.0.0.1:{port}/", "--",
                  str(limit), *paths]
    # taskset execs wrk, so this is wrk's PID; its stderr is small (socket errors, if any).
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    summary, done = None, False
    try:
        for line in proc.stdout:
            if line.startswith("SOAK_DONE"):
                done = True
                proc.send_signal(signal.SIGINT)   # ends wrk's sleep: it joins and reports
            elif line.startswith("WRK_JSON "):
                summary = json.loads(line[len("WRK_JSON "):])
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if summary is None:
        raise LoadError(f"wrk (soak) exited {proc.returncode} without a summary: "
                        + proc.stderr.read().strip()[-300:])
    if not done:
        raise LoadError(f"soak: {summary['requests']:,} of {limit:,} requests answered in {cap} s")
    return summary


def fixedrate(url: str, rate: int, conns: int, seconds: int) -> dict:
    out = _run(PIN + [str(TOOLS / "fixedrate"), "-url", url, "-rate", str(rate),
                      "-conns", str(conns), "-duration", f"{seconds}s"], timeout=seconds + 60)
    r = json.loads(out)
    lat = r["latency_ms"]
    return {
        "requests": r["requests"],
        "rps": r["achieved_rate"],
        "p50_ms": lat["p50"], "p90_ms": lat["p90"], "p99_ms": lat["p99"],
        "p999_ms": lat["p99.9"], "max_ms": lat["max"],
        "errors": r["errors"] + r["unsent"],
        "non2xx": r["non2xx"],
        "raw": r,
    }


# Connections opened and closed before an idle measurement: the openers' own concurrency.
WARM_CONNS = 64


def idle(server, conns: int, settle: float, ws_url: str | None = None) -> dict:
    """Open `conns` keep-alive connections (one request each), or with `ws_url` WebSocket
    connections, hold them idle, and charge the server's RSS growth to them. The opener is
    a separate process on the client core, so it neither runs on nor shares memory with
    the server.

    The server is first warmed by opening and closing WARM_CONNS connections the same way,
    so what it pays once (code paged in on first use, first-use caches, pools sized to the
    opener's concurrency) is not charged to each connection."""
    def opener_argv(n: int) -> list:
        return ([str(TOOLS / "wsecho"), "-url", ws_url, "-idle", str(n)] if ws_url else
                [str(TOOLS / "idleconns"), "-addr", f"127.0.0.1:{server.port}", "-n", str(n)])
    # EOF on stdin right away: the opener opens, reports, closes them all and exits.
    subprocess.run(PIN + opener_argv(WARM_CONNS), stdin=subprocess.DEVNULL, capture_output=True,
                   timeout=60)
    time.sleep(settle)
    before = server.rss_kib()
    argv = opener_argv(conns)
    opener = subprocess.Popen(
        PIN + argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # Opening takes seconds; a server that stops answering new connections costs the
        # opener 10 s per attempt, so give up on it rather than wait for every one.
        limit = 60 + conns / 200
        if not select.select([opener.stdout], [], [], limit)[0]:
            opener.kill()
            raise LoadError(f"{Path(argv[0]).name} had not opened {conns:,} connections after {limit:.0f} s: "
                            "the server stopped answering new ones")
        line = opener.stdout.readline()
        if not line:
            raise LoadError(f"{Path(argv[0]).name}: " + opener.stderr.read().strip()[-300:])
        opened = json.loads(line)
        time.sleep(settle)   # let lazy per-connection work (and GC) catch up
        after = server.rss_kib()
        opener.stdin.write("check\n")
        opener.stdin.flush()
        alive = json.loads(opener.stdout.readline())["alive"]
    finally:
        opener.stdin.close()   # EOF: the opener closes everything and exits
        try:
            opener.wait(timeout=30)
        except subprocess.TimeoutExpired:
            opener.kill()
            opener.wait()
    n = opened["opened"]
    if n == 0:
        raise LoadError(f"no connection could be opened ({opened['failed']} failed)")
    return {
        "connections": n,
        "failed": opened["failed"],
        "alive": alive,
        "open_seconds": opened["seconds"],
        "rss_before_kib": before,
        "rss_after_kib": after,
        "kib_per_conn": (after - before) / n,
        "errors": opened["failed"],
        "non2xx": 0,
    }
