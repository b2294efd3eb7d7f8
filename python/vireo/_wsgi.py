"""What a WSGI (PEP 3333) app is given besides the environ the native side builds and its
`start_response` (`_vireo.StartResponse`): `wsgi.file_wrapper`, and the join of what `write()`
is given to a result that is still streaming."""

from __future__ import annotations

from typing import Any, Iterator


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


def with_written(rest: Iterator[bytes], written: list[bytes]) -> Iterator[bytes]:
    """The rest of the result, with what `write()` is given while it is made, in order."""
    for chunk in rest:
        if written:
            yield from written
            written.clear()
        yield chunk
    if written:
        yield from written
        written.clear()
