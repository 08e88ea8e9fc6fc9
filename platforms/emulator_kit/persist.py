"""Writes what a sandbox request changed to the sandbox's file before its answer leaves.

A pure ASGI middleware: it gives each request its own `Changes`, and when the answer starts it
serialises them on the event loop (where the handlers change the state, so nothing moves under
the serialiser) and writes them in a worker thread. A caller that has seen an answer can
therefore restart the process and find the same sandbox. Serialising and writing are one turn
under a lock: two requests that changed one row (a comment, then its private reply) write in the
order they serialised, so an older copy never lands over a newer one.
"""

from __future__ import annotations

import asyncio

from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from platforms.emulator_kit.state import CHANGES, Changes, EmulatorState


class Persist:
    def __init__(self, app: ASGIApp, state: EmulatorState) -> None:
        self.app = app
        self.state = state
        self._turn = asyncio.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.state.store is None:
            await self.app(scope, receive, send)
            return
        changes = Changes()
        reset = CHANGES.set(changes)
        written = False

        async def flush() -> None:
            nonlocal written
            if not written:
                written = True
                async with self._turn:
                    batch = self.state.batch(changes)
                    if batch:
                        await run_in_threadpool(self.state.write, batch)

        async def send_after_write(message: Message) -> None:
            if message["type"] == "http.response.start":
                await flush()
            await send(message)

        try:
            await self.app(scope, receive, send_after_write)
        finally:
            await flush()
            CHANGES.reset(reset)
