"""The pure-Python cost of Vireo for Python's `/compute` handler: `timeit` on the reference app's
own `compute` function, run by the venv's Python (the one that serves it) on the server core,
just before, between the slices of, and just after the scenarios that load that handler.
The report sets it against the CPU `/compute` costs beyond `/` under load: like that figure,
it is CPU time (not wall time) and a mean (not the best of the repeats), so a machine whose
speed wanders from one second to the next weighs on both alike."""
from __future__ import annotations

import json
import subprocess

from .load import LoadError
from .server import SERVER_CORE
from .util import REPO, VENV_PY

PEER = "vireo-python"   # whose handler is timed
WHAT = ("`compute()` of python/examples/reference.py, by `timeit` in process CPU time "
        "(the mean of 5 repeats, taken before, between the slices of, and after each "
        "`/compute` scenario)")

_SCRIPT = """
import json, platform, statistics, sys, time, timeit
sys.path.insert(0, sys.argv[1])
from reference import compute
assert compute() == "332833500"
timer = timeit.Timer(compute, timer=time.process_time)
number, _ = timer.autorange()
times = [t / number * 1e6 for t in timer.repeat(repeat=5, number=number)]
print(json.dumps({"mean_us": statistics.mean(times), "best_us": min(times), "times_us": times,
                  "number": number, "python": platform.python_version()}))
"""


def compute_handler() -> dict:
    """{"mean_us", "best_us", "times_us", "number", "python"} for one timeit of the handler."""
    argv = ["taskset", "-c", SERVER_CORE, str(VENV_PY), "-c", _SCRIPT,
            str(REPO / "python" / "examples")]
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        raise LoadError("timeit of /compute's handler took over 120 s")
    if res.returncode != 0:
        raise LoadError("timeit of /compute's handler failed: " + res.stderr.strip()[-300:])
    return json.loads(res.stdout.strip().splitlines()[-1])

