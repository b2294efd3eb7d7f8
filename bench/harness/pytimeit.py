"""The pure-Python cost of Vireo for Python's `/compute` handler: `timeit` on the reference app's
own `compute` function, run by the venv's Python (the one that serves it) on the server core,
just before that handler is loaded.
The report sets it against the CPU `/compute` costs beyond `/` under load."""
from __future__ import annotations

import json
import subprocess

from .load import LoadError
from .server import SERVER_CORE
from .util import REPO, VENV_PY

PEER = "vireo-python"   # whose handler is timed
WHAT = "`compute()` of python/examples/reference.py, by `timeit` (best of 5, as `python -m timeit` reports)"

_SCRIPT = """
import json, platform, sys, timeit
sys.path.insert(0, sys.argv[1])
from reference import compute
assert compute() == "332833500"
timer = timeit.Timer(compute)
number, _ = timer.autorange()
times = [t / number * 1e6 for t in timer.repeat(repeat=5, number=number)]
print(json.dumps({"best_us": min(times), "times_us": times, "number": number,
                  "python": platform.python_version()}))
"""


def compute_handler() -> dict:
    """{"best_us", "times_us", "number", "python"} for one timeit of the handler."""
    argv = ["taskset", "-c", SERVER_CORE, str(VENV_PY), "-c", _SCRIPT,
            str(REPO / "python" / "examples")]
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        raise LoadError("timeit of /compute's handler took over 120 s")
    if res.returncode != 0:
        raise LoadError("timeit of /compute's handler failed: " + res.stderr.strip()[-300:])
    return json.loads(res.stdout.strip().splitlines()[-1])
