"""Middleware that ships with Vireo, for `app.add_middleware(...)`."""

from .cors import CORSMiddleware
from .gzip import GZipMiddleware
from .httpsredirect import HTTPSRedirectMiddleware
from .sessions import SessionMiddleware
from .trustedhost import TrustedHostMiddleware

__all__ = [
    "CORSMiddleware",
    "GZipMiddleware",
    "HTTPSRedirectMiddleware",
    "SessionMiddleware",
    "TrustedHostMiddleware",
]
