#!/usr/bin/env bash
# FastAPI's own tutorial apps and their tests, run on Vireo with `fastapi` imports mapped to
# `vireo` (see fastapi_as_vireo.py): how much FastAPI code runs unchanged.
#
#   python/tools/fastapi_tutorials.sh [FASTAPI_VERSION] [PYTEST ARGS...]
#
# Downloads FastAPI's source release from PyPI (0.165.0 by default, the version the tests in
# python/tests compare against), unpacks it under a temporary directory, and runs its
# tests/test_tutorial with python/.venv's Python, with the packages the tutorials use
# installed beside it (not into the venv); those needing a database or another framework
# (SQLModel, Strawberry, a2wsgi) are reported as errors. Prints pytest's summary, then the
# failing test modules with their first message.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-$here/../.venv/bin/python}
version=${1:-0.165.0}
[ $# -ge 1 ] && shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" -m pip download --quiet --no-deps --no-binary :all: -d "$work" "fastapi==$version"
tar -xzf "$work"/fastapi-"$version".tar.gz -C "$work"
src="$work/fastapi-$version"
# What FastAPI's tests and its tutorial apps use besides FastAPI, pydantic and httpx.
"$python" -m pip install --quiet --target "$work/deps" --no-deps \
    inline-snapshot==0.36.1 dirty-equals==0.11 asttokens==3.0.2 executing==2.3.0 \
    rich==15.0.0 markdown-it-py==4.3.0 mdurl==0.1.2 pygments==2.21.0 \
    PyJWT==2.15.1 pydantic-settings==2.16.3 python-dotenv==1.2.4 email-validator==2.4.0 \
    dnspython==2.9.2 PyYAML==6.0.4 pwdlib==0.3.1 argon2-cffi==25.1.0 \
    argon2-cffi-bindings==26.2.0 cffi==2.1.1 pycparser==3.12
# The hook, loaded before any test module imports `fastapi`.
cat >"$src/conftest.py" <<EOF
import sys
sys.path.insert(0, "$here")
import fastapi_as_vireo  # noqa: F401
EOF
# FastAPI's pytest settings (warnings as errors, a timeout plugin) are not Vireo's; its
# OpenTelemetry tutorials (whose conftest needs opentelemetry-sdk) are about FastAPI's own
# instrumentation.
printf '[pytest]\naddopts = -p no:cacheprovider --ignore=docs_src\n' >"$src/pytest.ini"
rm -rf "$src/tests/test_tutorial/test_opentelemetry"
cd "$src"
status=0
PYTHONPATH="$work/deps" "$python" -m pytest -q -p no:warnings tests/test_tutorial \
    --continue-on-collection-errors --junitxml="$work/results.xml" "$@" >"$work/out.txt" 2>&1 \
    || status=$?
tail -n 1 "$work/out.txt"
"$python" - "$work/results.xml" <<'EOF'
import collections
import sys
import xml.etree.ElementTree as ET

failed = collections.defaultdict(list)
for case in ET.parse(sys.argv[1]).iter("testcase"):
    for kind in ("failure", "error"):
        found = case.find(kind)
        if found is not None:
            message = (found.get("message") or kind).splitlines()[0][:120]
            failed[case.get("classname") or "(collection)"].append(message)
for module, messages in sorted(failed.items()):
    print(f"{len(messages):3} {module.removeprefix('tests.test_tutorial.')}: {messages[0]}")
EOF
# pytest's status 1 means some tests failed, which this report expects; others are errors.
[ "$status" -le 1 ]
