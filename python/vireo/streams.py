"""Routes whose handler `yield`s, as FastAPI serves them: each item is sent as it is made.

- With no `response_class`, as JSON Lines (`application/jsonl`): each item's JSON and a
  newline, validated against the item type the return annotation names
  (`-> AsyncIterable[Item]`) when it names one and pydantic is installed.
- With `response_class=EventSourceResponse`, as Server-Sent Events (see `vireo.sse`).
- With another response class (`StreamingResponse`), the items are its content, as they are.

A sync generator is pulled on the worker (or the blocking pool, for `blocking=True`; for
Server-Sent Events, on the loop's thread pool), an async one on the worker's loop; if the
client leaves, the generator is closed.
"""

from __future__ import annotations

import asyncio
import collections.abc
import contextlib
import contextvars
import functools
import inspect
import json
import math
import typing
from typing import Any, AsyncIterator, Callable, Iterator

from . import sse
from .encoders import jsonable_encoder

# The annotations that name what a generator yields (`Iterable[Item]`...).
_ITERABLES = (collections.abc.Iterable, collections.abc.Iterator, collections.abc.Generator,
              collections.abc.AsyncIterable, collections.abc.AsyncIterator,
              collections.abc.AsyncGenerator)


def is_streaming(handler: Callable[..., Any]) -> bool:
    """Whether `handler` is a generator function, sync or async."""
    return inspect.isgeneratorfunction(handler) or inspect.isasyncgenfunction(handler)


def item_type(handler: Callable[..., Any]) -> Any:
    """What the handler's return annotation says it yields, or None."""
    try:
        annotation = typing.get_type_hints(handler).get("return")
    except Exception:  # noqa: BLE001 - an unresolvable annotation names no item type
        return None
    origin = typing.get_origin(annotation)
    if origin in _ITERABLES:
        args = typing.get_args(annotation)
        return args[0] if args else None
    return None


def mode(response_class: Any) -> str:
    """`"jsonl"`, `"sse"` or `"raw"`: how a generator route streams with this response class
    (the route's, its router's or the app's; None for the default JSON)."""
    from .response_class import is_json

    if isinstance(response_class, type) and issubclass(response_class, sse.EventSourceResponse):
        return "sse"
    return "jsonl" if is_json(response_class) else "raw"


def streaming(handler: Callable[..., Any], response_class: Any, status_code: int
              ) -> Callable[..., Any]:
    """`handler` as a function returning the response that streams what it yields; it takes
    the handler's parameters (its signature and annotations are the handler's)."""
    how = mode(response_class)
    is_async = inspect.isasyncgenfunction(handler)
    encode = _encoder(item_type(handler))

    if how == "jsonl":
        from .responses import StreamingResponse

        def make(items: Any) -> Any:
            lines = _amap(items, lambda item: encode(item) + b"\n") if is_async else (
                encode(item) + b"\n" for item in items)
            return StreamingResponse(lines, status_code, media_type="application/jsonl")
    elif how == "sse":

        def event(item: Any) -> bytes:
            if isinstance(item, sse.ServerSentEvent):
                return _event_bytes(item)
            return sse.format_sse_event(data_str=encode(item).decode())

        def make(items: Any) -> Any:
            # A sync generator is pulled on a thread, so that pings go out while it blocks.
            events = _with_pings(_amap(items if is_async else _on_threads(items), event))
            return sse.EventSourceResponse(events, status_code, headers={
                "cache-control": "no-cache", "x-accel-buffering": "no"})
    else:

        def make(items: Any) -> Any:
            options = {} if status_code == 200 else {"status_code": status_code}
            return response_class(items, **options)

    @functools.wraps(handler)
    def respond(*args: Any, **kwargs: Any) -> Any:
        response = make(handler(*args, **kwargs))
        # Made for the handler, so the status and fields a dependency set on its `Response`
        # parameter apply, as to a value the handler returns.
        response.takes_sub_response = True
        return response

    return respond


def _encoder(item: Any) -> Callable[[Any], bytes]:
    """An item as JSON bytes: validated and dumped by pydantic as `item` when that is given
    (and pydantic installed), else encoded as a returned value is."""
    if item is not None and item is not sse.ServerSentEvent:
        try:
            import pydantic
        except ImportError:
            pass
        else:
            from .exceptions import ResponseValidationError

            adapter = pydantic.TypeAdapter(item)

            def validated(value: Any) -> bytes:
                try:
                    return adapter.dump_json(adapter.validate_python(value, from_attributes=True))
                except pydantic.ValidationError as exc:
                    errors = [{**e, "loc": ["response", *e["loc"]]}
                              for e in exc.errors(include_url=False)]
                    raise ResponseValidationError(errors) from None

            return validated
    return _plain_json


def _plain_json(value: Any) -> bytes:
    """An item of no declared type as JSON, as FastAPI writes it (`json.dumps`' spacing, a
    model as pydantic dumps it, a NaN or infinity as `null`)."""
    if hasattr(value, "model_dump_json") and hasattr(type(value), "model_fields"):
        return value.model_dump_json().encode()
    return json.dumps(_finite(jsonable_encoder(value))).encode()


def _finite(value: Any) -> Any:
    """`value` with each NaN or infinity made `None`, which JSON can hold."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _event_bytes(event: sse.ServerSentEvent) -> bytes:
    if event.raw_data is not None:
        data: str | None = event.raw_data
    elif event.data is not None:
        data = _plain_json(event.data).decode()
    else:
        data = None
    return sse.format_sse_event(data_str=data, event=event.event, id=event.id,
                                retry=event.retry, comment=event.comment)


async def _amap(items: AsyncIterator[Any], fn: Callable[[Any], bytes]) -> AsyncIterator[bytes]:
    try:
        async for item in items:
            yield fn(item)
    finally:
        await items.aclose()  # type: ignore[attr-defined]


async def _on_threads(items: Iterator[Any]) -> AsyncIterator[Any]:
    """A sync iterator as an async one, each item made on the loop's thread pool (in the
    request's context); closed there too."""
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()
    done = object()
    try:
        while True:
            item = await loop.run_in_executor(None, context.run, next, items, done)
            if item is done:
                return
            yield item
    finally:
        close = getattr(items, "close", None)
        if close is not None:
            await loop.run_in_executor(None, context.run, close)


async def _with_pings(events: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """`events`, with a keep-alive comment whenever none comes for `sse.PING_INTERVAL`
    seconds. The next event is awaited in a task of its own, so a ping never cancels the
    handler where it waits."""
    pending: asyncio.Future[bytes] | None = None
    try:
        while True:
            if pending is None:
                pending = asyncio.ensure_future(events.__anext__())
            done, _ = await asyncio.wait({pending}, timeout=sse.PING_INTERVAL)
            if not done:
                yield sse.KEEPALIVE_COMMENT
                continue
            try:
                chunk = pending.result()
            except StopAsyncIteration:
                return
            finally:
                pending = None
            yield chunk
    finally:
        if pending is not None:
            pending.cancel()
            with contextlib.suppress(BaseException):
                await pending
        await events.aclose()  # type: ignore[attr-defined]

