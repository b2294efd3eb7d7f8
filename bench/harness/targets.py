"""Vireo for Python's performance targets, checked against a run's medians.

Each target compares figures of one run: Vireo for Python against another peer in the same
scenario, or against its own `/` (plaintext-100, or ab-hello for the ab scenarios). CPU
figures are server CPU µs per request. `evaluate` gives one row per target and scenario pair
that the run measured; `markdown` the table the results page shows."""
from __future__ import annotations

import statistics
from dataclasses import dataclass

PEER = "vireo-python"


@dataclass
class Row:
    target: str      # what is compared, in words
    scenarios: str   # where the figures come from
    figures: str     # the figures compared
    value: float     # the measured ratio
    limit: str       # the target, in words
    met: bool


def _cpu(by, scenario, peer=PEER):
    return by.get((scenario, peer), {}).get("cpu_us_per_req")


def _ratio(by, what, num, den, limit) -> Row | None:
    """num / den (each (scenario, peer)) against `value <= limit`."""
    a, b = _cpu(by, *num), _cpu(by, *den)
    if not a or not b:
        return None
    value = a / b
    where = num[0] if num[0] == den[0] else f"{num[0]} / {den[0]}"
    names = f"{num[1]} / {den[1]}" if num[1] != den[1] else num[1]
    return Row(what, f"{where} ({names})", f"{a:.2f} / {b:.2f} µs", value, f"≤ {limit:.2f}×",
               value <= limit)


def _compute(by, meta, compute, hello) -> Row | None:
    """(CPU of /compute - CPU of /) / the handler's timeit time, within 10 % of 1."""
    timed = (meta.get("timeit_compute") or {}).get("runs") or []
    c, h = _cpu(by, compute), _cpu(by, hello)
    if not timed or not c or not h:
        return None
    best = statistics.median(t["best_us"] for t in timed)
    value = (c - h) / best
    return Row("`/compute` CPU minus `/` CPU, against the handler's own time by `timeit`",
               f"{compute} − {hello}", f"({c:.2f} − {h:.2f}) / {best:.2f} µs", value,
               "0.90–1.10×", abs(value - 1) <= 0.10)


def evaluate(rows: list, meta: dict) -> list:
    """The targets this run measured, as Rows (ratios from the medians)."""
    by = {(r["scenario"], r["peer"]): r for r in rows}
    if not any(r["peer"] == PEER for r in rows):
        return []
    out = []
    for hello in ("plaintext-100", "ab-hello"):
        out.append(_ratio(by, "`/` against Granian's raw RSGI hello app",
                          (hello, PEER), (hello, "granian-rsgi"), 0.80))
        out.append(_ratio(by, "`/` against FastAPI on uvicorn",
                          (hello, PEER), (hello, "fastapi"), 0.10))
    out.append(_ratio(by, "`/users/{id}` (typed parameter, one middleware) against its own `/`",
                      ("users", PEER), ("plaintext-100", PEER), 1.25))
    out.append(_ratio(by, "`/json` against its own `/`", ("json", PEER), ("plaintext-100", PEER), 1.10))
    out.append(_ratio(by, "`async def` awaiting nothing (`/async-nowait`) against its own `def` `/`",
                      ("async-nowait", PEER), ("plaintext-100", PEER), 1.05))
    for a, h in (("async", "plaintext-100"), ("ab-async", "ab-hello")):
        out.append(_ratio(by, "`async def` awaiting `asyncio.sleep(0)` (`/async`) against its own `def` `/`",
                          (a, PEER), (h, PEER), 2.0))
    for c, h in (("compute", "plaintext-100"), ("ab-compute", "ab-hello")):
        out.append(_compute(by, meta, c, h))
    many, few = by.get(("ab-hello-500", PEER)), by.get(("ab-hello", PEER))
    if many and few and many.get("p99_ms") and few.get("p99_ms"):
        errors = many["errors"] + many["non2xx"] + many.get("length_mismatch", 0)
        value = many["p99_ms"] / few["p99_ms"]
        out.append(Row("500 connections: no errors, and p99 against p99 at 100 connections",
                       "ab-hello-500 / ab-hello",
                       f"{errors} errors; p99 {many['p99_ms']:.2f} / {few['p99_ms']:.2f} ms", value,
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


def markdown(rows: list, meta: dict) -> list:
    """The targets section of the results page (no lines when Vireo for Python did not run)."""
    found = evaluate(rows, meta)
    if not found:
        return []
    out = ["## Vireo for Python: targets", "",
           "Each target as measured in this run, from the medians below; CPU figures are server "
           "CPU µs per request.", ""]
    out += ["| target | scenarios | figures | measured | target | met |", "|---|---|---|---|---|---|"]
    for r in found:
        unit = " KiB" if r.limit.endswith("KiB") else "×"
        out.append(f"| {r.target} | {r.scenarios} | {r.figures} | {r.value:.2f}{unit} | {r.limit} | "
                   f"{'yes' if r.met else '**no**'} |")
    timed = (meta.get("timeit_compute") or {}).get("runs") or []
    if timed:
        out += ["", f"The `timeit` figure is {(meta['timeit_compute'].get('what') or 'the handler')}, "
                f"run by the server's Python ({timed[0].get('python', '?')}) on the server core "
                "before each run of the server; the median over the runs is used."]
    if meta.get("quick"):
        out += ["", "A quick run's figures are too short to judge a target by."]
    return out + [""]
