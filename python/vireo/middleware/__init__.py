"""Middleware that ships with Vireo, for `app.add_middleware(...)`."""

from .cors import CORSMiddleware
from .gzip import GZipMiddleware
from .https_redirect import HTTPSRedirectMiddleware
from .sessions import SessionMiddleware
from .trusted_host import TrustedHostMiddleware

__all__ = [
    "CORSMiddleware",
    "GZipMiddleware",
    "HTTPSRedirectMiddleware",
    "SessionMiddleware",
    "TrustedHostMiddleware",
]
