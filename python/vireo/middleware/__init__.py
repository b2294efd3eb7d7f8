"""Middleware that ships with Vireo, for `app.add_middleware(...)`."""

from .cors import CORSMiddleware
from .gzip import GZipMiddleware
from .sessions import SessionMiddleware

__all__ = ["CORSMiddleware", "GZipMiddleware", "SessionMiddleware"]
