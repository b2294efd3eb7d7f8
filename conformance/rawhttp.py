"""A tiny raw-socket HTTP/1.1 client for conformance tests.

It sends exact bytes (in one write or several) and reads exactly one response at a time:
status line, header fields, and a body framed by Content-Length, chunked, or the close of the
connection. It can also tell whether the server closed the connection (EOF or reset) or left it
open. Only the standard library is used.
"""

from __future__ import annotations

import socket
import struct
import time
from dataclasses import dataclass, field

DEFAULT_TIMEOUT = 5.0


class NoResponse(Exception):
    """The connection ended (EOF or reset) before a single byte of a response arrived."""


class PartialResponse(Exception):
    """The connection ended, or the time ran out, in the middle of a response."""

    def __init__(self, message: str, raw: bytes):
        super().__init__(message)
        self.raw = raw


class Timeout(Exception):
    """Nothing at all arrived within the time allowed."""


class Malformed(Exception):
    """The bytes received are not an HTTP/1.1 response."""


@dataclass
class Response:
    version: str
    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes
    raw: bytes
    interim: list["Response"] = field(default_factory=list)

    def header(self, name: str) -> str | None:
        name = name.lower()
        for n, v in self.headers:
            if n.lower() == name:
                return v
        return None

    def header_all(self, name: str) -> list[str]:
        name = name.lower()
        return [v for n, v in self.headers if n.lower() == name]

    def asks_close(self) -> bool:
        return any(
            t.strip().lower() == "close"
            for v in self.header_all("connection")
            for t in v.split(",")
        )

    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


def connect(addr: tuple[str, int], timeout: float = DEFAULT_TIMEOUT, rcvbuf: int | None = None) -> "Conn":
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.settimeout(timeout)
    sock.connect(addr)
    return Conn(sock)


