"""Turn the raw runs into medians and the results page (through charts.py, PNGs).

The page `markdown()` writes is both a run's `results.md` and, rendered from the committed
`docs/bench/results.json`, `docs/BENCHMARKS.md`: it leads with the results table and the
charts, then (in a run's own page, not in docs/) the tables of Vireo's targets, then the
machine and how to reproduce the run, then every scenario in detail.
`bench/run --report-only DIR [--out FILE] [--no-targets]` renders it again from
DIR/results.json without running anything."""
from __future__ import annotations

import os
import statistics
from collections import defaultdict
from pathlib import Path

from . import targets
from .peers import BY_NAME as PEERS_BY_NAME, PEERS
from .scenarios import BY_ID, SATURATION_NOTE, for_mode, slice_pattern
from .server import SETTLE_BUSY, SETTLE_LIMIT_S, SETTLE_WINDOW_S

OURS = ("vireo", "vireo-python")   # shown in bold


def reference(peers) -> str:
    """The peer the ratios are taken against: Vireo's reference app, or Vireo for Python's
    when only that one ran (a run of the Python group)."""
    peers = set(peers)
    return "vireo-python" if "vireo" not in peers and "vireo-python" in peers else "vireo"


def _called(peer: str) -> str:
    """How the text names the reference peer."""
    return {"vireo": "Vireo", "vireo-python": "Vireo for Python"}.get(peer, peer)

# The results table at the top of the page: one row per peer, one column per
# (scenario, figure). Columns whose scenario was not run are left out.
LEAD_COLUMNS = [
    ("plaintext-400", "rps", "req/s"),
    ("plaintext-400", "cpu_us_per_req", "CPU µs/req"),
    ("plaintext-400", "p99_ms", "p99 ms"),
    ("users", "cpu_us_per_req", "CPU µs/req"),
    ("pipelined", "rps", "req/s"),
    ("pipelined", "cpu_us_per_req", "CPU µs/req"),
    ("fixed-rate", "p99_ms", "p99 ms"),
    ("idle-5k", "kib_per_conn", "KiB / connection"),
]

# What each lead scenario stands for, in the sentence under the table.
LEAD_MEANING = {
    "plaintext-400": "`GET /` at 400 connections",
    "users": "`GET /users/:id` through two app-wide middlewares",
    "pipelined": "`GET /` pipelined 16 deep over 256 connections",
    "fixed-rate": "a fixed 1,000 req/s over 50 connections",
    "idle-5k": "memory per idle keep-alive connection",
}

CHARTS = [
    ("cpu.png", "Server CPU µs per request, per scenario (lower is better)"),
    ("rps.png", "Requests per second, per scenario (higher is better)"),
    ("idle.png", "KiB per idle connection, keep-alive or WebSocket (lower is better)"),
]

AB_NOTE = ("ab speaks HTTP/1.0 and keeps a connection open only when the response says "
           "`keep-alive`; a server that answers in HTTP/1.1 style without saying so gets a new "
           "connection per request, which the last column shows.")


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarize(runs: list) -> list:
    """One row per (scenario, peer): medians over the successful runs, error
    counts summed over all of them (any error is worth seeing)."""
    groups, numbers = defaultdict(list), defaultdict(list)
    for r in runs:
        if r["ok"]:
            groups[(r["scenario"], r["peer"])].append(r["metrics"])
            numbers[(r["scenario"], r["peer"])].append(r.get("run"))
    rows = []
    for (scenario, peer), ms in groups.items():
        row = {"scenario": scenario, "peer": peer, "runs": len(ms)}
        # Each run's CPU figure (and its own `/` slices'), so targets can pair runs.
        row["cpu_by_run"] = [[n, m.get("cpu_us_per_req"), m.get("baseline_cpu_us_per_req")]
                             for n, m in zip(numbers[(scenario, peer)], ms)
                             if n is not None and m.get("cpu_us_per_req")]
        for key in ("rps", "p50_ms", "p90_ms", "p99_ms", "max_ms", "cpu_us_per_req",
                    "kib_per_conn", "rss_before_kib", "rss_after_kib", "connections",
                    "rss_start_kib", "rss_first_kib", "rss_end_kib", "rss_growth", "requests",
                    "baseline_cpu_us_per_req", "user_us_per_req", "baseline_user_us_per_req"):
            if any(key in m for m in ms):
                row[key] = _median(m.get(key) for m in ms)
        for key in ("errors", "non2xx", "length_mismatch"):
            row[key] = sum(m.get(key, 0) for m in ms)
        if any("alive" in m for m in ms):
            row["alive"] = min(m["alive"] for m in ms)
        if any("keepalive" in m for m in ms):
            row["keepalive"] = min(m["keepalive"] for m in ms)
            row["ab_requests"] = min(m["requests"] + m["errors"] for m in ms)
        if any("interleaved_with" in m for m in ms):
            row["interleaved_with"] = sorted(set().union(*(m.get("interleaved_with", [])
                                                           for m in ms)))
        rows.append(row)
    # Ratios against the reference peer, in the same scenario.
    ref_peer = reference(r["peer"] for r in rows)
    ref = {r["scenario"]: r for r in rows if r["peer"] == ref_peer}
    for row in rows:
        base = ref.get(row["scenario"], {})
        for key, out in (("cpu_us_per_req", "cpu_vs_ref"), ("kib_per_conn", "kib_vs_ref")):
            if row.get(key) is not None and base.get(key):
                row[out] = row[key] / base[key]
    return rows


