"""What the native `Request` leaves to Python: `await request.form()` (or `async with
request.form() as form`) and `async for chunk in request.stream()`, as Starlette has them."""

from __future__ import annotations

from typing import Any, AsyncIterator, Generator

from .forms import FormData, fields_of


class FormRead:
    """What `request.form()` gives: awaited, the form; as an async context manager, the
    form, closed (its files with it) on the way out."""

    def __init__(self, form: FormData) -> None:
        self._form = form

    def now(self) -> FormData:
        """The form, without awaiting: the body is read before the handler runs."""
        return self._form

    def __await__(self) -> Generator[Any, None, FormData]:
        return self._form
        yield  # a generator that never suspends

    async def __aenter__(self) -> FormData:
        return self._form

    async def __aexit__(self, *exc_info: Any) -> None:
        await self._form.close()


def read_form(body: bytes, content_type: str | None, max_files: int, max_fields: int,
              max_part_size: int) -> FormRead:
    return FormRead(FormData(fields_of(body, content_type, max_fields, max_files,
                                       max_part_size)))


async def stream(body: bytes) -> AsyncIterator[bytes]:
    """The body in chunks, then `b""`, as Starlette's `request.stream()` ends. The body was
    read before the handler ran, so it is one chunk."""
    if body:
        yield body
    yield b""
