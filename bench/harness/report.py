"""Turn the raw runs into medians, results.md and (through charts.py) PNGs."""
from __future__ import annotations

import statistics
from collections import defaultdict

from .scenarios import SATURATION_NOTE

REFERENCE = "vireo"   # ratios are against this peer


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarize(runs: list) -> list:
    """One row per (scenario, peer): medians over the successful runs, error
    counts summed over all of them (any error is worth seeing)."""
    groups = defaultdict(list)
    for r in runs:
        if r["ok"]:
            groups[(r["scenario"], r["peer"])].append(r["metrics"])
    rows = []
    for (scenario, peer), ms in groups.items():
        row = {"scenario": scenario, "peer": peer, "runs": len(ms)}
        for key in ("rps", "p50_ms", "p90_ms", "p99_ms", "max_ms", "cpu_us_per_req",
                    "kib_per_conn", "rss_before_kib", "rss_after_kib", "connections"):
            if any(key in m for m in ms):
                row[key] = _median(m.get(key) for m in ms)
        for key in ("errors", "non2xx", "length_mismatch"):
            row[key] = sum(m.get(key, 0) for m in ms)
        if any("alive" in m for m in ms):
            row["alive"] = min(m["alive"] for m in ms)
        if any("keepalive" in m for m in ms):
            row["keepalive"] = min(m["keepalive"] for m in ms)
            row["ab_requests"] = min(m["requests"] + m["errors"] for m in ms)
        rows.append(row)
    # Ratios against the reference peer, in the same scenario.
    ref = {r["scenario"]: r for r in rows if r["peer"] == REFERENCE}
    for row in rows:
        base = ref.get(row["scenario"], {})
        for key, out in (("cpu_us_per_req", "cpu_vs_ref"), ("kib_per_conn", "kib_vs_ref")):
            if row.get(key) is not None and base.get(key):
                row[out] = row[key] / base[key]
    return rows


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
    return f"**{peer}**" if peer == REFERENCE else peer


def markdown(meta: dict, scenarios: list, rows: list, skipped: list) -> str:
    by_scenario = defaultdict(list)
    for r in rows:
        by_scenario[r["scenario"]].append(r)
    out = [
        f"# Vireo benchmark results, {meta['started']}",
        "",
        f"Machine: {meta['machine']}. Servers pinned to core {meta['server_core']}, "
        f"load generators to core {meta['client_core']}. "
        f"{meta['runs']} run(s) per scenario, medians shown; errors and non-2xx are summed over runs."
        + (" **Quick smoke run: short durations, numbers are not comparable to a full run.**"
           if meta["quick"] else "")
        + (" **Interrupted: partial results.**" if meta.get("interrupted") else ""),
        "",
        "CPU µs/req is the server's whole process tree user+system CPU time during the run "
        "(from /proc) divided by the requests it completed; \"vs vireo\" divides that by Vireo's "
        "figure in the same scenario (below 1 means cheaper than Vireo). The kernel counts CPU "
        "time in 10 ms ticks, so a run's CPU µs/req is good to ±10 ms / requests: ±1 µs for an ab "
        "run of 10,000 requests, far less for a 10 s wrk run. ab reports latency in whole ms.",
        "",
        f"> {SATURATION_NOTE}",
    ]
    for s in scenarios:
        srows = by_scenario.get(s.id)
        out += ["", f"## {s.id}", "", s.about + ".", "", f"Load: {s.params(meta['seconds'])}.", ""]
        if not srows:
            out.append("No peer completed this scenario.")
            continue
        if s.tool == "idle":
            srows.sort(key=lambda r: r.get("kib_per_conn") or 0)
            out += _table(
                ["peer", "connections", "still open", "RSS before (MiB)", "RSS after (MiB)",
                 "KiB / connection", "vs vireo"],
                [[_name(r["peer"]), _n(r.get("connections"), thousands=True),
                  _n(r.get("alive"), thousands=True), _n(r["rss_before_kib"] / 1024, 1),
                  _n(r["rss_after_kib"] / 1024, 1), _n(r.get("kib_per_conn"), 2),
                  _ratio(r.get("kib_vs_ref"))] for r in srows])
            if any((r.get("connections") or 0) < s.conns for r in srows):
                out += ["", f"Fewer than {s.conns:,} connections: the descriptor limit here is "
                        f"{meta['nofile']:,} and could not be raised (that needs CAP_SYS_RESOURCE), "
                        "so the count was capped just under it."]
            if any(r.get("alive", 0) < (r.get("connections") or 0) for r in srows):
                out += ["", "\"still open\" below \"connections\": the server closed idle "
                        "connections before the memory was read (an idle timeout), so its figure "
                        "is a lower bound."]
        elif s.tool == "fixedrate":
            srows.sort(key=lambda r: r.get("p99_ms") or 0)
            out += _table(
                ["peer", "achieved req/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "errors",
                 "non-2xx", "CPU µs/req", "vs vireo"],
                [[_name(r["peer"]), _n(r["rps"], thousands=True), _n(r["p50_ms"]),
                  _n(r.get("p90_ms")), _n(r["p99_ms"]), _n(r.get("max_ms")), r["errors"],
                  r["non2xx"], _n(r.get("cpu_us_per_req"), 2), _ratio(r.get("cpu_vs_ref"))]
                 for r in srows])
        else:
            srows.sort(key=lambda r: -(r.get("rps") or 0))
            header = ["peer", "req/s", "p50 ms", "p99 ms", "errors", "non-2xx", "CPU µs/req",
                      "vs vireo"]
            if s.tool == "ab":
                header.append("keep-alive reqs")
            table = []
            for r in srows:
                row = [_name(r["peer"]), _n(r["rps"], thousands=True), _n(r["p50_ms"]),
                       _n(r["p99_ms"]), r["errors"], r["non2xx"],
                       _n(r.get("cpu_us_per_req"), 2), _ratio(r.get("cpu_vs_ref"))]
                if s.tool == "ab":
                    row.append(f"{r['keepalive']:,} of {r['ab_requests']:,}")
                table.append(row)
            out += _table(header, table)
            if s.tool == "ab":
                out += ["", "ab speaks HTTP/1.0 and keeps a connection open only when the response "
                        "says `keep-alive`; a server that answers in HTTP/1.1 style without saying "
                        "so gets a new connection per request, which the last column shows."]
            if s.pipeline:
                out += ["", "Latency is not shown: wrk's histogram is not meaningful when it pipelines."]
    if skipped:
        out += ["", "## Not run", "", "| peer | scenario | why |", "|---|---|---|"]
        out += [f"| {k['peer']} | {k['scenario']} | {k['reason']} |" for k in skipped]
    return "\n".join(out) + "\n"