def scenario_records(scenarios, seconds: int) -> list:
    """What the page needs to know of each scenario, as results.json keeps it."""
    return [{"id": s.id, "about": s.about, "params": s.params(seconds), "tool": s.tool,
             "conns": s.conns, "pipeline": s.pipeline} for s in scenarios]


def records_from(data: dict) -> list:
    """The scenario records of a results.json, as `markdown` takes them."""
    return _complete(data["scenarios"], data.get("scenario_tools", {}),
                     data["meta"].get("quick", False))


def _complete(records: list, tools: dict, quick: bool) -> list:
    """Fill in what an older results.json did not keep of a scenario (its tool,
    connections and pipelining depth) from the scenario table."""
    known = {s.id: s for s in for_mode(list(BY_ID.values()), quick)}
    out = []
    for rec in records:
        rec = dict(rec)
        s = known.get(rec["id"]) or BY_ID.get(rec["id"])
        rec.setdefault("tool", tools.get(rec["id"]) or (s.tool if s else "wrk"))
        rec.setdefault("conns", s.conns if s else 0)
        rec.setdefault("pipeline", s.pipeline if s else 0)
        out.append(rec)
    return out


def _n(v, digits=2, thousands=False):
    if v is None:
        return "–"
    if thousands:
        return f"{v:,.0f}"
    return f"{v:.{digits}f}"


def _ratio(v):
    return "–" if v is None else f"{v:.2f}×"


def _table(header: list, rows: list) -> list:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines


def _name(peer: str) -> str:
    return f"**{peer}**" if peer in OURS else peer


def _when(meta: dict) -> str:
    """`2026-11-22T07-09-43` as `2026-11-22 07:09`."""
    started = meta.get("started", "")
    date, _, time = started.partition("T")
    return f"{date} {time[:5].replace('-', ':')}".strip()


