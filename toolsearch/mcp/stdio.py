"""The stdio transport to an MCP server: a subprocess spoken to in JSON lines, read in linear
time and with a cap on the size of one message.

The SDK's ``stdio_client`` joins its buffer with each 64 KiB chunk and splits the whole
again (``(buffer + chunk).split("\\n")``), so one long line costs time quadratic in its
length, and nothing bounds it: a 20 MB tool result took 16 s to read and a 50 MB one about
a minute, at ~600 MiB, while every later call on that server waited behind it. Here each
chunk is scanned once for newlines and a line is joined once; a line longer than
``max_message_bytes`` is not kept (only its first and last 4 KiB, to find its JSON-RPC
``id``) and its request is answered with an error saying so, at once.

The process is run as the SDK runs it (its default environment plus the configured
variables, a session of its own; on close: stdin closed, a grace period, then SIGTERM and
SIGKILL to its process group). On Windows the SDK's own transport is used, without the cap.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from typing import Any, TextIO

__all__ = ["DEFAULT_MAX_MESSAGE_BYTES", "stdio_transport"]

DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024
"""The largest message read from a server (16 MiB): far more than any model reads as one
tool result, room for images; a longer one is answered as an error (per-server
``max_message_bytes`` in the config)."""

OVERSIZED_ERROR = -32600
"""The JSON-RPC code of the error that stands in for an oversized answer."""

_KEEP = 4096
"""Bytes kept of each end of an oversized line: where a JSON-RPC ``id`` is written."""

_GRACE = 2.0
"""Seconds a server has to exit after its stdin closes, then after SIGTERM."""

_ID = rb'(-?\d+|"(?:[^"\\]|\\.)*")'
_HEAD_ID = re.compile(rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*' + _ID)
_TAIL_ID = re.compile(rb'"id"\s*:\s*' + _ID + rb'\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$')

logger = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def stdio_transport(
    parameters: Any,
    *,
    errlog: TextIO,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    server: str = "",
) -> AsyncIterator[tuple[Any, Any]]:
    """``(read_stream, write_stream)`` of SDK session messages for the server that
    ``parameters`` (an ``mcp.StdioServerParameters``) starts, as ``mcp.stdio_client``
    yields them; ``server`` names it in messages."""
    if sys.platform == "win32":  # pragma: no cover - the SDK's Job Object handling
        from mcp import stdio_client

        async with stdio_client(parameters, errlog=errlog) as streams:
            yield streams
        return
    import anyio
    from mcp.client.stdio import get_default_environment
    from mcp.shared.message import SessionMessage

    process = await anyio.open_process(
        [parameters.command, *parameters.args],
        env=get_default_environment() | (parameters.env or {}),
        stderr=errlog,
        cwd=parameters.cwd,
        start_new_session=True,
    )
    read_writer, read_stream = anyio.create_memory_object_stream[Any](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    lines = LineReader(max_message_bytes)
    encoding = parameters.encoding
    errors = parameters.encoding_error_handler

    async def stdout_reader() -> None:
        assert process.stdout is not None
        try:
            async with read_writer:
                async for chunk in process.stdout:
                    for line in lines.feed(chunk):
                        message = _message(line, encoding, errors, server, max_message_bytes)
                        if message is not None:
                            await read_writer.send(message)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # the session is gone: drain below, so a server still writing can exit
        except (anyio.EndOfStream, OSError):
            return
        with contextlib.suppress(
            anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError
        ):
            async for _ in process.stdout:
                pass

    async def stdin_writer() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((data + "\n").encode(encoding, errors))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()  # the session sees the connection end

    async with anyio.create_task_group() as group:
        group.start_soon(stdout_reader)
        group.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                read_stream.close()  # the reader stops delivering and drains
                write_stream.close()
                await _stop(process)
            group.cancel_scope.cancel()


class LineReader:
    """Splits a byte stream into lines in one pass; a line over ``limit`` bytes comes out
    as an :class:`Oversized` with its two ends instead of its bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._parts: list[bytes] = []
        self._size = 0
        self._head = b""
        self._tail = b""
        self._over = False

    @property
    def buffered(self) -> int:
        """Bytes held for the line under way: at most ``limit`` plus two ends of 4 KiB."""
        return sum(map(len, self._parts)) + len(self._head) + len(self._tail)

    def feed(self, chunk: bytes) -> list[bytes | Oversized]:
        """The lines ``chunk`` completes (without their newline)."""
        done: list[bytes | Oversized] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                self._add(chunk[start:])
                return done
            self._add(chunk[start:end])
            done.append(self._finish())
            start = end + 1

    def _add(self, piece: bytes) -> None:
        if not piece:
            return
        self._size += len(piece)
        if self._over:
            self._tail = (self._tail + piece)[-_KEEP:]
            return
        self._parts.append(piece)
        if self._size > self.limit:
            whole = b"".join(self._parts)
            self._head, self._tail, self._parts, self._over = (
                whole[:_KEEP],
                whole[-_KEEP:],
                [],
                True,
            )

    def _finish(self) -> bytes | Oversized:
        if self._over:
            line: bytes | Oversized = Oversized(self._size, self._head, self._tail)
        else:
            line = b"".join(self._parts)
        self._parts, self._size, self._head, self._tail, self._over = [], 0, b"", b"", False
        return line


class Oversized:
    """A line longer than the limit: its size and its first and last bytes."""

    def __init__(self, size: int, head: bytes, tail: bytes) -> None:
        self.size = size
        self.head = head
        self.tail = tail

    def request_id(self) -> int | str | None:
        """The JSON-RPC ``id`` of the message, where its first or last bytes show it."""
        found = _HEAD_ID.search(self.head) or _TAIL_ID.search(self.tail)
        if found is None:
            return None
        value = json.loads(found.group(1))
        return value if isinstance(value, int | str) else None


def _message(line: bytes | Oversized, encoding: str, errors: str, server: str, limit: int) -> Any:
    """The session message of one line (a parse error as a value, as the SDK passes it
    on); for an oversized line the error answer of its request, or ``None`` when no request
    id shows (nothing waits on a notification)."""
    from mcp.shared.message import SessionMessage
    from mcp.types import ErrorData, JSONRPCError, jsonrpc_message_adapter

    if isinstance(line, Oversized):
        request = line.request_id()
        text = (
            f"MCP server {server!r} answered with {line.size / 1e6:.1f} MB, over the limit of "
            f"{limit / 1e6:.1f} MB (max_message_bytes in its config); the answer was dropped"
        )
        if request is None:  # a notification, or an id we cannot see: nothing waits on it
            logger.warning("%s (no request id found in it)", text)
            return None
        logger.warning("%s", text)
        error = JSONRPCError(
            jsonrpc="2.0", id=request, error=ErrorData(code=OVERSIZED_ERROR, message=text)
        )
        return SessionMessage(error)
    try:
        text = line.decode(encoding, errors)
        return SessionMessage(jsonrpc_message_adapter.validate_json(text, by_name=False))
    except ValueError as exc:
        logger.warning("MCP server %r wrote a line that is no JSON-RPC message: %s", server, exc)
        return exc


async def _stop(process: Any) -> None:
    """Close stdin, give the server a grace period, then SIGTERM and SIGKILL its group."""
    import anyio

    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, sig)
        with anyio.move_on_after(_GRACE):
            while process.returncode is None:
                await anyio.sleep(0.02)
        if process.returncode is not None:
            break
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdout.aclose()
