"""The test client's cookie jar, as httpx's `client.cookies` under Starlette's `TestClient`:
what the app sets with `set-cookie` is sent back on later requests to paths under the
cookie's, until the app expires it."""

from __future__ import annotations

import email.utils
import http.cookies
import time
from collections.abc import Iterator, MutableMapping


class Cookies(MutableMapping[str, str]):
    """Cookies by name (`client.cookies["session"]`, `.set(name, value)`, `.delete(name)`).
    A `Secure` cookie is kept but not sent: the test client speaks plain HTTP, as httpx's
    `http://testserver` does."""

    def __init__(self) -> None:
        # name -> (value, path, secure)
        self._jar: dict[str, tuple[str, str, bool]] = {}

    def __getitem__(self, name: str) -> str:
        return self._jar[name][0]

    def __setitem__(self, name: str, value: str) -> None:
        self.set(name, value)

    def __delitem__(self, name: str) -> None:
        del self._jar[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._jar)

    def __len__(self) -> int:
        return len(self._jar)

    def set(self, name: str, value: str, path: str = "/") -> None:
        self._jar[name] = (value, path, False)

    def delete(self, name: str) -> None:
        self._jar.pop(name, None)

    def header_for(self, path: str) -> str | None:
        """The `cookie` field for a request to `path`, or None with nothing to send."""
        pairs = [f"{name}={value}" for name, (value, where, secure) in self._jar.items()
                 if not secure and _under(path, where)]
        return "; ".join(pairs) or None

    def take(self, field: str) -> None:
        """Keep (or, once expired, drop) what one `set-cookie` field sets."""
        parsed: http.cookies.SimpleCookie = http.cookies.SimpleCookie()
        try:
            parsed.load(field)
        except http.cookies.CookieError:
            return
        for name, morsel in parsed.items():
            if _expired(morsel):
                self._jar.pop(name, None)
            else:
                self._jar[name] = (morsel.value, morsel["path"] or "/", bool(morsel["secure"]))


def _under(path: str, cookie_path: str) -> bool:
    return path == cookie_path or path.startswith(cookie_path.rstrip("/") + "/")


def _expired(morsel: http.cookies.Morsel) -> bool:
    max_age = morsel["max-age"]
    if max_age not in ("", None):
        try:
            return int(max_age) <= 0
        except ValueError:
            return False
    expires = morsel["expires"]
    if expires:
        try:
            when = email.utils.parsedate_to_datetime(expires).timestamp()
        except (TypeError, ValueError):
            return False
        return when <= time.time()
    return False
