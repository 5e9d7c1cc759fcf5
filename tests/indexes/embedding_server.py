"""A local embeddings endpoint for the API-embedder tests, on 127.0.0.1 in a thread.

It speaks two dialects:

* OpenAI's ``POST /v1/embeddings`` (``model``, ``input``, ``dimensions``,
  ``encoding_format`` ``float`` or ``base64``), the one llama.cpp's server, vLLM and Ollama
  serve;
* Gemini's ``POST /v1/models/MODEL:batchEmbedContents`` (or ``/v1beta/...``):
  ``requests[]`` with ``content.parts[].text``, ``taskType``, ``outputDimensionality``.

Vectors are deterministic hashed bags of words and character trigrams (texts that share
words are close), scaled so they are *not* unit length (the embedders must normalise).
The server counts requests and texts, records every body and header, and can be told to
fail the next requests with a status (429 with ``Retry-After``, 500...) to test retries.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_WORD = re.compile(r"\w+")
_GEMINI_PATH = re.compile(r"^/v1\w*/models/[^/]+:batchEmbedContents$")


def fake_vector(text: str, dimension: int) -> list[float]:
    """The server's vector of ``text``: hashed words and trigrams, times three."""
    vector = [0.0] * dimension
    words = [w.lower() for w in _WORD.findall(text)]
    features = words + [w[i : i + 3] for w in words for i in range(max(1, len(w) - 2))]
    for feature in features:
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        bucket = int.from_bytes(digest[:4], "little") % dimension
        vector[bucket] += 3.0 if digest[4] & 1 else -3.0
    return vector


class EmbeddingServer:
    """``with EmbeddingServer() as server:`` serves at ``server.url`` (OpenAI, ``.../v1``)
    and ``server.root`` (Gemini's SDK adds the API version).

    Attributes read by tests: ``requests`` (POSTs answered, failures included), ``inputs``
    (texts embedded), ``batches`` (texts per successful request), ``bodies``, ``headers``.
    ``dimension`` is the vector length when a request asks for none; ``ignore_dimensions``
    makes it ignore the ones asked for (as some local servers do).
    """

    def __init__(self, dimension: int = 64) -> None:
        self.dimension = dimension
        self.ignore_dimensions = False
        self.requests = 0
        self.inputs = 0
        self.batches: list[int] = []
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._failures: list[tuple[int, str, float | None]] = []
        self.spoil: str | None = None
        """``"nan"``: answer NaN vectors; ``"not-json"``: answer HTTP 200 with an HTML page."""
        self._lock = threading.Lock()
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._http.daemon_threads = True
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def root(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def url(self) -> str:
        return f"{self.root}/v1"

    def fail(
        self, status: int, times: int = 1, *, message: str = "", retry_after: float | None = None
    ) -> None:
        """Answer the next ``times`` requests with ``status`` (and ``Retry-After``)."""
        with self._lock:
            text = message or f"simulated failure {status}"
            self._failures.extend([(status, text, retry_after)] * times)

    def __enter__(self) -> EmbeddingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()

    # -- answering ---------------------------------------------------------------------

    def answer(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> Any:
        """``(status, payload, extra headers)`` for one POST."""
        with self._lock:
            self.requests += 1
            self.bodies.append(body)
            self.headers.append(headers)
            failure = self._failures.pop(0) if self._failures else None
        if failure is not None:
            status, message, retry_after = failure
            extra = {} if retry_after is None else {"Retry-After": str(retry_after)}
            return status, {"error": {"message": message, "code": status}}, extra
        if path == "/v1/embeddings":
            return self._openai(body)
        if _GEMINI_PATH.match(path):
            return self._gemini(body)
        return 404, {"error": {"message": f"no route {path}"}}, {}

    def _length(self, asked: Any) -> int:
        return self.dimension if asked is None or self.ignore_dimensions else int(asked)

    def _count(self, texts: list[str]) -> None:
        with self._lock:
            self.inputs += len(texts)
            self.batches.append(len(texts))

    def _openai(self, body: dict[str, Any]) -> Any:
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        if any(not isinstance(t, str) or not t for t in texts):
            return 400, {"error": {"message": "input must be non-empty strings"}}, {}
        length = self._length(body.get("dimensions"))
        self._count(texts)
        data = []
        for i, text in enumerate(texts):
            vector: Any = fake_vector(text, length)
            if body.get("encoding_format") == "base64":
                vector = base64.b64encode(struct.pack(f"<{length}f", *vector)).decode()
            data.append({"object": "embedding", "index": i, "embedding": vector})
        data.reverse()  # any order: clients sort by index
        usage = {"prompt_tokens": len(texts), "total_tokens": len(texts)}
        payload = {"object": "list", "data": data, "model": body["model"], "usage": usage}
        return 200, payload, {}

    def _gemini(self, body: dict[str, Any]) -> Any:
        requests = body["requests"]
        texts = ["".join(p.get("text", "") for p in r["content"]["parts"]) for r in requests]
        self._count(texts)
        embeddings = [
            {"values": fake_vector(text, self._length(r.get("outputDimensionality")))}
            for text, r in zip(texts, requests, strict=True)
        ]
        return 200, {"embeddings": embeddings}, {}


def _handler(server: EmbeddingServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the SDKs' clients expect
        disable_nagle_algorithm = True  # headers and body in two writes: no 40 ms stall

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {}
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, payload, extra = server.answer(self.path.split("?")[0], body, headers)
            if server.spoil == "not-json" and status == 200:
                payload = None
            if server.spoil == "nan" and status == 200 and isinstance(payload, dict):
                for item in payload.get("data", ()):
                    item["embedding"] = [float("nan")] * len(item["embedding"])
            data = json.dumps(payload).encode() if payload is not None else b"<html>proxy</html>"
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in extra.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

    return Handler
