"""The ASGI `lifespan` protocol for `vireo serve`, run on each worker's loop.

As uvicorn's "auto" mode: an app that raises on the lifespan scope before starting up is
taken not to support it, and is served anyway; an app that reports `lifespan.startup.failed`
(or raises after saying it supports the protocol) stops the worker with a nonzero exit.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

logger = logging.getLogger("vireo.error")


class Lifespan:
    def __init__(self, app: Any, mode: str = "auto") -> None:
        self.app = app
        self.mode = mode
        self.state: dict[str, Any] = {}
        self._queue: asyncio.Queue[dict[str, Any]] | None = None
        self._started: asyncio.Event | None = None
        self._stopped: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self.startup_failed = False
        self.shutdown_failed = False
        self.unsupported = False

    async def startup(self) -> bool:
        """Run the app's startup; False if it failed (the worker should exit)."""
        if self.mode == "off":
            return True
        self._queue = asyncio.Queue()
        self._started = asyncio.Event()
        self._stopped = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._main())
        await self._queue.put({"type": "lifespan.startup"})
        await self._started.wait()
        if self.startup_failed or (self.unsupported and self.mode == "on"):
            logger.error("Application startup failed. Exiting.")
            return False
        if not self.unsupported:
            logger.info("Application startup complete.")
        return True

    async def shutdown(self) -> None:
        if self.mode == "off" or self.unsupported or self._queue is None:
            return
        assert self._stopped is not None
        logger.info("Waiting for application shutdown.")
        await self._queue.put({"type": "lifespan.shutdown"})
        await self._stopped.wait()
        if self.shutdown_failed:
            logger.error("Application shutdown failed.")
        else:
            logger.info("Application shutdown complete.")

    async def _main(self) -> None:
        assert self._started is not None and self._stopped is not None
        scope = {
            "type": "lifespan",
            "asgi": {"version": "3.0", "spec_version": "2.0"},
            "state": self.state,
        }
        try:
            await self.app(scope, self._receive, self._send)
        except BaseException as exc:  # noqa: BLE001 - the protocol's failure modes
            if self.startup_failed or self.shutdown_failed:
                return
            self.unsupported = True
            if self.mode == "auto" and not self._started.is_set():
                logger.info("ASGI 'lifespan' protocol appears unsupported.")
            else:
                self.startup_failed = not self._started.is_set()
                self.shutdown_failed = self._started.is_set()
                logger.error("Exception in 'lifespan' protocol", exc_info=exc)
        finally:
            self._started.set()
            self._stopped.set()

    async def _receive(self) -> dict[str, Any]:
        assert self._queue is not None
        return await self._queue.get()

    async def _send(self, message: dict[str, Any]) -> None:
        assert self._started is not None and self._stopped is not None
        kind = message["type"]
        if kind == "lifespan.startup.complete":
            self._started.set()
        elif kind == "lifespan.startup.failed":
            self.startup_failed = True
            self._started.set()
            if message.get("message"):
                logger.error(message["message"])
        elif kind == "lifespan.shutdown.complete":
            self._stopped.set()
        elif kind == "lifespan.shutdown.failed":
            self.shutdown_failed = True
            self._stopped.set()
            if message.get("message"):
                logger.error(message["message"])
        else:
            raise RuntimeError(f"Unexpected ASGI lifespan message {kind!r}")
