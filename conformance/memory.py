#!/usr/bin/env python3
"""Does the server's memory stay flat under a long mixed load?

    python3 conformance/memory.py                     # 1,000,000 requests, about 1-3 minutes
    python3 conformance/memory.py --total 300000      # a shorter run

Starts the reference app (`$VIREO_REFERENCE_BIN`, default
`<repo>/target/release/examples/reference`), drives soak.py's mixed load through it, and reads
the server's RSS (VmRSS, /proc/PID/status) after the first `--baseline` requests (default
100,000) and again after `--total` (default 1,000,000). Each reading is taken after the load
has paused for `--settle` seconds, so both are taken in the same state. Prints both numbers and
their ratio as JSON; exits 1 if the ratio is above `--max-ratio` (default 1.10) or if any request
failed. Not part of pytest: too slow for CI.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import soak  # noqa: E402
from refserver import RefServer  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--total", type=int, default=1_000_000)
    p.add_argument("--baseline", type=int, default=100_000)
    p.add_argument("--connections", type=int, default=50)
    p.add_argument("--max-ratio", type=float, default=1.10)
    p.add_argument("--settle", type=float, default=3.0,
                   help="idle seconds before each reading (workers give freed memory back after 1-2 s of quiet)")
    p.add_argument("--max-seconds", type=float, default=1800.0, help="bound on the whole run")
    p.add_argument("--workers", type=int)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--mix", type=soak.parse_mix, help="request mix, as for soak.py (default: soak's)")
    args = p.parse_args(argv)
    if not 0 < args.baseline < args.total:
        p.error("need 0 < --baseline < --total")

    start = time.monotonic()
    server = RefServer(workers=args.workers)
    phases = []
    try:
        readings = {}
        for name, count in (("baseline", args.baseline), ("total", args.total - args.baseline)):
            left = args.max_seconds - (time.monotonic() - start)
            summary = soak.run_soak(requests=count, seconds=max(1.0, left), connections=args.connections,
                                    server=server, seed=args.seed + len(phases), rss_interval=5.0,
                                    mix=args.mix)
            phases.append({k: summary[k] for k in ("sent", "verified", "lost", "failures", "failed",
                                                   "req_per_s", "elapsed_s", "examples")}
                          | {"rss_kib_every_5s": [k for _, k in summary.get("rss_kib", {}).get("samples", [])]})
            time.sleep(args.settle)
            readings[name] = server.memory_kib()
        status = server.stop()
    finally:
        server.kill()
    sent = sum(ph["sent"] for ph in phases)
    ratio = readings["total"]["rss"] / readings["baseline"]["rss"]
    failures = sum(ph["failures"] + ph["lost"] for ph in phases)
    complete = sent >= args.total
    result = {
        "requests": sent,
        "rss_kib_after_baseline": readings["baseline"]["rss"],
        "baseline_requests": phases[0]["sent"],
        "rss_kib_after_total": readings["total"]["rss"],
        "ratio": round(ratio, 4),
        # The same readings split: private memory, and pages of the binary and libraries.
        "anon_kib": [readings["baseline"]["anon"], readings["total"]["anon"]],
        "file_kib": [readings["baseline"]["file"], readings["total"]["file"]],
        "max_ratio": args.max_ratio,
        "mix": args.mix or dict(soak.MIX),
        "failures": failures,
        "complete": complete,
        "server_exit_status": status,
        "elapsed_s": round(time.monotonic() - start, 1),
        "phases": phases,
    }
    print(soak.to_json(result))
    ok = ratio <= args.max_ratio and failures == 0 and complete and status == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