def _lead_table(rows: list, records: list, ref: str) -> list:
    """Peers by row, the lead figures by column; CPU figures with their ratio to the reference's.
    A run of none of the lead scenarios shows the CPU (or memory) figure of each of its own."""
    by = {(r["scenario"], r["peer"]): r for r in rows}
    ran = {r["scenario"] for r in rows}
    cols = [c for c in LEAD_COLUMNS if c[0] in ran]
    if not cols:
        cols = [(s["id"], "kib_per_conn", "KiB / connection") if s["tool"] in ("idle", "wsidle")
                else (s["id"], "cpu_us_per_req", "CPU µs/req") for s in records if s["id"] in ran]
    if not cols:
        return ["No peer completed a scenario."]
    peers = sorted({r["peer"] for r in rows if r["scenario"] in {c[0] for c in cols}},
                   key=lambda p: [x.name for x in PEERS].index(p) if p in PEERS_BY_NAME else 99)
    sort_col = next((c for c in cols if c[1] == "cpu_us_per_req"), cols[0])

    def sort_key(peer):
        v = by.get((sort_col[0], peer), {}).get(sort_col[1])
        return (v is None, v or 0)
    peers.sort(key=sort_key)
    header = ["peer"] + [f"{s} {label}" for s, _, label in cols]
    table = []
    for p in peers:
        row = [_name(p)]
        for s, key, _ in cols:
            r = by.get((s, p), {})
            v = r.get(key)
            if key == "rps":
                row.append(_n(v, thousands=True))
            elif key == "cpu_us_per_req":
                cell = _n(v, 2)
                if v is not None and r.get("cpu_vs_ref") is not None and p != ref:
                    cell += f" ({_ratio(r['cpu_vs_ref'])})"
                row.append(cell)
            else:
                row.append(_n(v, 2))
        table.append(row)
    meaning = [f"`{s}` is {LEAD_MEANING[s]}" for s in dict.fromkeys(c[0] for c in cols)
               if s in LEAD_MEANING]
    out = _table(header, table)
    out += ["", "Medians over the runs; rows ordered by the first column of CPU time. "
            + ("; ".join(meaning) + ". " if meaning else "")
            + "A CPU figure in brackets is that server's CPU per "
            f"request divided by {_called(ref)}'s in the same scenario (below 1× is cheaper than "
            f"{_called(ref)}). "
            "Every scenario, with its full table, is under [Every scenario](#every-scenario)."]
    return out


def _charts(charts_dir: Path, page_dir: Path) -> list:
    out = []
    for png, title in CHARTS:
        if (charts_dir / png).exists():
            rel = Path(os.path.relpath(charts_dir / png, page_dir)).as_posix()
            out += [f"![{title}]({rel})", ""]
    return out


def _runs_line(meta: dict) -> str:
    """How often each scenario ran, and what that means for drift on the machine."""
    warmup = f"{meta.get('warmup', 0)} s warm-up of the same load"
    by_scenario = meta.get("order") == "scenario"
    if meta["runs"] == 1:
        if by_scenario:
            return (f"- **Runs.** Every scenario runs once per server, after a {warmup}, against "
                    "every server in turn before the next scenario starts, so the servers a "
                    "ratio compares are measured minutes apart at most. A single window now "
                    "and then reads well above a server's usual figure (see bench/README.md), "
                    "so a difference of a few percent between two servers is not settled by one "
                    "run: `--runs 3` takes medians.")
        return (f"- **Runs.** Every scenario runs once per server, after a {warmup}. Each "
                "server's scenarios run back to back, so a slow minute on the machine lands on "
                "one server's figures: a ratio within a few percent of its target is not "
                "settled by one run.")
    order = ("each scenario runs against every server in turn before the next starts, and "
             if by_scenario else "")
    return (f"- **Runs.** Every scenario runs {meta['runs']} times per server, each after a "
            f"{warmup}; {order}every server's run 1 comes before any server's run 2, in an "
            "order that rotates between runs, so drift in the machine's load spreads over all "
            "servers. Tables show medians over the runs; errors are summed.")