class Conn:
    """One connection: a socket and the bytes received but not yet parsed."""

    def __init__(self, sock: socket.socket, keep_received: bool = True):
        self.sock = sock
        self._buf = bytearray()
        self._pos = 0
        self.eof = False  # the peer closed (EOF or reset)
        self.reset = False  # the close was a reset
        self.keep_received = keep_received
        self.received = bytearray()  # everything ever received, to look for smuggled answers
        self.total_received = 0

    @property
    def buf(self) -> bytes:
        """The bytes received but not yet parsed."""
        return bytes(self._buf[self._pos :])

    def _avail(self) -> int:
        return len(self._buf) - self._pos

    def _take(self, n: int) -> bytes:
        data = bytes(self._buf[self._pos : self._pos + n])
        self._pos += n
        if self._pos > 65536 and self._pos * 2 > len(self._buf):
            del self._buf[: self._pos]
            self._pos = 0
        return data

    # -- sending ---------------------------------------------------------------------------

    def send(self, data: bytes) -> bool:
        """Send all of `data`. False if the peer has already closed or reset the connection."""
        try:
            self.sock.sendall(data)
            return True
        except (BrokenPipeError, ConnectionResetError):
            return False

    def send_writes(self, writes: list[bytes], pause: float = 0.05) -> bool:
        """Send each element in its own write, pausing between them so they arrive apart."""
        for i, data in enumerate(writes):
            if i:
                time.sleep(pause)
            if not self.send(data):
                return False
        return True

    def shutdown_write(self) -> None:
        self.sock.shutdown(socket.SHUT_WR)

    def abort(self) -> None:
        """Close with a reset: SO_LINGER on with a zero timeout, then close."""
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        self.sock.close()

    def close(self) -> None:
        self.sock.close()

    # -- receiving -------------------------------------------------------------------------

    def recv_some(self, deadline: float, max_bytes: int = 65536) -> bool:
        """Read more bytes into the buffer. False at EOF or reset; raises Timeout at the deadline."""
        if self.eof:
            return False
        left = deadline - time.monotonic()
        if left <= 0:
            raise Timeout()
        self.sock.settimeout(left)
        try:
            data = self.sock.recv(max_bytes)
        except (socket.timeout, BlockingIOError):
            raise Timeout() from None
        except ConnectionResetError:
            self.eof = True
            self.reset = True
            return False
        if not data:
            self.eof = True
            return False
        self._buf += data
        self.total_received += len(data)
        if self.keep_received:
            self.received += data
        return True

    _fill = recv_some

    def _line(self, deadline: float) -> bytes:
        while True:
            i = self._buf.find(b"\r\n", self._pos)
            if i >= 0:
                line = self._take(i - self._pos)
                self._pos += 2
                return line
            if not self._fill(deadline):
                raise PartialResponse("connection ended inside a line", self.buf)

    def _exact(self, n: int, deadline: float) -> bytes:
        while self._avail() < n:
            if not self._fill(deadline):
                raise PartialResponse(
                    f"connection ended after {self._avail()} of {n} body bytes", self.buf
                )
        return self._take(n)

    def read_response(
        self, timeout: float = DEFAULT_TIMEOUT, head_request: bool = False, keep_interim: bool = False
    ) -> Response:
        """Read one final response (and any 1xx before it, kept in `.interim`).

        With `keep_interim`, a 1xx is returned on its own instead of being collected.
        Raises NoResponse if the connection ends before any byte, Timeout if nothing arrives
        in time, PartialResponse if it ends (or times out) inside a response.
        """
        deadline = time.monotonic() + timeout
        interim: list[Response] = []
        while True:
            if not self._avail():
                try:
                    if not self._fill(deadline):
                        if interim:
                            raise PartialResponse("connection ended after a 1xx", b"")
                        raise NoResponse()
                except Timeout:
                    if interim:
                        raise PartialResponse("timed out after a 1xx", b"") from None
                    raise
            try:
                resp = self._read_one(deadline, head_request)
            except Timeout:
                raise PartialResponse("timed out inside a response", self.buf) from None
            if 100 <= resp.status < 200 and resp.status != 101 and not keep_interim:
                interim.append(resp)
                continue
            resp.interim = interim
            return resp

    def _read_one(self, deadline: float, head_request: bool) -> Response:
        offset = self.total_received - self._avail()
        status_line = self._line(deadline)
        parts = status_line.split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
            raise Malformed(f"bad status line {status_line!r}")
        version = parts[0].decode()
        status = int(parts[1])
        reason = parts[2].decode("latin-1") if len(parts) > 2 else ""
        headers = []
        while True:
            line = self._line(deadline)
            if not line:
                break
            if b":" not in line:
                raise Malformed(f"bad header line {line!r}")
            name, value = line.split(b":", 1)
            headers.append((name.decode("latin-1"), value.strip().decode("latin-1")))
        resp = Response(version, status, reason, headers, b"", b"")
        te = resp.header("transfer-encoding")
        if head_request or 100 <= status < 200 or status in (204, 304):
            body = b""
        elif te is not None:
            if te.lower() != "chunked":
                raise Malformed(f"unexpected Transfer-Encoding {te}")
            body = self._chunked(deadline)
        elif resp.header("content-length") is not None:
            body = self._exact(int(resp.header("content-length")), deadline)
        else:
            # Delimited by the close of the connection.
            while self._fill(deadline):
                pass
            body = self._take(self._avail())
        resp.body = body
        if self.keep_received:
            end = self.total_received - self._avail()
            base = self.total_received - len(self.received)
            resp.raw = bytes(self.received[offset - base : end - base])
        return resp

    def _chunked(self, deadline: float) -> bytes:
        body = bytearray()
        while True:
            line = self._line(deadline)
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise Malformed(f"bad chunk size line {line!r}") from None
            if size == 0:
                while self._line(deadline):
                    pass  # trailers
                return bytes(body)
            body += self._exact(size, deadline)
            if self._exact(2, deadline) != b"\r\n":
                raise Malformed("chunk data not followed by CRLF")

    def wait_closed(self, timeout: float = 3.0) -> bytes:
        """Wait for the peer to close. Returns whatever arrived first (it should be nothing).
        Raises Timeout if the connection is still open when the time is up."""
        deadline = time.monotonic() + timeout
        while self._fill(deadline):
            pass
        return self._take(self._avail())

    def is_open(self, wait: float = 0.2) -> bool:
        """True if the peer neither closed nor sent anything within `wait` seconds."""
        try:
            self._fill(time.monotonic() + wait)
        except Timeout:
            return True
        return False


def request(addr, data: bytes, timeout: float = DEFAULT_TIMEOUT, head_request: bool = False) -> Response:
    """Open a connection, send `data`, read one response, close."""
    conn = connect(addr, timeout)
    try:
        conn.send(data)
        return conn.read_response(timeout, head_request=head_request)
    finally:
        conn.close()


def get(addr, path: str = "/", timeout: float = DEFAULT_TIMEOUT) -> Response:
    return request(addr, f"GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".encode(), timeout)
