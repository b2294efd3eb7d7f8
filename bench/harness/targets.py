"""Performance targets, checked against a run's medians: Vireo for Python's, `vireo serve`'s,
and Vireo's for the protocols beyond cleartext HTTP/1.1 (HTTP/2, HTTPS, WebSockets).

Each target compares figures of one run: Vireo for Python against another peer in the same
scenario, or against its own `/` (plaintext-100, or ab-hello for the ab scenarios); Vireo
against the best of its peers in a protocol scenario. CPU figures are server CPU µs per
request (per message for WebSocket echo). `evaluate` and `evaluate_protocols` give one row
per target and scenario that the run measured; `markdown` the tables the results page shows."""
from __future__ import annotations

import statistics
from dataclasses import dataclass

PEER = "vireo-python"
# The server Vireo for Python's `/` is set against first: Granian's raw RSGI hello.
RSGI_PEER = "granian-rsgi"


@dataclass
class Row:
    target: str      # what is compared, in words
    scenarios: str   # where the figures come from
    figures: str     # the figures compared
    value: float     # the measured ratio
    limit: str       # the target, in words
    met: bool


def _p99_floor(by) -> str:
    """The same p99 ratio for the C floor, which parses nothing, when it ran both scenarios:
    what the load generator's own queueing gives a server that costs next to nothing."""
    many, few = by.get(("ab-hello-500", "floor-c")), by.get(("ab-hello", "floor-c"))
    if not (many and few and many.get("p99_ms") and few.get("p99_ms")):
        return ""
    return (f"; the C floor in the same run: p99 {many['p99_ms']:.2f} / {few['p99_ms']:.2f} ms, "
            f"{many['p99_ms'] / few['p99_ms']:.2f}×")


def _cpu(by, scenario, peer=PEER):
    return by.get((scenario, peer), {}).get("cpu_us_per_req")


def _by_run(by, scenario, peer, column=1) -> dict:
    """run number -> that run's CPU figure (column 2: its own `/` slices' figure)."""
    runs = by.get((scenario, peer), {}).get("cpu_by_run") or []
    return {r[0]: r[column] for r in runs if r[column]}


def _spread(pairs: list) -> str:
    """For the figures column: the ratio within each run (figures a few seconds apart), so a
    reader sees how far single runs stray from the ratio of medians. Empty under two runs."""
    ratios = sorted(a / b for a, b in pairs)
    if len(ratios) < 2:
        return ""
    return (f"; per run {ratios[0]:.2f}–{ratios[-1]:.2f}× "
            f"(median {statistics.median(ratios):.2f}×)")


def _paired(by, num, den) -> str:
    """`_spread` of num / den (each (scenario, peer), or (scenario, peer, column) as `_by_run`
    takes it) over the runs both were measured in."""
    a, b = _by_run(by, *num), _by_run(by, *den)
    return _spread([(a[n], b[n]) for n in sorted(a.keys() & b.keys())])


def _ratio(by, what, num, den, limit) -> Row | None:
    """num / den (each (scenario, peer)) against `value <= limit`."""
    a, b = _cpu(by, *num), _cpu(by, *den)
    if not a or not b:
        return None
    value = a / b
    where = num[0] if num[0] == den[0] else f"{num[0]} / {den[0]}"
    names = f"{num[1]} / {den[1]}" if num[1] != den[1] else num[1]
    return Row(what, f"{where} ({names})", f"{a:.2f} / {b:.2f} µs{_paired(by, num, den)}",
               value, f"≤ {limit:.2f}×", value <= limit)


def _own_root(by, scenario, hello="plaintext-100", peer=PEER):
    """(CPU of `/` to set `scenario` against, the label of the paired scenario or None): the
    `/` measured in slices alternating with the scenario when the run has it (labelled), else
    `hello`'s figure (None)."""
    paired = by.get((scenario, peer), {}).get("baseline_cpu_us_per_req")
    if paired:
        return paired, f"{scenario} (`/` in alternating slices)"
    return _cpu(by, hello, peer), None


def _against_root(by, what, scenario, limit, peer=PEER, hello="plaintext-100") -> Row | None:
    """The scenario's CPU against the same peer's own `/` (measured alongside it, else in
    `hello`), at most `limit` times it."""
    a = _cpu(by, scenario, peer)
    b, paired = _own_root(by, scenario, hello, peer=peer)
    if not a or not b:
        return None
    value = a / b
    # The route's runs against their own `/` slices (column 2), or against `hello`'s.
    spread = _paired(by, (scenario, peer), (scenario, peer, 2) if paired else (hello, peer))
    return Row(what, f"{paired or f'{scenario} / {hello}'} ({peer})",
               f"{a:.2f} / {b:.2f} µs{spread}", value, f"≤ {limit:.2f}×", value <= limit)


