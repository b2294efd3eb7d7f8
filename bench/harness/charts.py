"""Bar charts of a results directory, one panel per scenario. Run with the
venv's Python (it has matplotlib): python charts.py RESULTS_DIR"""
import json
import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")   # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

OURS = ("vireo", "vireo-python")   # Vireo in orange
FLOOR = "floor-c"


def panels(path: Path, title: str, scenarios: list, rows: list, key: str, xlabel: str,
           ascending: bool) -> None:
    """One horizontal bar chart per scenario; Vireo in orange, the C floor in
    grey. The x axis is logarithmic: peers differ by up to 100x, and on a linear
    axis the slowest one flattens all the others."""
    shown = [s for s in scenarios if any(r["scenario"] == s and (r.get(key) or 0) > 0 for r in rows)]
    if not shown:
        return
    cols = min(3, len(shown))
    nrows = math.ceil(len(shown) / cols)
    most = max(sum(1 for r in rows if r["scenario"] == s) for s in shown)
    fig, axes = plt.subplots(nrows, cols, figsize=(6 * cols, (0.3 * most + 1.2) * nrows + 0.6),
                             squeeze=False)
    for ax, scenario in zip(axes.flat, shown):
        # A log axis cannot show zero or less (RSS can shrink when a GC runs).
        data = sorted(((r["peer"], r[key]) for r in rows
                       if r["scenario"] == scenario and (r.get(key) or 0) > 0),
                      key=lambda x: x[1], reverse=not ascending)
        names = [d[0] for d in data][::-1]    # barh draws bottom-up; best on top
        values = [d[1] for d in data][::-1]
        colors = ["tab:orange" if n in OURS else "tab:gray" if n == FLOOR else "tab:blue"
                  for n in names]
        ax.barh(names, values, color=colors)
        ax.set_xscale("log")
        ax.set_title(scenario)
        ax.set_xlabel(xlabel)
        ax.tick_params(axis="y", labelsize=8)
        for y, v in enumerate(values):
            label = f"{v:,.0f}" if v >= 100 else f"{v:.1f}" if v >= 1 else f"{v:.2f}"
            ax.text(v, y, " " + label, va="center", fontsize=7)
    for ax in list(axes.flat)[len(shown):]:
        ax.axis("off")
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 1, 0.98))   # leave room for the title
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(results_dir: Path) -> None:
    data = json.loads((results_dir / "results.json").read_text())
    rows, kinds = data["summary"], data["scenario_tools"]
    order = list(kinds)
    # WebSocket echo scenarios count messages where the others count requests.
    load = [s for s in order if kinds[s] in ("wrk", "ab", "h2load", "handshake", "wsecho")]
    panels(results_dir / "rps.png", "Requests (or WebSocket messages) per second (median; higher is better)",
           load, rows, "rps", "req/s", ascending=False)
    panels(results_dir / "cpu.png", "Server CPU µs per request or message (median; lower is better)",
           [s for s in order if kinds[s] in ("wrk", "ab", "fixedrate", "h2load", "handshake", "wsecho")], rows,
           "cpu_us_per_req", "µs/request", ascending=True)
    panels(results_dir / "idle.png", "Server memory per idle connection (lower is better)",
           [s for s in order if kinds[s] in ("idle", "wsidle")], rows, "kib_per_conn", "KiB/connection",
           ascending=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
