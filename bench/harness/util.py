"""Small shared helpers: paths, logging, staleness checks."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent   # .../bench
REPO = BENCH.parent                               # the Vireo repository root
VENV = BENCH / ".venv"
VENV_PY = VENV / "bin" / "python"


def log(msg: str) -> None:
    # Progress goes to stderr so stdout stays clean for anything piped.
    print(msg, file=sys.stderr, flush=True)


def have(cmd: str) -> bool:
    return shutil.which(cmd) is not None


def stale(output: Path, inputs) -> bool:
    """True when output is missing or older than any input (make's rule)."""
    if not output.exists():
        return True
    built = output.stat().st_mtime
    return any(Path(p).stat().st_mtime > built for p in inputs)


def sh(cmd, cwd=None, env=None, nice=False, check=True, quiet=False):
    """Run a build command, echoing it. nice=True lowers priority so builds do not
    starve other people's work on the machine."""
    if nice:
        cmd = ["nice", "-n", "19"] + list(cmd)
    log("  $ " + " ".join(str(c) for c in cmd))
    full_env = dict(os.environ, **(env or {}))
    out = subprocess.DEVNULL if quiet else None
    res = subprocess.run(cmd, cwd=cwd, env=full_env, stdout=out)
    if check and res.returncode != 0:
        raise subprocess.CalledProcessError(res.returncode, cmd)
    return res.returncode == 0