def _method(meta: dict, records: list, ref: str, peers: list, paired: dict,
            with_targets: bool = True, interleaved: dict | None = None) -> list:
    """The method section; `paired` maps each peer that ran scenarios in slices alternating
    with `/` to those scenarios, `interleaved` each group of peers loaded in interleaved
    slices to those scenarios."""
    wrk_s = meta.get("seconds")
    fixed = next((r["params"] for r in records if r["tool"] == "fixedrate"), None)
    rounds = meta.get("slice_rounds", 1)
    lines = [
        f"- **One core each.** Each server runs on core {meta['server_core']} (`taskset`), "
        f"the load generators on core {meta['client_core']}; "
        + ("one server is under load at a time, while the others of the same protocol wait "
           "idle. After each run the next waits until the server just measured is idle again "
           f"(under {SETTLE_BUSY * 100:.0f} % of a core for {SETTLE_WINDOW_S} s), and one "
           f"still busy {SETTLE_LIMIT_S:.0f} s after its load stopped is restarted, so it cannot "
           "take the shared core from the servers measured after it."
           if meta.get("order") == "scenario" else "one server runs at a time."),
        _runs_line(meta) + f" wrk runs last {wrk_s} s"
        + (f"; the fixed-rate scenario is {fixed}" if fixed else "") + ".",
        "- **CPU per request** is the on-CPU time of every thread of the server's process tree "
        "during the measured run (from `/proc/PID/task/TID/schedstat`, in nanoseconds; from "
        "`/proc/PID/stat`'s 10 ms ticks when a thread ended during the run), divided by the "
        f"requests the server completed. \"vs {ref}\" divides it by {_called(ref)}'s figure in the "
        f"same scenario: below 1× is cheaper than {_called(ref)}.",
        f"- **The client saturates.** {SATURATION_NOTE}",
        "- **vireo** is the reference app (`crates/vireo/examples/reference.rs`, one worker): "
        "the framework with its two app-wide middlewares on every route, run with `--no-metrics` "
        "since no peer records metrics. **vireo-http** is the "
        "engine alone (`crates/vireo-http/examples/engine_hello.rs`, one worker). "
        + ("**vireo-python** is Vireo for Python's reference app (`python/examples/reference.py`, "
           "one worker, one app-wide middleware), built from the same checkout. "
           if "vireo-python" in peers else "")
        + "**floor-c** answers "
        "every request with a canned response and parses nothing: the cost of the kernel's "
        "socket calls alone.",
        "- **Idle memory** is read on a freshly started server, warmed first by 64 "
        "connections opened and closed the same way (so what a server pays once, such as "
        "code paged in on first use, is not charged per connection): its RSS, then N "
        "connections opened by `bench/tools/idleconns` (one request and response on each), "
        "a second's wait, its RSS again; KiB per connection = the growth / N. The kernel's "
        "socket buffers are not in RSS: this is the server's user-space cost.",
    ]
    if any(r["tool"] in ("h2load", "handshake", "wsecho", "wsidle") or r["id"] == "https-hello"
           for r in records):
        lines.append(
            "- **Protocols.** HTTP/2 is loaded by h2load (one thread, 100 connections × 10 "
            "streams; no latency percentiles), HTTPS/1.1 by wrk over TLS, TLS handshakes by ab "
            "without keep-alive (a new connection and a full handshake per request), WebSocket "
            "echo and idle WebSocket connections by `bench/tools/wsecho`. Each runs only on the "
            "peers that declare the protocol; every TLS peer serves the same self-signed "
            "ECDSA P-256 certificate with its library's default TLS settings. A WebSocket "
            "scenario's CPU figure is per message echoed.")
    if any(r["tool"] == "soak" for r in records):
        lines.append(
            "- **Memory soak** runs on a freshly started server, with no warm-up: wrk (one "
            "thread, `bench/wrk/soak.lua`) cycles its requests through the server's routes and "
            "stops after a tenth of them, the server's RSS is read, then a second wrk run sends "
            "the rest and the RSS is read again, each time after wrk has closed its connections.")
    if paired:
        which = "; ".join(f"{peer}'s {', '.join(f'`{sc}`' for sc in scs)}"
                          for peer, scs in sorted(paired.items()))
        ab_paired = any(r["tool"] == "ab" and any(r["id"] in scs for scs in paired.values())
                        for r in records)
        lines.append(
            "- **Routes against `/` on the same server.** Some routes are set against the "
            f"same server's `/`. Those scenarios ({which}) run in {4 * rounds} slices on one "
            "server" + (" (for ab, each slice a whole ab run)" if ab_paired else "") + ": "
            f"{slice_pattern('the route', '`/`', rounds=rounds)}"
            + (" (with the slices of the servers it is interleaved with, below, in between)"
               if interleaved else "")
            + "; the route's figures are its slices together, set against those of `/` between "
            "them, so drift in the machine's load over a run weighs on both alike.")
    if interleaved:
        which = "; ".join(f"{', '.join(group)} in {', '.join(f'`{sc}`' for sc in scs)}"
                          for group, scs in sorted(interleaved.items()))
        lines.append(
            "- **Peers compared by a target, interleaved.** Servers whose figures Vireo's "
            "targets set against each other are loaded in turn within one run, in "
            f"{2 * rounds} slices each of 1/{2 * rounds} of the run's length (for ab, each slice "
            f"a whole ab run), in the order {slice_pattern('A', 'B', 'C', rounds=rounds)}, so each "
            "has slices early and late and drift in the machine's load weighs on all alike; a "
            "server's figures are its slices together. Interleaved here: " + which + ".")
    if meta.get("timeit_compute") and with_targets:
        when = targets.timeit_when(meta, "vireo-python")
        lines.append(
            "- **The handler's own time.** " + when[:1].upper() + when[1:]
            + " the runner times its `/compute` handler with `timeit` (CPU time, the mean of "
            "its repeats), with the same Python on the server core; the targets set it "
            "against what `/compute` costs beyond `/` under load.")
    return lines