def _compute(by, meta, compute, hello) -> Row | None:
    """(CPU of /compute - CPU of /) / the handler's timeit time, within 10 % of 1."""
    timed = (meta.get("timeit_compute") or {}).get("runs") or []
    c = _cpu(by, compute)
    h, paired = _own_root(by, compute, hello)
    if not timed or not c or not h:
        return None
    # The mean of each timeit's repeats (a results file from before means were kept: the best),
    # averaged over the timeits as the CPU figures average over their slices.
    own = statistics.mean(t.get("mean_us", t["best_us"]) for t in timed)
    value = (c - h) / own
    return Row("`/compute` CPU minus `/` CPU, against the handler's own time by `timeit`",
               paired or f"{compute} − {hello}",
               f"({c:.2f} − {h:.2f}) / {own:.2f} µs{_user_split(by, compute, hello, own)}",
               value, "0.90–1.10×", abs(value - 1) <= 0.10)


def timeit_when(meta: dict, whose: str) -> str:
    """When the runner took the `/compute` handler's `timeit` figures, for the results page:
    `whose` names the server ("vireo-python", "the server")."""
    if meta.get("order") != "scenario":
        return f"before each run of {whose}"
    between = (", between the slices of, and" if meta["timeit_compute"].get("between_slices")
               else " and")
    return f"just before{between} just after each of {whose}'s `/compute` scenarios"


def _user_split(by, compute, hello, own) -> str:
    """The same difference in user-space CPU alone, for the figures column: what is left
    of the total once the kernel's share (sending, waking the client) is taken out."""
    row = by.get((compute, PEER), {})
    c = row.get("user_us_per_req")
    h = row.get("baseline_user_us_per_req") or by.get((hello, PEER), {}).get("user_us_per_req")
    if not c or not h:
        return ""
    return f"; user-space CPU alone ({c:.2f} − {h:.2f}) / {own:.2f} = {(c - h) / own:.2f}×"


def evaluate(rows: list, meta: dict) -> list:
    """The targets this run measured, as Rows (ratios from the medians)."""
    by = {(r["scenario"], r["peer"]): r for r in rows}
    if not any(r["peer"] == PEER for r in rows):
        return []
    out = []
    for hello in ("plaintext-100", "ab-hello"):
        out.append(_ratio(by, "`/` against Granian's raw RSGI hello app",
                          (hello, PEER), (hello, RSGI_PEER), 0.80))
        out.append(_ratio(by, "`/` against FastAPI on uvicorn",
                          (hello, PEER), (hello, "fastapi"), 0.10))
    out.append(_against_root(by, "`/users/{id}` (typed parameter, one middleware) against its own `/`",
                             "users", 1.25))
    out.append(_against_root(by, "`/json` against its own `/`", "json", 1.10))
    out.append(_against_root(by, "`async def` awaiting nothing (`/async-nowait`) against its own `def` `/`",
                             "async-nowait", 1.05))
    sleeps = "`async def` awaiting `asyncio.sleep(0)` (`/async`) against its own `def` `/`"
    out.append(_against_root(by, sleeps, "async", 2.0))
    out.append(_against_root(by, sleeps, "ab-async", 2.0, hello="ab-hello"))
    for c, h in (("compute", "plaintext-100"), ("ab-compute", "ab-hello")):
        out.append(_compute(by, meta, c, h))
    many, few = by.get(("ab-hello-500", PEER)), by.get(("ab-hello", PEER))
    if many and few and many.get("p99_ms") and few.get("p99_ms"):
        errors = many["errors"] + many["non2xx"] + many.get("length_mismatch", 0)
        value = many["p99_ms"] / few["p99_ms"]
        medians = (f" (p50 {many['p50_ms']:.2f} / {few['p50_ms']:.2f} ms)"
                   if many.get("p50_ms") and few.get("p50_ms") else "")
        out.append(Row("500 connections: no errors, and p99 against p99 at 100 connections",
                       "ab-hello-500 / ab-hello",
                       f"{errors} errors; p99 {many['p99_ms']:.2f} / {few['p99_ms']:.2f} ms{medians}"
                       + _p99_floor(by),
                       value,
                       "0 errors, ≤ 3.00×", errors == 0 and value <= 3.0))
    soak = next((r for r in rows if r["peer"] == PEER and r.get("rss_growth") is not None), None)
    if soak:
        out.append(Row("RSS after the whole soak against RSS after its first tenth",
                       soak["scenario"],
                       f"{soak['rss_end_kib'] / 1024:.1f} / {soak['rss_first_kib'] / 1024:.1f} MiB",
                       soak["rss_growth"], "≤ 1.10×", soak["rss_growth"] <= 1.10))
    for idle in ("idle-5k", "idle-20k"):
        r = by.get((idle, PEER))
        if r and r.get("kib_per_conn") is not None:
            out.append(Row("memory per idle keep-alive connection", idle,
                           f"{r['kib_per_conn']:.2f} KiB", r["kib_per_conn"], "≤ 1.00 KiB",
                           r["kib_per_conn"] <= 1.0))
    return [r for r in out if r is not None]


