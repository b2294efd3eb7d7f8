"""`HTTPConnection`: the annotation for a parameter that takes whatever the route serves, the
`Request` on an HTTP route and the `WebSocket` on a WebSocket route, as Starlette's is. A
dependency shared by both kinds of route takes one."""

from __future__ import annotations

import abc

from . import _vireo


class HTTPConnection(abc.ABC):
    """A `Request` or a `WebSocket`: both have `headers`, `query_params`, `path_params`,
    `cookies`, `url` and `client`. Used as an annotation; never made directly."""


HTTPConnection.register(_vireo.Request)  # and `WebSocket`, where it is defined
