"""Middleware that ships with Vireo, for `app.add_middleware(...)`."""

from .cors import CORSMiddleware

__all__ = ["CORSMiddleware"]
