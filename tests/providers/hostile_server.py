"""A hostile OpenAI-compatible endpoint on 127.0.0.1, in a thread, for the answer-parsing
fuzz of both OpenAI adapters (issue 47).

Every POST is answered with the next queued reply: HTTP 200 (unless told otherwise) and
whatever bytes the test chose, valid JSON or not, the shape the SDK expects or not. The
real ``openai`` SDK talks to it over a real socket, so what reaches the adapters is
exactly what a broken or malicious compatible server would make them read.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["HostileServer"]


class HostileServer:
    """``with HostileServer() as server:`` serves at ``server.url`` (``.../v1``).

    ``reply(body)`` queues a body (``bytes``, ``str``, or any JSON value, dumped as is);
    an empty queue answers ``{}``. ``requests`` counts the POSTs answered.
    """

    def __init__(self) -> None:
        self.requests = 0
        self._replies: deque[tuple[int, bytes, str]] = deque()
        self._lock = threading.Lock()
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._http.daemon_threads = True
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host}:{port}/v1"

    def reply(
        self, body: Any, *, status: int = 200, content_type: str = "application/json"
    ) -> None:
        if isinstance(body, bytes):
            data = body
        elif isinstance(body, str):
            data = body.encode("utf-8", "surrogatepass")
        else:
            data = json.dumps(body).encode("utf-8", "surrogatepass")
        with self._lock:
            self._replies.append((status, data, content_type))

    def _next(self) -> tuple[int, bytes, str]:
        with self._lock:
            self.requests += 1
            if self._replies:
                return self._replies.popleft()
        return 200, b"{}", "application/json"

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()
        self._thread.join(timeout=5)


def _handler(server: HostileServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            self.rfile.read(length)
            status, data, kind = server._next()
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler
