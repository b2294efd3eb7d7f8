"""Install and build everything the benchmark needs, skipping what is built.

Each step checks its outputs first, so a rerun costs seconds. A failing step
only takes out the peers that need it: the run goes on without them. Builds
run under `nice -n 19` with one job at a time, because the machine is shared
with people compiling; cargo builds never run two at once.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

from .peers import CERT, CERT_DIR, KEY, VIREO_BIN, Peer, vireo_target
from .util import BENCH, REPO, VENV, VENV_PY, have, log, sh, stale

# Debian packages and the command each one provides.
APT = {"wrk": "wrk", "ab": "apache2-utils", "nginx": "nginx", "curl": "curl",
       "h2load": "nghttp2-client", "openssl": "openssl"}


def _apt() -> None:
    missing = sorted({pkg for cmd, pkg in APT.items() if not have(cmd)})
    if not missing:
        return
    if os.geteuid() != 0:
        raise RuntimeError(f"need root to apt-get install {' '.join(missing)}")
    log(f"installing Debian packages: {' '.join(missing)}")
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    sh(["apt-get", "update"], env=env, quiet=True)
    sh(["apt-get", "install", "-y", "--no-install-recommends", *missing], env=env, quiet=True)


def _venv() -> None:
    # The stamp records which requirements.txt the venv was made from.
    req = BENCH / "requirements.txt"
    stamp = VENV / ".requirements.sha256"
    digest = hashlib.sha256(req.read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == digest and VENV_PY.exists():
        return
    log("creating bench/.venv (FastAPI, uvicorn, Granian, Robyn, maturin, matplotlib)")
    if not VENV_PY.exists():
        sh(["python3", "-m", "venv", str(VENV)])
    sh([str(VENV_PY), "-m", "pip", "install", "--quiet", "-r", str(req)], nice=True)
    stamp.write_text(digest)


def _node() -> None:
    d = BENCH / "peers" / "node"
    # npm ci writes node_modules/.package-lock.json; it is newer than the lock
    # file exactly when node_modules matches the lock file.
    if stale(d / "node_modules" / ".package-lock.json", [d / "package-lock.json"]):
        log("installing Node peers' packages (npm ci)")
        sh(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=d, nice=True)


def _go_build(module: Path, pkgs: list) -> None:
    common = [module / "go.mod"] + ([module / "go.sum"] if (module / "go.sum").exists() else [])
    for pkg in pkgs:
        out = module / "bin" / pkg
        if stale(out, common + list((module / pkg).glob("*.go"))):
            sh(["go", "build", "-p", "1", "-o", str(out), f"./{pkg}"], cwd=module, nice=True)


def _go() -> None:
    _go_build(BENCH / "peers" / "go", ["nethttp", "fasthttp", "ws"])


def _tools() -> None:
    _go_build(BENCH / "tools", ["fixedrate", "idleconns", "wsecho"])


def _certs() -> None:
    """One self-signed certificate for 127.0.0.1 and localhost that every TLS peer serves:
    ECDSA P-256, as a modern deployment would choose."""
    if CERT.exists() and KEY.exists():
        return
    CERT_DIR.mkdir(exist_ok=True)
    sh(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
        "-nodes", "-keyout", str(KEY), "-out", str(CERT), "-days", "3650",
        "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
       quiet=True)


def _c() -> None:
    d = BENCH / "peers" / "c"
    if stale(d / "bin" / "floor", [d / "floor.c"]):
        (d / "bin").mkdir(exist_ok=True)
        sh(["gcc", "-O2", "-Wall", "-o", "bin/floor", "floor.c"], cwd=d, nice=True)


def _cargo(args: list, cwd: Path, env=None):
    """One cargo build, niced and single-job. Cargo itself knows what is fresh,
    so a rerun with nothing changed takes about a second. Returns None on
    success, or the first error cargo reported (its output's tail is shown)."""
    cmd = ["nice", "-n", "19", "cargo", "build", "--release", "-j1", *args]
    log("  $ " + " ".join(cmd))
    res = subprocess.run(cmd, cwd=cwd, env=dict(os.environ, **(env or {})),
                         capture_output=True, text=True)
    if res.returncode == 0:
        return None
    lines = res.stderr.splitlines()
    log("\n".join("    " + l for l in lines[-25:]))
    return next((l for l in lines if l.startswith("error")), "cargo build failed")


def _rust() -> None:
    d = BENCH / "peers" / "rust"
    # Pin the target dir inside bench/ even if the environment sets another.
    env = {"CARGO_TARGET_DIR": str(d / "target")}
    if not (d / "target").exists():
        log("  (a first build of the Rust peers takes several minutes at -j1)")
    if _cargo(["--workspace"], d, env) is None:
        return
    # Build them one by one so one broken peer does not take out the others;
    # the availability check afterwards names the ones still missing.
    for member in ["actix-web", "axum", "hyper", "may_minihttp", "rust-book", "ws-tungstenite"]:
        _cargo(["-p", "peer-" + member.replace("_", "-")], d, env)


def _vireo(package: str, example: str) -> None:
    if not (REPO / "Cargo.toml").exists():
        raise RuntimeError("no Cargo.toml at the repository root yet")
    error = _cargo(["-p", package, "--example", example], REPO)
    if error:
        raise RuntimeError(f"cargo build -p {package} --example {example}: {error}")
    # Cargo puts examples of every package in one directory: keep a copy of exactly the binary
    # just built, under its package's name.
    built = vireo_target() / "release" / "examples" / example
    VIREO_BIN.mkdir(exist_ok=True)
    shutil.copy2(built, VIREO_BIN / f"{package}-{example}")


def _vireo_python() -> None:
    """Vireo for Python from this checkout: maturin builds python/ into a wheel (release
    profile, one job, niced; cargo skips what is fresh) and pip installs it into the venv."""
    maturin = VENV / "bin" / "maturin"
    if not maturin.exists():
        raise RuntimeError("bench/.venv has no maturin (the venv step failed?)")
    wheels = BENCH / ".wheels"
    shutil.rmtree(wheels, ignore_errors=True)
    cmd = ["nice", "-n", "19", str(maturin), "build", "--release", "--jobs", "1", "--quiet",
           "--manifest-path", str(REPO / "python" / "Cargo.toml"),
           "--interpreter", str(VENV_PY), "--out", str(wheels)]
    log("  $ " + " ".join(cmd))
    # The extension shares the Rust crates' build cache, as python/test.sh does.
    env = dict(os.environ, CARGO_TARGET_DIR=str(vireo_target()))
    res = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if res.returncode != 0:
        lines = (res.stderr or res.stdout).splitlines()
        log("\n".join("    " + l for l in lines[-25:]))
        raise RuntimeError("maturin build: " + next((l for l in lines if "error" in l.lower()),
                                                    "failed"))
    wheel = next(wheels.glob("*.whl"), None)
    if wheel is None:
        raise RuntimeError(f"maturin build left no wheel in {wheels}")
    # The stamp records which wheel is installed: an unchanged build is not installed again.
    # It hashes the package's files, not the zip or its metadata (an SBOM with a fresh
    # serial number and time, and RECORD, which hashes it), which change with every build.
    stamp = VENV / ".vireo-wheel.sha256"
    digest = hashlib.sha256()
    with zipfile.ZipFile(wheel) as z:
        for name in sorted(n for n in z.namelist() if ".dist-info/" not in n):
            digest.update(name.encode() + b"\0" + z.read(name))
    digest = digest.hexdigest()
    if stamp.exists() and stamp.read_text() == digest and _runnable_vireo_python():
        return
    sh([str(VENV_PY), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
        "--force-reinstall", "--no-deps", str(wheel)])
    stamp.write_text(digest)


def _runnable_vireo_python() -> bool:
    return any(VENV.glob("lib/python*/site-packages/vireo/_vireo*.so"))


STEPS = {
    "apt": _apt,
    "venv": _venv,
    "tools": _tools,
    "certs": _certs,
    "c": _c,
    "go": _go,
    "node": _node,
    "rust": _rust,
    "vireo": lambda: _vireo("vireo", "reference"),
    "vireo-http": lambda: _vireo("vireo-http", "engine_hello"),
    "vireo-python": _vireo_python,
}
TOOLCHAIN = {"venv": "python3", "tools": "go", "certs": "openssl", "go": "go", "node": "npm", "c": "gcc",
             "rust": "cargo", "vireo": "cargo", "vireo-http": "cargo", "vireo-python": "cargo"}


def build(peers: list, no_build: bool = False) -> dict:
    """Run the build steps these peers need (plus the harness's own tools).
    Returns {peer name: reason it is unavailable} for the peers that are not."""
    failed = {}
    for step in dict.fromkeys(["apt", "venv", "tools", "certs"] + [p.build for p in peers]):
        if step in failed or no_build:
            continue
        tool = TOOLCHAIN.get(step)
        if tool and not have(tool):
            failed[step] = f"`{tool}` is not installed"
            continue
        log(f"build: {step}")
        try:
            STEPS[step]()
        except (subprocess.CalledProcessError, RuntimeError, OSError) as e:
            failed[step] = str(e)
            log(f"build: {step} FAILED: {e}")
    unavailable = {}
    for p in peers:
        if p.build in failed:
            unavailable[p.name] = f"build step '{p.build}' failed: {failed[p.build]}"
        elif not _runnable(p):
            unavailable[p.name] = "not built" + (" (run without --no-build)" if no_build else "")
    return unavailable


def _runnable(p: Peer) -> bool:
    if p.build == "vireo-python":   # the venv's Python is there before the wheel is
        return _runnable_vireo_python()
    exe = str(p.argv[0])
    return Path(exe).is_file() if os.sep in exe else have(exe)


def harness_ready() -> list:
    """What the runner itself needs; returns what is missing."""
    needed = [("wrk", have("wrk")), ("ab", have("ab")), ("taskset", have("taskset")),
              ("tools/bin/fixedrate", (BENCH / "tools/bin/fixedrate").exists()),
              ("tools/bin/idleconns", (BENCH / "tools/bin/idleconns").exists())]
    return [name for name, ok in needed if not ok]


def tool_missing(sc) -> str | None:
    """What a protocol scenario needs that this machine lacks (the scenario is then skipped
    with that reason, rather than the whole run stopped), or None."""
    if sc.tool == "h2load" and not have("h2load"):
        return "h2load (nghttp2-client) is not installed"
    if sc.tool in ("wsecho", "wsidle") and not (BENCH / "tools/bin/wsecho").exists():
        return "tools/bin/wsecho is not built"
    if sc.protocol in ("h2", "https") and not (CERT.exists() and KEY.exists()):
        return "the bench certificate (bench/.certs/) is missing"
    if sc.protocol == "h2c" and not have("curl"):
        return "curl is not installed (it checks the h2c routes)"
    return None
