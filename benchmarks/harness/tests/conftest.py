"""The harness's tests: what every one of them gets (they share nothing with tests/)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def _embedding_caches(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("embedding-caches")


@pytest.fixture(autouse=True)
def own_embedding_cache(
    monkeypatch: pytest.MonkeyPatch, _embedding_caches: Path, request: pytest.FixtureRequest
) -> None:
    """Each test's local embedders get a disk embedding cache of their own, never the
    user's (as in the library's tests/conftest.py)."""
    folder = _embedding_caches / hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:16]
    monkeypatch.setenv("TOOLSEARCH_EMBEDDING_CACHE", str(folder))