# Vireo's protocol targets: scenario -> the peers whose best (lowest) CPU figure it is set
# against, and the most Vireo's may be as a multiple of it.
PROTOCOL_TARGETS = {
    "h2c-hello": ({"nginx", "hyper", "go-nethttp"}, 0.9),
    "h2c-json": ({"nginx", "hyper", "go-nethttp"}, 0.9),
    "h2-tls-hello": ({"nginx", "hyper", "go-nethttp"}, 0.9),
    "h2-tls-json": ({"nginx", "hyper", "go-nethttp"}, 0.9),
    "https-hello": ({"nginx"}, 0.9),
    "ws-echo-32": ({"ws-tungstenite", "node-ws", "go-ws"}, 0.9),
    "ws-echo-16k": ({"ws-tungstenite", "node-ws", "go-ws"}, 0.9),
}
WHAT = {
    "h2c-hello": "HTTP/2 (h2c) `GET /`", "h2c-json": "HTTP/2 (h2c) `GET /json`",
    "h2-tls-hello": "HTTP/2 over TLS `GET /`", "h2-tls-json": "HTTP/2 over TLS `GET /json`",
    "https-hello": "HTTPS/1.1 `GET /`", "ws-echo-32": "WebSocket echo, 32 bytes",
    "ws-echo-16k": "WebSocket echo, 16 KiB",
}
IDLE_WS_KIB = 2.0
# HTTPS/1.1 against Vireo's own cleartext figure plus what encryption costs. The cipher's cost
# is the smallest HTTPS-less-cleartext difference among these peers at the same load (the
# tightest estimate this run has), and Vireo's HTTPS figure may be this multiple of the sum.
HTTPS_CIPHER_PEERS = ("axum", "nginx")
HTTPS_OVER_CLEARTEXT = 1.1


def _https_over_cleartext(by) -> Row | None:
    """Vireo's HTTPS CPU against its cleartext CPU plus the cipher's cost."""
    https, plain = _cpu(by, "https-hello", "vireo"), _cpu(by, "plaintext-100", "vireo")
    deltas = [(tls - clear, peer) for peer in HTTPS_CIPHER_PEERS
              if (tls := _cpu(by, "https-hello", peer)) and (clear := _cpu(by, "plaintext-100", peer))]
    if not (https and plain and deltas):
        return None
    delta, peer = min(deltas)
    cipher = max(0.0, delta)
    value = https / (plain + cipher)
    return Row("HTTPS/1.1 `GET /`: CPU against Vireo's cleartext plus the cipher's cost "
               f"({peer}'s HTTPS less its cleartext, the least of {', '.join(HTTPS_CIPHER_PEERS)})",
               f"https-hello, plaintext-100 (vireo, {peer})",
               f"{https:.2f} / ({plain:.2f} + {cipher:.2f}) µs", value,
               f"≤ {HTTPS_OVER_CLEARTEXT:.2f}×", value <= HTTPS_OVER_CLEARTEXT)


