"""Shared pytest fixtures: a reference server started once per test module."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import rawhttp  # noqa: E402
from refserver import RefServer  # noqa: E402

SLOW = os.environ.get("VIREO_SLOW") == "1"


def pytest_collection_modifyitems(config, items):
    if SLOW:
        return
    skip = pytest.mark.skip(reason="slow (timeouts of 30-60 s): set VIREO_SLOW=1 to run")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="module")
def server():
    """The reference app on 127.0.0.1 and a free port, for the whole module."""
    srv = RefServer()
    try:
        yield srv
    finally:
        code = srv.stop()
        assert code == 0, f"reference server did not shut down cleanly (status {code})"


@pytest.fixture
def healthy(server):
    """After the test, the server must still be running and still answer `GET /`."""
    yield server
    assert server.alive(), "the server process died"
    resp = rawhttp.get(server.addr, "/")
    assert (resp.status, resp.body) == (200, b"Hello, World!")
