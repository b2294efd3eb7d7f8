"""`Depends(max_concurrency=N)`: at most N calls of a dependency at once on a worker's loop,
over real connections (concurrent clients against one worker), and its argument checks."""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Annotated

import pytest

from vireo import App, Depends, Security
from vireo.testclient import TestClient

APP = Path(__file__).resolve().parent / "apps" / "concurrency_app.py"


@pytest.fixture(scope="module")
def server():
    proc = subprocess.Popen(
        [sys.executable, str(APP), "127.0.0.1:0"], stdout=subprocess.PIPE, text=True
    )
    line = proc.stdout.readline()
    match = re.search(r"listening on http://[\d.]+:(\d+)", line)
    assert match, line
    yield int(match.group(1))
    proc.terminate()
    assert proc.wait(15) == 0


def get(port: int, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        res = conn.getresponse()
        return res.status, res.read()
    finally:
        conn.close()


def at_once(port: int, paths: list[str]) -> list[tuple[int, bytes]]:
    """GET every path from a thread of its own, all at once."""
    replies: list[tuple[int, bytes]] = [(0, b"")] * len(paths)
    start = threading.Barrier(len(paths))

    def one(i: int) -> None:
        start.wait()
        replies[i] = get(port, paths[i])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(paths))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return replies


class Pager:
    def __init__(self, page: int = 1):
        self.page = page


def peak(port: int, name: str) -> int:
    status, body = get(port, f"/peak/{name}")
    assert status == 200
    counts = json.loads(body)
    assert counts["now"] == 0, counts
    return counts["peak"]


def test_without_a_limit_the_calls_overlap(server):
    assert all(r == (200, b"unlimited") for r in at_once(server, ["/unlimited"] * 6))
    assert peak(server, "unlimited") > 2


def test_a_limited_dependency_runs_at_most_its_limit_at_once(server):
    assert all(r == (200, b"limited") for r in at_once(server, ["/limited"] * 6))
    assert peak(server, "limited") == 2


def test_a_sync_handler_with_a_limited_dependency_waits_on_the_loop(server):
    replies = at_once(server, ["/limited-sync-handler"] * 4)
    assert all(r == (200, b"sync-handler") for r in replies)
    assert peak(server, "sync-handler") == 1


def test_a_yield_dependency_keeps_its_place_until_its_teardown(server):
    assert all(r == (200, b"held") for r in at_once(server, ["/held"] * 4))
    assert peak(server, "held") == 1


def test_an_error_after_the_yield_gives_the_place_back(server):
    replies = at_once(server, ["/held?fail=true"] * 3)
    assert [status for status, _ in replies] == [409] * 3
    assert get(server, "/held") == (200, b"held")
    assert peak(server, "held") == 1


def test_a_dependency_that_raises_gives_its_place_back(server):
    replies = at_once(server, ["/refuses"] * 3)
    assert [status for status, _ in replies] == [418] * 3
    assert get(server, "/refuses")[0] == 418


def test_one_depends_object_is_one_count_across_routes(server):
    replies = at_once(server, ["/shared-a", "/shared-b"] * 3)
    assert all(r == (200, b"shared") for r in replies)
    assert peak(server, "shared") == 1


def test_each_depends_object_has_a_count_of_its_own(server):
    replies = at_once(server, ["/separate-a", "/separate-b"] * 3)
    assert all(r == (200, b"separate") for r in replies)
    assert peak(server, "separate") == 2


def test_an_override_keeps_the_limit_of_what_it_replaces(server):
    replies = at_once(server, ["/overridden"] * 4)
    assert all(r == (200, b"overridden") for r in replies)
    assert peak(server, "overridden") == 1


def test_a_blocking_routes_dependency_is_limited_among_the_pools_threads(server):
    replies = at_once(server, ["/blocking"] * 6)
    assert all(r == (200, b"blocking") for r in replies)
    assert peak(server, "blocking") == 2


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_a_limit_is_a_positive_integer(bad):
    with pytest.raises(ValueError, match="max_concurrency must be a positive integer or None"):
        Depends(lambda: 1, max_concurrency=bad)
    with pytest.raises(ValueError, match="max_concurrency must be a positive integer or None"):
        Security(lambda: 1, max_concurrency=bad)


calls: list[int] = []


def once():
    calls.append(1)
    yield "v"


limited_once = Depends(once, max_concurrency=1)


def inner(v: Annotated[str, limited_once]) -> str:
    return v + "!"


def test_a_value_reused_in_a_request_is_not_another_call():
    app = App()

    @app.get("/")
    def both(a: Annotated[str, limited_once], b: Annotated[str, Depends(inner)]):
        return [a, b]

    calls.clear()
    with TestClient(app) as client:
        for _ in range(3):
            assert client.get("/").json() == ["v", "v!"]
    assert len(calls) == 3


def test_a_limited_depends_without_a_callable_calls_its_annotation():
    app = App()

    @app.get("/")
    def read(p: Annotated[Pager, Depends(max_concurrency=1)]):
        return p.page

    with TestClient(app) as client:
        assert client.get("/?page=3").json() == 3