def evaluate_protocols(rows: list) -> list:
    """Vireo's protocol targets this run measured, as Rows (ratios from the medians)."""
    by = {(r["scenario"], r["peer"]): r for r in rows}
    out = []
    for scenario, (peers, limit) in PROTOCOL_TARGETS.items():
        ours = _cpu(by, scenario, "vireo")
        theirs = [(c, p) for p in sorted(peers) if (c := _cpu(by, scenario, p))]
        if not ours or not theirs:
            continue
        best, peer = min(theirs)
        value = ours / best
        against = f"the best of {', '.join(sorted(peers))}" if len(peers) > 1 else next(iter(peers))
        out.append(Row(f"{WHAT[scenario]}: CPU against {against}",
                       f"{scenario} (vireo / {peer})",
                       f"{ours:.2f} / {best:.2f} µs{_paired(by, (scenario, 'vireo'), (scenario, peer))}",
                       value, f"≤ {limit:.2f}×", value <= limit))
    https = _https_over_cleartext(by)
    if https:
        out.append(https)
    r = by.get(("ws-idle-5k", "vireo"))
    if r and r.get("kib_per_conn") is not None:
        out.append(Row("memory per idle WebSocket connection", "ws-idle-5k",
                       f"{r['kib_per_conn']:.2f} KiB", r["kib_per_conn"], f"≤ {IDLE_WS_KIB:.2f} KiB",
                       r["kib_per_conn"] <= IDLE_WS_KIB))
    return out


# Vireo's first-pass targets: its CPU per request at most this multiple of may_minihttp's in
# every scenario both serve (memory per connection has its own target), `/users/:id` at most
# USERS_OVER_ROOT times its own `/`, and idle keep-alive connections at most IDLE_KIB each.
FLOOR_PEER = "may_minihttp"
OVER_FLOOR = 1.05
USERS_OVER_ROOT = 1.03
IDLE_KIB = 1.0


def evaluate_first_pass(rows: list, scenario_order: list) -> list:
    """Vireo's first-pass targets this run measured, as Rows (ratios from the medians)."""
    by = {(r["scenario"], r["peer"]): r for r in rows}
    out = []
    for scenario in scenario_order:
        if scenario.startswith("idle") or scenario.startswith("ws-"):
            continue
        ours, theirs = _cpu(by, scenario, "vireo"), _cpu(by, scenario, FLOOR_PEER)
        if ours and theirs:
            spread = _paired(by, (scenario, "vireo"), (scenario, FLOOR_PEER))
            out.append(Row(f"CPU against {FLOOR_PEER}", f"{scenario} (vireo / {FLOOR_PEER})",
                           f"{ours:.2f} / {theirs:.2f} µs{spread}", ours / theirs,
                           f"≤ {OVER_FLOOR:.2f}×", ours / theirs <= OVER_FLOOR))
    out.append(_against_root(by, "`/users/:id` (two middlewares, a parameter) against its own `/`",
                             "users", USERS_OVER_ROOT, peer="vireo"))
    for idle in ("idle-5k", "idle-20k"):
        r = by.get((idle, "vireo"))
        if r and r.get("kib_per_conn") is not None:
            out.append(Row("memory per idle keep-alive connection", idle,
                           f"{r['kib_per_conn']:.2f} KiB", r["kib_per_conn"],
                           f"≤ {IDLE_KIB:.2f} KiB", r["kib_per_conn"] <= IDLE_KIB))
    return [r for r in out if r is not None]


# `vireo serve`'s targets (plaintext-100): (its peer, the peer it is set against, the most
# its CPU per request may be as a multiple of that peer's, what is compared).
SERVE_TARGETS = [
    ("vireo-serve-asgi", "granian-asgi-hello", 0.9, "raw ASGI hello against Granian (ASGI)"),
    ("vireo-serve-asgi", "uvicorn-asgi", 0.5, "raw ASGI hello against uvicorn"),
    ("vireo-serve-fastapi", "fastapi", 0.9, "the FastAPI app against uvicorn"),
    ("vireo-serve-flask", "granian-wsgi", 0.9, "Flask hello against Granian (WSGI)"),
    ("vireo-serve-flask", "gunicorn-flask", 0.3, "Flask hello against gunicorn"),
]


def evaluate_serve(rows: list) -> list:
    """`vireo serve`'s targets this run measured, as Rows (ratios from the medians)."""
    by = {(r["scenario"], r["peer"]): r for r in rows}
    out = [_ratio(by, what, ("plaintext-100", ours), ("plaintext-100", theirs), limit)
           for ours, theirs, limit, what in SERVE_TARGETS]
    for peer in sorted({ours for ours, *_ in SERVE_TARGETS}):
        r = by.get(("ab-hello-500", peer))
        if r:
            errors = r["errors"] + r["non2xx"] + r.get("length_mismatch", 0)
            out.append(Row(f"{peer}: no errors at 500 connections", "ab-hello-500",
                           f"{errors} errors", errors, "0 errors", errors == 0))
        soak = by.get(("memory-1m", peer))
        if soak and soak.get("rss_growth") is not None:
            out.append(Row(f"{peer}: RSS after the whole soak against RSS after its first tenth",
                           "memory-1m",
                           f"{soak['rss_end_kib'] / 1024:.1f} / {soak['rss_first_kib'] / 1024:.1f} MiB",
                           soak["rss_growth"], "≤ 1.10×", soak["rss_growth"] <= 1.10))
    return [r for r in out if r is not None]


