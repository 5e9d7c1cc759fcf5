"""The disk embedding cache stays within its bound, keeping the rows used last, and opens
caches written before it was bounded."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from toolsearch.indexes.embedders.cache import (
    DEFAULT_MAX_BYTES,
    EmbeddingCache,
    default_embedding_cache,
    text_key,
)


def _rows(count: int, start: int = 0) -> tuple[list[bytes], np.ndarray]:
    keys = [text_key(f"text {i}") for i in range(start, start + count)]
    rng = np.random.default_rng(start)
    vectors = rng.normal(size=(count, 384)).astype(np.float32)
    return keys, vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_writes_past_the_bound_remove_the_least_recently_used_rows(tmp_path: Path) -> None:
    ticks = iter(range(1_000_000, 2_000_000, 10_000))  # each write/read an hour+ apart
    cache = EmbeddingCache(tmp_path, max_bytes=600_000, clock=lambda: next(ticks))
    first_keys, first = _rows(100)
    cache.put_many("m", first_keys, first)
    cache.put_many("m", *_rows(100, start=100))
    kept = cache.get_many("m", first_keys[:10], 384)  # read: now the most recent
    assert len(kept) == 10
    for start in (200, 300):  # the second write passes the bound
        cache.put_many("m", *_rows(100, start=start))
        assert cache.live_bytes() <= 600_000
    assert 250 < cache.count("m") < 400
    assert len(cache.get_many("m", first_keys[:10], 384)) == 10  # read after: kept
    assert cache.get_many("m", first_keys[10:], 384) == {}  # the least recently used: gone
    newest_keys, newest = _rows(100, start=300)
    got = cache.get_many("m", newest_keys, 384)
    assert len(got) == 100
    assert np.allclose(np.stack([got[k] for k in newest_keys]), newest)


def test_a_cache_from_before_the_bound_opens_and_keeps_its_rows(tmp_path: Path) -> None:
    keys, vectors = _rows(3)
    with sqlite3.connect(tmp_path / "embeddings.sqlite3") as db:
        db.execute(
            "CREATE TABLE vectors (model TEXT NOT NULL, text_sha256 BLOB NOT NULL,"
            " vector BLOB NOT NULL, PRIMARY KEY (model, text_sha256)) WITHOUT ROWID"
        )
        db.execute("CREATE TABLE models (model TEXT PRIMARY KEY, dimension INTEGER NOT NULL)")
        db.executemany(
            "INSERT INTO vectors VALUES (?, ?, ?)",
            [("m", k, v.astype("<f4").tobytes()) for k, v in zip(keys, vectors, strict=True)],
        )
        db.execute("INSERT INTO models VALUES ('m', 384)")
    cache = EmbeddingCache(tmp_path)
    assert len(cache.get_many("m", keys, 384)) == 3
    cache.put_many("m", *_rows(2, start=3))
    assert cache.count("m") == 5
    assert cache.enabled


def test_the_default_bound_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLSEARCH_EMBEDDING_CACHE", str(tmp_path))
    monkeypatch.delenv("TOOLSEARCH_EMBEDDING_CACHE_MAX_MB", raising=False)
    cache = default_embedding_cache()
    assert cache is not None
    assert cache.max_bytes == DEFAULT_MAX_BYTES
    monkeypatch.setenv("TOOLSEARCH_EMBEDDING_CACHE_MAX_MB", "64")
    bounded = default_embedding_cache()
    assert bounded is not None
    assert bounded.max_bytes == 64 * 1024 * 1024
    monkeypatch.setenv("TOOLSEARCH_EMBEDDING_CACHE_MAX_MB", "lots")
    with pytest.raises(ValueError, match="TOOLSEARCH_EMBEDDING_CACHE_MAX_MB"):
        default_embedding_cache()
    with pytest.raises(ValueError, match="max_bytes"):
        EmbeddingCache(tmp_path, max_bytes=0)


@pytest.mark.parametrize(
    "stored", ["a text row", "x" * 384 * 4, 42, 1.5], ids=["text", "text-of-width", "int", "real"]
)
def test_a_row_that_is_not_a_blob_is_a_miss_not_a_type_error(
    tmp_path: Path, stored: object
) -> None:
    """Issue 47, item 6: a row whose vector column holds TEXT, INTEGER or REAL (a damaged
    or hand-edited file: SQLite columns take any type) was passed to ``np.frombuffer`` /
    ``len`` and raised an untyped ``TypeError`` out of ``get_many``. It is a miss now: the
    embedder embeds the text again, and the next write replaces the row."""
    keys, vectors = _rows(3)
    cache = EmbeddingCache(tmp_path)
    cache.put_many("m", keys, vectors)
    with sqlite3.connect(cache.path) as db:
        db.execute("UPDATE vectors SET vector = ? WHERE text_sha256 = ?", [stored, keys[1]])
    got = cache.get_many("m", keys, 384)
    assert sorted(got) == sorted([keys[0], keys[2]])
    assert cache.enabled
    cache.put_many("m", keys[1:2], vectors[1:2])
    assert np.allclose(cache.get_many("m", keys[1:2], 384)[keys[1]], vectors[1])
