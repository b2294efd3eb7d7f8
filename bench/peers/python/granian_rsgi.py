"""Granian's raw RSGI hello app: no framework, `GET` anything -> `Hello, World!`. Served by
`granian --interface rsgi granian_rsgi:app` (see harness/peers.py for the flags)."""

HEADERS = [("content-type", "text/plain")]
BODY = b"Hello, World!"


async def app(scope, protocol):
    protocol.response_bytes(200, HEADERS, BODY)
