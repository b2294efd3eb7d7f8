"""Signed cookie sessions, with the options, cookie format and answers of Starlette's (and so
FastAPI's) `SessionMiddleware`, as a Vireo middleware:

    from vireo.middleware.sessions import SessionMiddleware
    app.add_middleware(SessionMiddleware, secret_key="...")

then `request.session` is a dict kept in the client's cookie between requests (signed, not
encrypted: the client can read it but not change it). `app.add_middleware` given Starlette's
or FastAPI's `SessionMiddleware` uses this one, and a cookie either writes the other reads.
It needs `itsdangerous`, as Starlette's does.
"""

from __future__ import annotations

import json
from base64 import b64decode, b64encode
from typing import Any, Literal

# What a deleted session's cookie is set to, with an expiry in the past.
_EXPIRED = "expires=Thu, 01 Jan 1970 00:00:00 GMT; "


class SessionMiddleware:
    """`request.session` from the `session_cookie` cookie, signed with `secret_key` and
    refused once older than `max_age` seconds (or a tampered one: the session starts empty).
    A session changed while answering is written back (deleted once emptied); a response
    whose request read the session gets `Vary: Cookie`."""

    def __init__(
        self,
        app: Any = None,
        secret_key: str | Any = None,
        session_cookie: str = "session",
        max_age: int | None = 14 * 24 * 60 * 60,
        path: str = "/",
        same_site: Literal["lax", "strict", "none"] = "lax",
        https_only: bool = False,
        domain: str | None = None,
        partitioned: bool = False,
    ) -> None:
        if secret_key is None:
            raise TypeError("SessionMiddleware needs a secret_key to sign its cookies")
        try:
            import itsdangerous
        except ImportError:
            raise ImportError(
                "SessionMiddleware signs its cookies with itsdangerous: pip install itsdangerous"
            ) from None
        self._bad_signature = itsdangerous.BadSignature
        self.signer = itsdangerous.TimestampSigner(str(secret_key))
        self.session_cookie = session_cookie
        self.max_age = max_age
        self.path = path
        self.security_flags = "httponly; samesite=" + same_site
        if https_only:
            self.security_flags += "; secure"
        if domain is not None:
            self.security_flags += f"; domain={domain}"
        if partitioned:
            self.security_flags += "; partitioned"

    def _read(self, cookie: str | None) -> dict[str, Any] | None:
        """The session a cookie holds, or None for none (or one that does not verify)."""
        if not cookie:
            return None
        try:
            data = self.signer.unsign(cookie.encode("utf-8"), max_age=self.max_age)
            session = json.loads(b64decode(data))
        except (self._bad_signature, ValueError):
            return None
        return session if isinstance(session, dict) else None

    async def dispatch(self, request: Any, call_next: Any) -> Any:
        stored = self._read(request.cookies.get(self.session_cookie))
        request.scope["session"] = Session(stored or {})
        response = await call_next(request)
        current = request.scope["session"]
        if getattr(current, "accessed", False):
            vary = response.headers.get("vary")
            response.headers["vary"] = f"{vary}, Cookie" if vary else "Cookie"
        if not getattr(current, "modified", False):
            return response
        if current:
            data = self.signer.sign(b64encode(json.dumps(current).encode("utf-8")))
            max_age = f"Max-Age={self.max_age}; " if self.max_age is not None else ""
            response.append_header(
                "set-cookie",
                f"{self.session_cookie}={data.decode('utf-8')}; path={self.path}; "
                f"{max_age}{self.security_flags}",
            )
        elif stored is not None:
            response.append_header(
                "set-cookie",
                f"{self.session_cookie}=null; path={self.path}; {_EXPIRED}{self.security_flags}",
            )
        return response


class Session(dict[str, Any]):
    """A session: a dict that notes whether it was read (`accessed`) and changed
    (`modified`), so only a changed one is written back, as Starlette's."""

    accessed = False
    modified = False

    def mark_accessed(self) -> None:
        self.accessed = True

    def mark_modified(self) -> None:
        self.accessed = True
        self.modified = True

    def __setitem__(self, key: str, value: Any) -> None:
        self.mark_modified()
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self.mark_modified()
        super().__delitem__(key)

    def clear(self) -> None:
        self.mark_modified()
        super().clear()

    def pop(self, key: str, *default: Any) -> Any:
        if key in self:
            self.mark_modified()
        return super().pop(key, *default)

    def popitem(self) -> tuple[str, Any]:
        item = super().popitem()
        self.mark_modified()
        return item

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self.mark_modified()
        return super().setdefault(key, default)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self.mark_modified()
        super().update(*args, **kwargs)

    def __ior__(self, other: Any) -> "Session":  # type: ignore[override,misc]
        self.mark_modified()
        return super().__ior__(other)
