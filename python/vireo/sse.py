"""Server-Sent Events, as FastAPI has them: a route whose handler `yield`s, with
`response_class=EventSourceResponse`, sends each item as an event (`text/event-stream`):

    @app.get("/items/stream", response_class=EventSourceResponse)
    async def stream() -> AsyncIterable[Item]:
        for item in items:
            yield item                                   # data: {"name": ...}

    yield ServerSentEvent(data=item, event="update", id="7", retry=5000)

A plain item is its JSON as the event's `data`; a `ServerSentEvent` sets the fields itself.
While the handler yields nothing for `PING_INTERVAL` seconds, a `: ping` comment is sent, so
proxies keep the connection open; a sync handler's generator is pulled on a thread for that.
"""

from __future__ import annotations

from typing import Any

from .responses import EventSourceResponse

# The keep-alive comment, and the seconds of silence before one is sent.
KEEPALIVE_COMMENT = b": ping\n\n"
PING_INTERVAL = 15.0


class ServerSentEvent:
    """One event: `data` (sent as JSON) or `raw_data` (sent as it is), an `event` type, an
    `id` (what a reconnecting client sends back as `Last-Event-ID`), a `retry` delay in
    milliseconds and a `comment`. A value that cannot be sent (an `event` or `id` of several
    lines, a negative `retry`, both kinds of data) is a `ValueError`."""

    __slots__ = ("data", "raw_data", "event", "id", "retry", "comment")

    def __init__(self, *, data: Any = None, raw_data: str | None = None,
                 event: str | None = None, id: str | None = None, retry: int | None = None,
                 comment: str | None = None) -> None:
        # FastAPI's messages, which code written for it may match.
        if data is not None and raw_data is not None:
            raise ValueError("Cannot set both 'data' and 'raw_data' on the same "
                             "ServerSentEvent: 'data' is sent as JSON, 'raw_data' as it is")
        for name, value in (("event", event), ("id", id)):
            if value is not None and ("\r" in value or "\n" in value):
                raise ValueError(f"SSE '{name}' must be a single line")
        if id is not None and "\0" in id:
            raise ValueError("SSE 'id' must not contain null characters")
        if retry is not None and (isinstance(retry, bool) or not isinstance(retry, int)
                                  or retry < 0):
            raise ValueError("SSE 'retry' is a number of milliseconds (an int >= 0)")
        self.data = data
        self.raw_data = raw_data
        self.event = event
        self.id = id
        self.retry = retry
        self.comment = comment

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__
                           if getattr(self, name) is not None)
        return f"ServerSentEvent({fields})"


def _lines(text: str) -> list[str]:
    """`text` split at the line ends the event stream format knows (CRLF, LF, CR)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def format_sse_event(*, data_str: str | None = None, event: str | None = None,
                     id: str | None = None, retry: int | None = None,
                     comment: str | None = None) -> bytes:
    """One event in the wire format: a comment, `event:`, `data:` (a line each), `id:` and
    `retry:` lines, then the blank line that ends it."""
    lines = [f": {line}" for line in _lines(comment)] if comment is not None else []
    if event is not None:
        lines.append(f"event: {event}")
    if data_str is not None:
        lines.extend(f"data: {line}" for line in _lines(data_str))
    if id is not None:
        lines.append(f"id: {id}")
    if retry is not None:
        lines.append(f"retry: {retry}")
    return "\n".join([*lines, "", ""]).encode()


__all__ = ["EventSourceResponse", "ServerSentEvent", "format_sse_event", "KEEPALIVE_COMMENT"]
