"""Concurrent sessions registering the same new tools embed each tool once (single-flight),
and an embedder's failure reaches every waiting session instead of leaving it waiting."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("faiss")

from toolsearch.indexes import VectorToolIndex, vector  # noqa: E402
from toolsearch.search.types import ToolSearchRequest  # noqa: E402
from toolsearch.tools.definition import ToolDefinition  # noqa: E402

TOOLS = [
    ToolDefinition(f"tool_{i}", f"Does thing number {i} for the user", {"type": "object"})
    for i in range(40)
]


class CountingEmbedder:
    """A deterministic embedder that counts the texts it embeds (slowly, so concurrent
    first registrations overlap)."""

    def __init__(self, fail: bool = False) -> None:
        self.texts = 0
        self.fail = fail
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return "counting"

    @property
    def dimension(self) -> int:
        return 8

    def _vectors(self, texts: Sequence[str]) -> Any:
        rows = np.array([[float((hash(t) >> k) & 7) + 1 for k in range(8)] for t in texts])
        return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)

    def embed_documents(self, texts: Sequence[str]) -> Any:
        time.sleep(0.2)
        if self.fail:
            raise RuntimeError("the embedding service is down")
        with self._lock:
            self.texts += len(texts)
        return self._vectors(texts)

    def embed_query(self, text: str) -> Any:
        return self._vectors([text])[0]


@pytest.fixture(autouse=True)
def _fresh_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vector, "_STORE", vector._EmbeddingStore())


def test_concurrent_sessions_embed_each_new_tool_once() -> None:
    embedder = CountingEmbedder()
    index = VectorToolIndex(embedder=embedder)
    alone = CountingEmbedder()
    VectorToolIndex(embedder=alone).index_tools("solo", TOOLS)
    vector._STORE = vector._EmbeddingStore()

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: index.index_tools(f"s{i}", TOOLS), range(8)))

    assert embedder.texts == alone.texts  # eight sessions, one embedding of each tool
    for i in range(8):
        found = index.search(ToolSearchRequest(f"s{i}", "tool_3", 1)).tool_names
        assert found == ["tool_3"]


def test_an_embedder_failure_reaches_every_waiting_session() -> None:
    index = VectorToolIndex(embedder=CountingEmbedder(fail=True))
    with ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(index.index_tools, f"s{i}", TOOLS) for i in range(4)]
        errors = [f.exception(timeout=10) for f in futures]
    assert all(isinstance(e, RuntimeError) for e in errors)
    assert vector._STORE._pending == {}  # nothing left claimed: a later try embeds again
