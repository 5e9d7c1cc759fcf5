"""A fake provider endpoint for the provider-adapter tests: an httpx ``MockTransport`` handler
that answers with fixture files in order and records what the SDK sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class FixtureServer:
    """Serves fixture files in order and records each request's URL, headers and JSON body.

    Subclasses set ``fixtures`` (the provider's fixture folder) and ``http`` (the HTTP library
    module the installed SDK is built on: ``httpx2`` in current releases, ``httpx`` before).
    A reply is a fixture name (HTTP 200), ``(status, name)``, or an exception to raise.
    """

    fixtures: Path
    http: Any

    def __init__(self, *replies: str | tuple[int, str] | Exception) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.urls: list[str] = []
        self.headers: list[dict[str, str]] = []

    def __call__(self, request: Any) -> Any:
        self.requests.append(json.loads(request.content))
        self.urls.append(str(request.url))
        self.headers.append(dict(request.headers))
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        status, name = reply if isinstance(reply, tuple) else (200, reply)
        body = (self.fixtures / name).read_bytes()
        kind = "text/event-stream" if name.endswith(".sse") else "application/json"
        return self.http.Response(status, content=body, headers={"content-type": kind})