CAVEATS = [
    "- **Compare ratios within one run.** The machine may be shared, and the same server's "
    "runs can differ by a fifth when other work lands on its core; compare servers within "
    "one run, never figures across runs or machines.",
    "- **ab runs are short.** 10,000 requests are tens of milliseconds of server CPU, and the "
    "figure moves with ab's own pace (runs where ab drove fewer req/s cost every server more "
    "CPU per request). The wrk scenarios `compute` and `async` measure the same handlers as "
    "`ab-compute` and `ab-async` over longer runs. ab's latency percentiles come from its "
    "`-e` CSV file (microseconds; its printed report rounds to whole milliseconds).",
    "- **A slow route pays for waking the client.** Over loopback, the server's `send` also "
    "runs the client's receive path, and wakes the client if it sleeps. At `/` the client is "
    "busy all the time and rarely needs waking; at `/compute` the server is the bottleneck, the "
    "client sleeps between responses, and each response costs the server a wake-up on top of "
    "the handler's time (on a virtual machine, an inter-processor interrupt). That is part of "
    "what `/compute` costs beyond `/` here, and no server escapes it; over a real network the "
    "client's machine pays it.",
    "- **Pipelined latency** is not shown: wrk's latency histogram is not meaningful when it "
    "pipelines.",
    "- **Fixed rate.** wrk2 is not packaged in Debian; `bench/tools/fixedrate` stands in for "
    "it: an open-loop client that measures each request from when it was due, so a stall is "
    "charged to every request scheduled during it. At 1,000 req/s every request wakes the "
    "server from idle, and what a wake-up costs on a virtual machine moves between runs by "
    "more than the servers differ (4 s runs of one server spread 22–49 µs per request, "
    "hence runs of at least 12 s); read that scenario's CPU figure over many runs.",
    "- **Idle timeouts.** Node and uvicorn close idle keep-alive connections after 5 s (their "
    "defaults). When a server closed some before the memory was read, \"still open\" is "
    "below \"connections\" and its KiB figure is a lower bound.",
    "- Everything targets 127.0.0.1: loopback has no network latency or loss, so these runs "
    "compare the servers' own costs.",
]


