"""A fake provider endpoint: an HTTP ``MockTransport`` handler that answers with fixture
files in order and records what the SDK sent (parsed, and byte for byte).

A provider adapter built on an SDK with an httpx-style client (OpenAI, Anthropic, Google
GenAI...) is tested on its real SDK with the network replaced: :class:`ProviderEndpoint`
hands the SDK a mock transport (``transport("sync")`` / ``transport("async")``) and
``model()`` builds the adapter on it. Each reply is a fixture file (the provider's real
response body: JSON, or server-sent events for a ``.sse`` file), and each request's URL,
headers and JSON body are recorded, with which client sent it (``sides``) and whether the
SDK released each response body (``bodies``: an abandoned stream must close its response).
"""

from __future__ import annotations

import functools
import importlib
import json
from pathlib import Path
from typing import Any

import pytest

__all__ = ["FixtureServer", "ProviderEndpoint", "TrackedBody", "http_library"]

Reply = str | tuple[int, str] | Exception
"""A fixture name (HTTP 200), ``(status, fixture name)``, or an exception to raise (a
connection failure: the HTTP library's ``ConnectError``...)."""


class FixtureServer:
    """Serves fixture files in order and records each request's URL, headers and JSON body.

    Subclasses set ``fixtures`` (the folder of fixture files) and ``http`` (the HTTP library
    module the SDK is built on: ``httpx2`` in current releases, ``httpx`` before).
    """

    fixtures: Path
    http: Any

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.raw: list[bytes] = []
        """Each request's body as the SDK sent it, byte for byte."""
        self.urls: list[str] = []
        self.headers: list[dict[str, str]] = []

    def __call__(self, request: Any) -> Any:
        self.requests.append(json.loads(request.content))
        self.raw.append(bytes(request.content))
        self.urls.append(str(request.url))
        self.headers.append(dict(request.headers))
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        status, name = reply if isinstance(reply, tuple) else (200, reply)
        body = (self.fixtures / name).read_bytes()
        kind = "text/event-stream" if name.endswith(".sse") else "application/json"
        return self.http.Response(status, content=body, headers={"content-type": kind})


def http_library(sdk: str) -> Any:
    """The HTTP library the installed SDK (a top-level module name) is built on (httpx2 in
    current releases, httpx before): its ``MockTransport`` and ``Response`` are what the
    SDK's clients accept."""
    try:
        base = importlib.import_module(f"{sdk}._base_client")
    except ImportError:
        base = None
    found = getattr(base, "httpx2", None)
    if found is not None:
        return found
    try:
        return importlib.import_module("httpx2")
    except ImportError:  # pragma: no cover - older SDK stacks
        return importlib.import_module("httpx")


class TrackedBody:
    """A response body that records whether the SDK released it (``closed``)."""

    def __init__(self, data: bytes) -> None:
        self.lines = data.splitlines(keepends=True)
        self.closed = False

    def __iter__(self) -> Any:
        yield from self.lines

    async def __aiter__(self) -> Any:
        for line in self.lines:
            yield line

    def close(self) -> None:
        self.closed = True

    async def aclose(self) -> None:
        self.closed = True


@functools.cache
def _tracked_body_class(http: Any) -> type[TrackedBody]:
    """:class:`TrackedBody` as a byte stream of ``http`` (the SDK's HTTP library checks)."""
    return type("TrackedBody", (TrackedBody, http.SyncByteStream, http.AsyncByteStream), {})


class ProviderEndpoint(FixtureServer):
    """A provider endpoint serving fixtures; a subclass says how to build the adapter on it.

    Subclasses set ``provider`` (the name the adapter reports), ``sdk`` (the module to
    import; a missing one skips the test), ``extra`` (what to install, for the skip
    reason), ``model_name`` and ``fixtures``, and implement :meth:`model`, building the
    adapter with SDK clients whose transport is ``self.transport("sync")`` (and
    ``"async"``).
    """

    provider: str
    sdk: str
    extra: str
    model_name: str

    def __init__(self, *replies: Reply) -> None:
        pytest.importorskip(
            self.sdk, reason=f"the {self.sdk} SDK ({self.install}) is not installed"
        )
        self.http = http_library(self.sdk.split(".")[0])
        super().__init__(*replies)
        self.sides: list[str] = []
        """Which client sent each request: ``"sync"`` or ``"async"``."""
        self.bodies: list[TrackedBody] = []
        """Every response body served, in order (``closed`` once the SDK released it)."""
        self.reply_headers: dict[str, str] = {}
        """Headers added to every response (``retry-after``...)."""

    @property
    def install(self) -> str:
        """What to install for the SDK: ``toolsearch[<extra>]`` unless it names a package."""
        return self.extra if "[" in self.extra or " " in self.extra else f"toolsearch[{self.extra}]"

    def __call__(self, request: Any) -> Any:
        response = super().__call__(request)
        body = _tracked_body_class(self.http)(response.content)
        self.bodies.append(body)
        headers = {**response.headers, **self.reply_headers}
        return self.http.Response(response.status_code, stream=body, headers=headers)

    def transport(self, side: str) -> Any:
        """A mock transport for the ``side`` (``"sync"`` or ``"async"``) client."""

        def serve(request: Any) -> Any:
            self.sides.append(side)
            return self(request)

        return self.http.MockTransport(serve)

    def model(self, **kwargs: Any) -> Any:
        """The adapter under test, on this endpoint (``sync_only=True``: no async client)."""
        raise NotImplementedError(f"{type(self).__name__} must implement model()")
