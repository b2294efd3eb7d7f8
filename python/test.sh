#!/usr/bin/env bash
# Build the Python extension into a venv and run the Python tests.
#
#   python/test.sh [pytest args...]
#
# The venv is python/.venv, made if missing. CARGO_TARGET_DIR defaults to the repository's
# target directory, so the extension shares the Rust crates' build cache.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$(cd .. && pwd)/target}"
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check \
    maturin==1.16.0 pytest==9.2.0 pydantic==2.13.4 msgspec==0.22.0 \
    fastapi==0.165.0 starlette==1.10.0 uvicorn==0.54.0 websockets==17.4 flask==3.1.3 \
    django==5.2.19 'httpx[http2]==0.28.1' trustme==1.2.1 python-multipart==0.0.34 itsdangerous==2.2.0
cargo test --quiet
VIRTUAL_ENV="$here/.venv" PATH="$here/.venv/bin:$PATH" \
    .venv/bin/maturin develop --release --quiet
exec .venv/bin/python -m pytest -q "$@"