def _scenario_detail(s: dict, srows: list, meta: dict, ref: str) -> list:
    out = ["", f"### {s['id']}", "", s["about"] + ".", "", f"Load: {s['params']}.", ""]
    if not srows:
        out.append("No peer completed this scenario.")
        return out
    if s["tool"] in ("idle", "wsidle"):
        srows.sort(key=lambda r: r.get("kib_per_conn") or 0)
        out += _table(
            ["peer", "connections", "still open", "RSS before (MiB)", "RSS after (MiB)",
             "KiB / connection", f"vs {ref}"],
            [[_name(r["peer"]), _n(r.get("connections"), thousands=True),
              _n(r.get("alive"), thousands=True), _n(r["rss_before_kib"] / 1024, 1),
              _n(r["rss_after_kib"] / 1024, 1), _n(r.get("kib_per_conn"), 2),
              _ratio(r.get("kib_vs_ref"))] for r in srows])
        if any((r.get("connections") or 0) < s["conns"] for r in srows):
            out += ["", f"Fewer than {s['conns']:,} connections: the descriptor limit was "
                    f"{meta['nofile']:,} and could not be raised (that needs CAP_SYS_RESOURCE), "
                    "so the count was capped just under it."]
        if any(r.get("alive", 0) < (r.get("connections") or 0) for r in srows):
            out += ["", "\"still open\" below \"connections\": the server closed idle "
                    "connections before the memory was read (an idle timeout), so its figure "
                    "is a lower bound."]
    elif s["tool"] == "soak":
        srows.sort(key=lambda r: r.get("rss_growth") or 0)
        out += _table(
            ["peer", "requests", "req/s", "p99 ms", "errors", "non-2xx", "CPU µs/req",
             "RSS at start (MiB)", "RSS after the first tenth (MiB)", "RSS at the end (MiB)",
             "end / first tenth"],
            [[_name(r["peer"]), _n(r.get("requests"), thousands=True), _n(r["rps"], thousands=True), _n(r["p99_ms"]), r["errors"], r["non2xx"],
              _n(r.get("cpu_us_per_req"), 2), _n(r["rss_start_kib"] / 1024, 1),
              _n(r["rss_first_kib"] / 1024, 1), _n(r["rss_end_kib"] / 1024, 1),
              _ratio(r.get("rss_growth"))] for r in srows])
    elif s["tool"] == "fixedrate":
        srows.sort(key=lambda r: r.get("p99_ms") or 0)
        out += _table(
            ["peer", "achieved req/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "errors",
             "non-2xx", "CPU µs/req", f"vs {ref}"],
            [[_name(r["peer"]), _n(r["rps"], thousands=True), _n(r["p50_ms"]),
              _n(r.get("p90_ms")), _n(r["p99_ms"]), _n(r.get("max_ms")), r["errors"],
              r["non2xx"], _n(r.get("cpu_us_per_req"), 2), _ratio(r.get("cpu_vs_ref"))]
             for r in srows])
    else:
        srows.sort(key=lambda r: -(r.get("rps") or 0))
        unit = "msg" if s["tool"] == "wsecho" else "req"   # WebSocket echo counts messages
        header = ["peer", f"{unit}/s", "p50 ms", "p99 ms", "errors", "non-2xx", f"CPU µs/{unit}",
                  f"vs {ref}"]
        if s["tool"] == "ab":
            header.append("keep-alive reqs")
        table = []
        for r in srows:
            row = [_name(r["peer"]), _n(r["rps"], thousands=True), _n(r["p50_ms"]),
                   _n(r["p99_ms"]), r["errors"], r["non2xx"],
                   _n(r.get("cpu_us_per_req"), 2), _ratio(r.get("cpu_vs_ref"))]
            if s["tool"] == "ab":
                row.append(f"{r['keepalive']:,} of {r['ab_requests']:,}")
            table.append(row)
        out += _table(header, table)
        if s["tool"] == "ab":
            out += ["", AB_NOTE]
        if s["tool"] == "h2load":
            out += ["", "Latency is not shown: h2load reports no percentiles."]
        if s["pipeline"]:
            out += ["", "Latency is not shown: wrk's histogram is not meaningful when it pipelines."]
    return out


