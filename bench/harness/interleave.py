"""Peers that targets set against each other, measured in interleaved slices.

A target compares two servers' CPU per request. Measured one after the other, minutes apart,
their ratio also carries whatever the shared machine did in between (see bench/README.md,
Interleaved peers). So in each scenario the peers of one group that
run it are loaded in turn, in slices ordered A B C C B A, twice over (`SLICE_ROUNDS`): each
gets slices early and late, and the slices of each lie between slices of the others. A peer's
figures are its slices' together, with the same load in all: each slice 1/SHARE of a run's
length, so they add up to one run, or for ab, whose runs are a count of requests, a whole run
each (the write-up's count, with its connections opened once per run as there)."""
from __future__ import annotations

import statistics

from . import targets
from .scenarios import SLICE_ROUNDS

# Load generators whose runs split into slices of the same load: a fixed duration or count.
SLICED_TOOLS = frozenset({"wrk", "ab", "fixedrate", "h2load", "wsecho"})


def groups() -> list:
    """The groups, each a tuple of peer names, no peer in two: the peers each group's
    targets compare."""
    protocol_peers = sorted(set().union(*(peers for peers, _ in targets.PROTOCOL_TARGETS.values()),
                                        targets.HTTPS_CIPHER_PEERS))
    serve: dict = {}
    for ours, theirs, *_ in targets.SERVE_TARGETS:
        serve.setdefault(ours, [ours]).append(theirs)
    found = [("vireo", targets.FLOOR_PEER, *protocol_peers),
             (targets.PEER, targets.RSGI_PEER),
             *(tuple(members) for members in serve.values())]
    names = [name for group in found for name in group]
    assert len(names) == len(set(names)), f"a peer in two interleaved groups: {names}"
    return found


def together(sc, peers: list) -> list:
    """The sets of `peers` (in their order) to measure interleaved in scenario `sc`: for each
    group, its members among `peers` (those that run `sc`), when two or more. A member that
    sets the scenario against its own `/` has slices of both routes in the interleaving."""
    if sc.tool not in SLICED_TOOLS:
        return []
    out = []
    for group in groups():
        members = [p for p in peers if p.name in group]
        if len(members) > 1:
            out.append(members)
    return out


def slice_order(members: list) -> list:
    """A B C C B A, SLICE_ROUNDS times over."""
    return (members + members[::-1]) * SLICE_ROUNDS


# Each slice is this fraction of a whole run, so each side's slices add up to one run.
SHARE = 2 * SLICE_ROUNDS


# Figures summed over a peer's slices; the rest of the latencies are the worse slice's, but p50,
# which is their mean, as `rps` is.
SUMMED = ("requests", "errors", "non2xx", "failed", "keepalive", "length_mismatch",
          "cpu_s", "user_s")
MEANS = ("rps", "p50_ms", "seconds")


def merge(slices: list) -> dict:
    """One peer's figures from its slices (each a load generator's metrics dict, with
    `cpu_s` and `user_s`)."""
    first = slices[0]
    out = {}
    for key, value in first.items():
        values = [s.get(key) for s in slices]
        if key == "raw":
            out[key] = values
        elif any(v is None for v in values) or not isinstance(value, (int, float)):
            out[key] = value if all(v == value for v in values) else None
        elif key in SUMMED:
            out[key] = sum(values)
        elif key in MEANS:
            out[key] = statistics.mean(values)
        else:
            out[key] = max(values)   # a latency: never flatters
    requests = out.get("requests")
    out["cpu_us_per_req"] = out["cpu_s"] * 1e6 / requests if requests else None
    out["user_us_per_req"] = out["user_s"] * 1e6 / requests if requests else None
    out["slices"] = [{"requests": s["requests"], "cpu_s": s["cpu_s"], "user_s": s["user_s"]}
                     for s in slices]
    return out
