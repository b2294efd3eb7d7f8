"""Short soak runs: a mixed keep-alive load must lose and fail nothing, with and without a
graceful shutdown (SIGTERM) in the middle of it."""

from __future__ import annotations

import soak


def _report(summary: dict) -> str:
    return soak.to_json({k: v for k, v in summary.items() if k != "rss_kib"})


def test_steady_mixed_load_loses_nothing():
    summary = soak.run_soak(requests=20_000, seconds=20, connections=50, seed=1)
    assert summary["ok"], _report(summary)
    assert summary["sent"] == summary["verified"] > 0, _report(summary)
    assert summary["lost"] == 0 and summary["failures"] == 0, _report(summary)
    # Every kind of request was exercised.
    assert set(summary["verified_by_kind"]) == {k for k, _ in soak.MIX}, _report(summary)


def test_sigterm_under_load_answers_or_cleanly_closes_everything():
    summary = soak.run_soak(requests=200_000, seconds=20, connections=50, sigterm_after=1.5, seed=2)
    assert summary["ok"], _report(summary)
    sig = summary["sigterm"]
    assert sig["exit_status"] == 0, _report(summary)
    assert sig["exit_after_s"] is not None and sig["exit_after_s"] <= soak.SHUTDOWN_BOUND, _report(summary)
    assert sig["partial_responses"] == 0, _report(summary)
    assert sig["post_signal_connects"].get("accepted_after_grace", 0) == 0, _report(summary)
    assert sig["post_signal_connects"].get("refused", 0) > 0, _report(summary)
    assert summary["verified"] > 0 and summary["lost"] == 0, _report(summary)


def test_sigterm_lets_slow_requests_in_flight_finish():
    """Requests already running when SIGTERM arrives (blocking 1 s sleeps, async 1 s waits, a
    long stream) get their complete answers, with `Connection: close`."""
    import asyncio

    from refserver import RefServer

    async def scenario(server: RefServer) -> list[tuple[str, object]]:
        host, port = server.addr

        async def one(path: str):
            reader, writer = await asyncio.open_connection(host, port)
            writer.write(f"GET {path} HTTP/1.1\r\nHost: t\r\n\r\n".encode())
            await writer.drain()
            try:
                resp = await asyncio.wait_for(soak.read_response(reader), 20)
                closed = await asyncio.wait_for(reader.read(1), 5) == b""
                return (path, (resp.status, resp.body, resp.asks_close(), closed))
            finally:
                writer.close()

        paths = ["/sleep?ms=1000", "/async?ms=1000", "/stream?chunks=20000"] * 3
        tasks = [asyncio.ensure_future(one(p)) for p in paths]
        await asyncio.sleep(0.3)
        server.terminate()
        return await asyncio.gather(*tasks)

    server = RefServer()
    try:
        results = asyncio.run(scenario(server))
        status = server.wait(soak.SHUTDOWN_BOUND + 5)
    finally:
        server.kill()
    assert status == 0
    stream = "".join(f"chunk {k}\n" for k in range(20000)).encode()
    expected = {"/sleep?ms=1000": b"slept 1000", "/async?ms=1000": b"waited 1000", "/stream?chunks=20000": stream}
    for path, (code, body, asks_close, closed) in results:
        assert code == 200 and body == expected[path], path
        assert closed, f"{path}: the connection stayed open after shutdown"
        if not path.startswith("/stream"):
            # A stream's head was sent before the signal; the others answer after it.
            assert asks_close, f"{path}: the answer during shutdown did not say Connection: close"


def test_sigterm_right_after_listening_is_graceful():
    """`listening on` is the documented sign that the server is up; a SIGTERM sent right after
    it must still be a graceful shutdown with status 0, not a death by the signal."""
    from refserver import RefServer

    statuses = []
    for _ in range(20):
        server = RefServer()
        server.terminate()
        statuses.append(server.wait(soak.SHUTDOWN_BOUND + 5))
        server.kill()
    assert statuses == [0] * len(statuses), f"exit statuses: {statuses} (-15: killed by SIGTERM)"