def markdown(meta: dict, scenarios: list, rows: list, skipped: list,
             charts_dir: Path | None = None, page_dir: Path | None = None,
             with_targets: bool = True) -> str:
    """The results page. `scenarios` are records as `scenario_records` makes them;
    `charts_dir` holds the PNGs and `page_dir` is where the page is written, so
    the charts are linked relative to it. Without `with_targets` the page is for users:
    figures and method, no tables of Vireo's own targets."""
    scenarios = _complete(scenarios, {}, meta.get("quick", False))
    ids = [s["id"] for s in scenarios]
    ref = reference(r["peer"] for r in rows)
    by_scenario = defaultdict(list)
    for r in rows:
        by_scenario[r["scenario"]].append(r)
    versions = meta.get("versions") or {}
    commit = (versions.get("vireo_commit") or "")[:7]
    command = " ".join(["bench/run"] + list(meta.get("argv") or []))
    peers = [p.name for p in PEERS if any(r["peer"] == p.name for r in rows)]
    peers += sorted({r["peer"] for r in rows} - set(peers))
    # Full: no peer or scenario left out, judged by the command (the tables have grown since
    # older runs were made) or by what ran.
    argv = meta.get("argv") or []
    unfiltered = "argv" in meta and not any(a.split("=")[0] in ("--peers", "--scenarios") for a in argv)
    full = not meta.get("quick") and (unfiltered or (
        set(ids) >= set(BY_ID)
        and set(peers) | {k["peer"] for k in skipped if k["scenario"] == "all"} >= set(PEERS_BY_NAME)))
    what = "a full run, every peer in every scenario it serves" if full else \
        f"a run of {len(peers)} peer(s) in {len(ids)} scenario(s)"

    out = [
        "# Benchmarks",
        "",
        ("Vireo's reference app, its engine alone and Vireo for Python's reference app"
         if "vireo-python" in peers else "Vireo's reference app and its engine")
        + " against the servers the published write-ups compare (zap, tinyhttp, TechEmpower, "
        "TurboAPI), under the same loads, side by side in one run on one machine, with a "
        "canned-response epoll loop in C as the floor. "
        f"These are the figures of {what}, on {_when(meta)}"
        + (f" with Vireo at commit `{commit}`" if commit else "") + ". `bench/run` reproduces "
        "it (see `bench/README.md`) and writes this page from the run's `results.json`.",
    ]
    if meta.get("quick"):
        out += ["", "**Quick smoke run: short durations; these figures are not comparable to a "
                "full run's.**"]
    if meta.get("interrupted"):
        out += ["", "**Interrupted: partial results.**"]

    out += ["", "## Results", ""]
    lead = _lead_table(rows, scenarios, ref)
    out += lead + ([""] if lead else [])
    if charts_dir is not None and page_dir is not None:
        out += _charts(charts_dir, page_dir)
    if with_targets:
        out += targets.markdown(rows, meta, ids)

    out += ["## The machine and how to reproduce", ""]
    elapsed = meta.get("elapsed_s")
    out += [
        f"- **Machine:** {meta['machine']}; descriptor limit {meta['nofile']:,}.",
        f"- **Run:** `{command}`"
        + (f", {elapsed / 60:.0f} minutes" if elapsed else "") + ".",
    ]
    tools = ", ".join(f"{k} `{v.split(' Copyright')[0]}`" for k, v in versions.items()
                      if v and k != "vireo_commit")
    if tools:
        out.append(f"- **Tools:** {tools}.")
    out += [
        "- **Reproduce:** `bench/setup` installs and builds every peer and tool (Debian packages, "
        "a pinned Python venv, npm, Go and Cargo lockfiles), then the command above runs the "
        "same scenarios; `bench/README.md` explains each option. A run writes "
        "`bench/results/<timestamp>/`: `results.json` (every run's raw figures), this page as "
        "`results.md`, and the charts.",
        "- **Publish a run here:** copy its `results.json` and PNGs into `docs/bench/`, then "
        "`bench/run --report-only docs/bench --out docs/BENCHMARKS.md --no-targets` writes "
        "this page from them without running anything.",
        "",
        "### Method",
        "",
    ]
    paired = defaultdict(list)
    for r in rows:
        if r.get("baseline_cpu_us_per_req"):
            paired[r["peer"]].append(r["scenario"])
    interleaved = defaultdict(list)   # a group of peers -> the scenarios it ran interleaved
    for r in rows:
        if r.get("interleaved_with"):
            group = tuple(sorted({r["peer"], *r["interleaved_with"]}))
            if r["scenario"] not in interleaved[group]:
                interleaved[group].append(r["scenario"])
    out += _method(meta, scenarios, ref, peers, dict(paired), with_targets, dict(interleaved))
    out += ["", "### Caveats", ""] + CAVEATS

    out += ["", "## Peers", ""]
    out += _table(["peer", "what"], [[_name(p), PEERS_BY_NAME[p].about if p in PEERS_BY_NAME else ""]
                                     for p in peers])
    out += ["", "Each is held to one core: one worker, one runtime thread, `GOMAXPROCS=1`, one "
            "process, and `taskset` on top. `bench/README.md` gives each one's set-up."]

    out += ["", "## Every scenario"]
    for s in scenarios:
        out += _scenario_detail(s, by_scenario.get(s["id"], []), meta, ref)
    if skipped:
        # One row per peer and reason; the routes a peer does not serve make one row.
        grouped = defaultdict(lambda: ([], []))
        for k in skipped:
            route = k["reason"].removeprefix("has no ").removesuffix(" route")
            if route != k["reason"]:
                scs, routes = grouped[(k["peer"], None)]
                routes.append(f"`{route}`")
            else:
                scs, _ = grouped[(k["peer"], k["reason"])]
            scs.append(k["scenario"])
        out += ["", "### Not run", ""]
        out += _table(["peer", "scenarios", "why"],
                      [[peer, ", ".join(scs),
                        reason or "does not serve " + ", ".join(dict.fromkeys(routes))]
                       for (peer, reason), (scs, routes) in grouped.items()])
    return "\n".join(out) + "\n"