def _rows_table(found: list) -> list:
    out = ["| target | scenarios | figures | measured | target | met |", "|---|---|---|---|---|---|"]
    for r in found:
        if r.limit.endswith("errors"):
            measured = f"{r.value:.0f}"
        else:
            measured = f"{r.value:.2f}" + (" KiB" if r.limit.endswith("KiB") else "×")
        out.append(f"| {r.target} | {r.scenarios} | {r.figures} | {measured} | {r.limit} | "
                   f"{'yes' if r.met else '**no**'} |")
    return out


def markdown(rows: list, meta: dict, scenario_order: list = ()) -> list:
    """The targets sections of the results page: Vireo's first-pass and protocol targets,
    Vireo for Python's, then `vireo serve`'s (no lines for a group that did not run)."""
    timed = (meta.get("timeit_compute") or {}).get("runs") or []
    queueing_note = [
        "ab keeps every connection busy, so when throughput is the same at 500 connections as "
        "at 100, each request waits behind five times as many (Little's law): the p50s show "
        "that wait, and a p99 under 3× the p99 at 100 connections is only seen when the "
        "100-connection p99 itself had a long tail. When the C floor ran both scenarios, its "
        "ratio is given beside Vireo's: ab, not the server, is the bottleneck for both, and "
        "the floor's ratio is what ab's own queueing gives."] if any(
            r["scenario"] == "ab-hello-500" and r["peer"] == PEER for r in rows) else []
    timeit_note = [
        f"The `timeit` figure is {(meta['timeit_compute'].get('what') or 'the handler')}, run by "
        f"the server's Python ({timed[0].get('python', '?')}) on the server core "
        + timeit_when(meta, "the server")
        + "; the mean of those figures is used. Where the run has it, the figures also give "
        "the difference in user-space CPU alone (utime from `/proc/PID/stat`): the total "
        "carries the kernel's share too, and with a slow handler that includes waking the "
        "load generator once per response (see bench/README.md)."] if timed else []
    return (
        _section("Vireo: first-pass targets",
                 f"Vireo's reference app against {FLOOR_PEER} in every scenario both serve, "
                 "against its own `/`, and its memory per idle connection, from the medians "
                 "below; CPU figures are server CPU µs per request. The fixed-rate scenario's "
                 "CPU figure is mostly the cost of waking an idle server (see the caveats).",
                 evaluate_first_pass(rows, list(scenario_order)), meta)
        + _section("Vireo: protocol targets",
                 "Vireo's reference app against the best of its peers in each HTTP/2, HTTPS and "
                 "WebSocket scenario, from the medians below; CPU figures are server CPU µs per "
                 "request (per message for WebSocket echo).",
                 evaluate_protocols(rows), meta)
        + _section("Vireo for Python: targets",
                   "Each target as measured in this run, from the medians below; CPU figures are "
                   "server CPU µs per request.",
                   evaluate(rows, meta), meta, timeit_note + queueing_note)
        + _section("`vireo serve`: targets",
                   "Existing ASGI and WSGI apps under `vireo serve` against the same apps under "
                   "their usual servers, one worker each, from the medians below; CPU figures are "
                   "server CPU µs per request at 100 connections (plaintext-100).",
                   evaluate_serve(rows), meta))


def _section(title: str, intro: str, found: list, meta: dict, notes: list = ()) -> list:
    """One targets section: its title, what it compares, the table, and notes."""
    if not found:
        return []
    out = [f"## {title}", "", intro, ""] + _rows_table(found)
    if any("; per run " in r.figures for r in found):
        out += ["", "A target is judged on the ratio of the medians. \"Per run\" gives the same "
                "ratio within each run, where the two figures were taken a few seconds apart: "
                "its range shows how far one run's verdict can stray on this machine."]
    for note in notes:
        out += ["", note]
    if meta.get("quick"):
        out += ["", "A quick run's figures are too short to judge a target by."]
    return out + [""]
