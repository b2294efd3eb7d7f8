"""Calling a WSGI (PEP 3333) application for `vireo serve`: `start_response` with `exc_info`,
`write()`, `wsgi.file_wrapper`, and the result closed however it ends. Runs on the engine's
blocking pool; the native side builds the rest of the environ."""

from __future__ import annotations

import io
import sys
from typing import Any, Iterable, Iterator


class FileWrapper:
    """`wsgi.file_wrapper`: a file-like object read in blocks, closed with the result."""

    def __init__(self, filelike: Any, blksize: int = 65536) -> None:
        self.filelike = filelike
        self.blksize = blksize
        if hasattr(filelike, "close"):
            self.close = filelike.close

    def __iter__(self) -> Iterator[bytes]:
        read = self.filelike.read
        while True:
            block = read(self.blksize)
            if not block:
                return
            yield block


def call_wsgi(app: Any, environ: dict[str, Any], body: Any) -> tuple[Any, ...]:
    """Call `app`; returns `(status, headers, chunks, rest, result)`: the status and headers it
    started the response with, the chunks up to the first non-empty one (or all of them when
    the result is a list or tuple, `rest` then `None`), and the iterator for the rest."""
    # The body as a file: streamed from the engine (`_vireo.WsgiInput`), or bytes given whole.
    environ["wsgi.input"] = io.BytesIO(body) if isinstance(body, bytes) else body
    environ["wsgi.errors"] = sys.stderr
    environ["wsgi.file_wrapper"] = FileWrapper
    started: list[Any] = [None, None]
    sent = False
    written: list[bytes] = []

    def write(data: bytes) -> None:
        nonlocal sent
        if started[0] is None:
            raise AssertionError("write() before start_response()")
        data = _as_bytes(data)
        if data:
            sent = True  # the head goes out with the first bytes written (PEP 3333)
        written.append(data)

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        if exc_info:
            try:
                if sent:
                    raise exc_info[1].with_traceback(exc_info[2])
            finally:
                exc_info = None
        elif started[0] is not None:
            raise AssertionError("start_response() called a second time without exc_info")
        if not isinstance(status, str):
            raise TypeError(f"the WSGI status must be a str, not {type(status).__name__}")
        for pair in headers:
            name, value = pair
            if not isinstance(name, str) or not isinstance(value, str):
                raise TypeError(f"WSGI header names and values must be str: {pair!r}")
        started[0], started[1] = status, list(headers)
        return write

    result: Iterable[bytes] = app(environ, start_response)
    closed = False

    def close() -> None:
        nonlocal closed
        if not closed:
            closed = True
            _close(result)

    try:
        if isinstance(result, (list, tuple)):
            chunks = written + [_as_bytes(c) for c in result]
            close()
            if started[0] is None:
                raise RuntimeError("the WSGI application returned without calling start_response()")
            return started[0], started[1], chunks, None, result
        rest = iter(result)
        chunks: list[bytes] = []
        for chunk in rest:
            if written:
                _take_written(chunks, written)
            chunks.append(chunk if type(chunk) is bytes else _yielded(chunk))
            if chunk:
                break
        else:
            if written:
                _take_written(chunks, written)
            close()
            if started[0] is None:
                raise RuntimeError("the WSGI application returned without calling start_response()")
            return started[0], started[1], chunks, None, result
        if started[0] is None:
            raise RuntimeError("the WSGI application yielded before calling start_response()")
        sent = True  # from here on, as if the head had gone out
        if _declared_length(started[1]) == sum(map(len, chunks)):
            # The whole declared body is here (Flask's and Django's usual case): end the result
            # now, on this thread, rather than on a second trip to the pool for its end.
            for chunk in rest:
                more = len(chunks)
                if written:
                    _take_written(chunks, written)
                chunks.append(chunk if type(chunk) is bytes else _yielded(chunk))
                if any(chunks[more:]):
                    break  # more than declared: streamed, and cut off there
            else:
                if written:
                    _take_written(chunks, written)
                close()
                return started[0], started[1], chunks, None, result
        return started[0], started[1], chunks, _with_written(rest, written), result
    except BaseException:
        close()
        raise


def _as_bytes(data: Any) -> bytes:
    """A chunk of the body, as bytes; anything but a bytes-like object is refused."""
    if isinstance(data, bytes):
        return data
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    raise TypeError(f"a WSGI response body is made of bytes, not {type(data).__name__}")


def _yielded(chunk: Any) -> bytes:
    if not isinstance(chunk, bytes):
        raise TypeError(f"a WSGI application must yield bytes, not {type(chunk).__name__}")
    return chunk


def _take_written(chunks: list[bytes], written: list[bytes]) -> None:
    """Move what `write()` was given into `chunks`: it goes before what is yielded next."""
    chunks.extend(written)
    written.clear()


def _with_written(rest: Iterator[bytes], written: list[bytes]) -> Iterator[bytes]:
    """The rest of the result, with what `write()` is given while it is made, in order."""
    for chunk in rest:
        if written:
            yield from written
            written.clear()
        yield chunk
    if written:
        yield from written
        written.clear()


def _declared_length(headers: list[tuple[str, str]]) -> int | None:
    """The response's `Content-Length`, if it gives a valid one."""
    for name, value in headers:
        if len(name) == 14 and name.lower() == "content-length":
            value = value.strip()
            return int(value) if value.isdigit() else None
    return None


def _close(result: Any) -> None:
    close = getattr(result, "close", None)
    if close is not None:
        close()
