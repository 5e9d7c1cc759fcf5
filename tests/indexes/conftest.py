"""Fixtures of the index tests."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest


@pytest.fixture
def collection(milvus_uri: str) -> Iterator[str]:
    """A fresh Milvus collection name; whatever a test created under it (or under it with
    ``_b``) is dropped afterwards."""
    from toolsearch.indexes import MilvusRanker

    name = f"test_{uuid.uuid4().hex[:16]}"
    yield name
    for suffix in ("", "_b"):
        ranker = MilvusRanker(milvus_uri, collection=name + suffix, mode="bm25")
        if ranker.connection.call("check", lambda c, n=name + suffix: c.has_collection(n)):
            ranker.drop()
        ranker.close()
