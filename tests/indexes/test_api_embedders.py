"""API embedders against a local endpoint (tests/indexes/embedding_server.py).

* ``OpenAIEmbedder`` through the ``openai`` SDK and ``GeminiEmbedder`` through
  ``google-genai``, both pointed at the local server: request shapes (``dimensions``,
  ``encoding_format``, task types), unit vectors, batching, retries on 429/5xx, errors that
  name the endpoint and never the key;
* the on-disk cache: a rebuild by a new embedder object (and a new process) sends no
  request, a changed tool re-embeds only itself, a broken cache file never fails a build;
* names: ``openai:MODEL?dimensions=N&base_url=URL`` in ``resolve_embedder``, index specs,
  the settings and ``toolsearch index build --embedder``, and a recorded name never choosing
  the endpoint;
* the vector, hybrid and catalog indexes over the bundled acme catalog.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("numpy", reason="API embedders need numpy")
pytest.importorskip("openai", reason="OpenAIEmbedder needs toolsearch[openai-embeddings]")

import numpy as np
from embedding_server import EmbeddingServer

from toolsearch.errors import (
    EmbeddingApiError,
    IndexUnavailableError,
    MissingExtraError,
    ToolIndexError,
)
from toolsearch.indexes import specs
from toolsearch.indexes.embedders.api import GeminiEmbedder, OpenAIEmbedder
from toolsearch.indexes.embedders.api_names import ApiEmbedderSpec
from toolsearch.indexes.embedders.cache import CACHE_FILE, EmbeddingCache, text_key
from toolsearch.search.types import ToolSearchRequest
from toolsearch.tools.definition import ToolDefinition
from toolsearch_bench.loaders import load_bundled

MODEL = "test-embed"
_ENVIRONMENT = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "TOOLSEARCH_EMBEDDING_CACHE",
)


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No inherited endpoint, key or cache setting; the default cache under tmp_path; and a
    fresh in-process embedding store, so every test sees its requests at the server."""
    for name in _ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TOOLSEARCH_CACHE_DIR", str(tmp_path / "toolsearch-cache"))
    try:
        from toolsearch.indexes import vector
    except ImportError:  # pragma: no cover - numpy is here, faiss may not be
        return
    monkeypatch.setattr(vector, "_STORE", vector._EmbeddingStore())


@pytest.fixture
def server():
    with EmbeddingServer() as running:
        yield running


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "embeddings"


@pytest.fixture(scope="module")
def acme() -> tuple[tuple[ToolDefinition, ...], Any]:
    catalog, queries = load_bundled()
    return catalog.tools, queries


def _sleeps() -> tuple[list[float], Any]:
    waits: list[float] = []
    return waits, waits.append


def _openai(server: EmbeddingServer, cache: Any = False, **options: Any) -> OpenAIEmbedder:
    return OpenAIEmbedder(MODEL, base_url=server.url, cache=cache, **options)


def _names(index: Any, query: str, k: int = 5) -> list[str]:
    response = index.search(ToolSearchRequest("s", query, k))
    return [ref.tool_name for ref in response.tool_references]


def _fresh_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a new process has: no tool embeddings in memory."""
    from toolsearch.indexes import vector

    monkeypatch.setattr(vector, "_STORE", vector._EmbeddingStore())


# -- requests ------------------------------------------------------------------------------


def test_openai_requests_are_batched_and_vectors_unit_length(server) -> None:
    embedder = _openai(server, batch_size=7)
    texts = [f"tool number {i} does thing {i % 5}" for i in range(20)]
    vectors = embedder.embed_documents([*texts, texts[0], "   "])  # a repeat and a blank
    assert vectors.shape == (22, 64)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[:21], axis=1), 1.0, atol=1e-5)
    assert not vectors[21].any()  # a blank text: a zero vector, never sent
    assert np.array_equal(vectors[0], vectors[20])
    assert server.batches == [7, 7, 6]  # each text once, batch_size at most
    body = server.bodies[0]
    assert body["model"] == MODEL
    assert body["encoding_format"] == "float"
    assert "dimensions" not in body
    assert server.headers[0]["authorization"] == "Bearer unused"  # a local endpoint, no key
    assert (embedder.requests, embedder.embedded, embedder.dimension) == (3, 20, 64)


def test_dimensions_are_asked_for_and_named(server) -> None:
    embedder = _openai(server, dimensions=16)
    assert embedder.name == f"openai:{MODEL}?dimensions=16&base_url={server.url}"
    vectors = embedder.embed_documents(["refund a payment", "send an email"])
    assert vectors.shape == (2, 16)
    assert server.bodies[0]["dimensions"] == 16
    assert embedder.dimension == 16


def test_an_endpoint_that_ignores_dimensions_is_a_clear_error(server) -> None:
    server.ignore_dimensions = True
    with pytest.raises(EmbeddingApiError, match="ignores `dimensions`") as caught:
        _openai(server, dimensions=16).embed_documents(["refund a payment"])
    assert server.url in str(caught.value)


def test_queries_are_cached_in_memory_only(server, cache_dir) -> None:
    embedder = _openai(server, cache=cache_dir)
    first = embedder.embed_query("refund the last payment")
    again = embedder.embed_query("refund the last payment")
    assert server.requests == 1
    assert np.array_equal(first, again)
    assert math.isclose(float(np.linalg.norm(first)), 1.0, rel_tol=1e-5)
    assert EmbeddingCache(cache_dir).count() == 0  # user content never reaches the disk
    assert not embedder.embed_query("  ").any()  # blank: a zero vector, no request
    assert server.requests == 1


def test_the_api_key_is_sent_and_never_shown(server, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-123")
    server.fail(401, message="Incorrect API key provided: sk-test-secret-123")
    waits, sleep = _sleeps()
    with pytest.raises(EmbeddingApiError) as caught:
        _openai(server, sleep=sleep).embed_documents(["refund a payment"])
    error = caught.value
    assert server.headers[0]["authorization"] == "Bearer sk-test-secret-123"
    assert "sk-test-secret-123" not in str(error)
    assert "***" in str(error)
    assert "OPENAI_API_KEY" in str(error)  # says what to check
    assert (error.status_code, error.retryable, server.requests, waits) == (401, False, 1, [])


# -- retries and errors ------------------------------------------------------------------------


def test_rate_limits_and_server_errors_are_retried(server) -> None:
    server.fail(429, retry_after=0.25)
    server.fail(500)
    waits, sleep = _sleeps()
    embedder = _openai(server, retry_backoff=0.1, sleep=sleep)
    vectors = embedder.embed_documents(["refund a payment"])
    assert vectors.shape == (1, 64)
    assert server.requests == 3
    assert embedder.requests == 3
    assert waits[0] == 0.25  # the server's Retry-After
    assert 0.05 <= waits[1] <= 0.1  # our backoff, with jitter


def test_a_long_retry_after_is_a_quota_and_ends_the_attempts(server) -> None:
    server.fail(429, retry_after=3600, message="quota exceeded")
    waits, sleep = _sleeps()
    with pytest.raises(EmbeddingApiError, match="asks to wait 3600 s") as caught:
        _openai(server, sleep=sleep).embed_documents(["refund a payment"])
    assert (caught.value.status_code, server.requests, waits) == (429, 1, [])


def test_a_persistent_failure_is_the_project_error(server) -> None:
    server.fail(503, times=10)
    waits, sleep = _sleeps()
    with pytest.raises(EmbeddingApiError) as caught:
        _openai(server, max_retries=2, sleep=sleep).embed_documents(["refund a payment"])
    error = caught.value
    assert isinstance(error, IndexUnavailableError)
    assert isinstance(error, ToolIndexError)
    assert error.to_tool_result()["error"] == "index_unavailable"  # what the model reads
    assert (error.provider, error.url, error.status_code) == ("openai", server.url, 503)
    assert error.retryable
    assert "after 3 attempts" in str(error)
    assert f"openai embeddings at {server.url} (model '{MODEL}')" in str(error)
    assert server.requests == 3
    assert len(waits) == 2


def test_an_unreachable_endpoint_is_retried_then_named(tmp_path) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    waits, sleep = _sleeps()
    embedder = OpenAIEmbedder(
        MODEL, base_url=f"http://127.0.0.1:{port}/v1", cache=False, max_retries=1, sleep=sleep
    )
    with pytest.raises(EmbeddingApiError, match="is the server running") as caught:
        embedder.embed_documents(["refund a payment"])
    assert caught.value.status_code is None
    assert f"127.0.0.1:{port}" in str(caught.value)
    assert len(waits) == 1


def test_a_missing_key_for_the_provider_itself_says_so() -> None:
    with pytest.raises(EmbeddingApiError, match="OPENAI_API_KEY") as caught:
        OpenAIEmbedder(MODEL, cache=False).embed_documents(["refund a payment"])
    assert caught.value.url == "https://api.openai.com/v1"


def test_a_missing_sdk_names_the_extra(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(MissingExtraError, match=r"toolsearch\[openai-embeddings\]"):
        OpenAIEmbedder(MODEL)


# -- the disk cache ------------------------------------------------------------------------


def test_vector_index_over_acme_and_a_rebuild_sends_no_request(
    server, cache_dir, acme, monkeypatch
) -> None:
    pytest.importorskip("faiss", reason="VectorToolIndex needs faiss")
    from toolsearch.indexes.vector import VectorToolIndex

    tools, _ = acme
    first = _openai(server, cache=cache_dir, batch_size=50)
    index = VectorToolIndex(embedder=first)
    index.index_tools("s", tools)
    assert server.inputs >= len(tools)  # every tool (each of its texts) embedded once
    assert max(server.batches) == 50
    assert sum(server.batches) == server.inputs == first.embedded
    assert _names(index, "refund a payment")[0] == "refund_payment"
    built = server.requests

    _fresh_store(monkeypatch)  # a new process: nothing in memory, the same cache folder
    second = _openai(server, cache=cache_dir, batch_size=50)
    again = VectorToolIndex(embedder=second)
    again.index_tools("s", tools)
    assert server.requests == built  # nothing embedded again
    assert (second.requests, second.embedded) == (0, 0)
    assert second.cache_hits >= len(tools)
    assert _names(again, "refund a payment")[0] == "refund_payment"
    assert server.requests == built + 1  # the query


def test_a_changed_tool_is_the_only_one_embedded_again(server, cache_dir, acme, monkeypatch):
    pytest.importorskip("faiss", reason="VectorToolIndex needs faiss")
    from toolsearch.indexes.vector import VectorToolIndex

    tools, _ = acme
    VectorToolIndex(embedder=_openai(server, cache=cache_dir)).index_tools("s", tools)
    before, built = server.inputs, server.requests
    changed = list(tools)
    changed[3] = dataclasses.replace(changed[3], description="Merge two duplicate contacts.")
    _fresh_store(monkeypatch)
    embedder = _openai(server, cache=cache_dir)
    VectorToolIndex(embedder=embedder).index_tools("s", changed)
    assert server.requests == built + 1  # this one tool
    sent = server.bodies[-1]["input"]
    assert 1 <= len(sent) == server.inputs - before == embedder.embedded < 5  # its texts only
    assert any("Merge two duplicate contacts" in text for text in sent)
    assert embedder.cache_hits >= len(tools) - 1


def test_hybrid_index_over_acme_with_an_api_embedder(server, cache_dir, acme) -> None:
    pytest.importorskip("faiss", reason="VectorToolIndex needs faiss")
    from toolsearch.indexes.hybrid import HybridToolIndex
    from toolsearch.indexes.lexical.bm25 import Bm25ToolIndex
    from toolsearch.indexes.vector import VectorToolIndex

    tools, queries = acme
    embedder = _openai(server, cache=cache_dir)
    index = HybridToolIndex(bm25=Bm25ToolIndex(), vector=VectorToolIndex(embedder=embedder))
    index.index_tools("s", tools)
    assert _names(index, "refund a payment")[0] == "refund_payment"
    found = sum(query.gold[0] in _names(index, query.text) for query in queries)
    assert found / len(queries) > 0.5  # the fake vectors plus BM25: a sane ranking


def test_a_new_vector_length_behind_the_same_name_drops_the_cache(server, cache_dir) -> None:
    _openai(server, cache=cache_dir).embed_documents(["refund a payment"])
    server.dimension = 32  # another model behind the same address and name
    stale = _openai(server, cache=cache_dir)
    assert stale.dimension == 64  # what the cache recorded
    with pytest.raises(EmbeddingApiError, match="changed"):
        stale.embed_documents(["send an email"])
    assert EmbeddingCache(cache_dir).count() == 0
    fresh = _openai(server, cache=cache_dir)
    assert fresh.embed_documents(["refund a payment"]).shape == (1, 32)


def test_a_broken_cache_file_never_fails_embedding(server, cache_dir, caplog) -> None:
    cache_dir.mkdir()
    (cache_dir / CACHE_FILE).write_bytes(b"this is not a database" * 100)
    embedder = _openai(server, cache=cache_dir)
    with caplog.at_level(logging.WARNING):
        vectors = embedder.embed_documents(["refund a payment", "send an email"])
    assert vectors.shape == (2, 64)
    assert server.requests == 1
    assert embedder.cache is not None
    assert not embedder.cache.enabled
    assert "embedding cache" in caplog.text


def test_the_cache_keeps_models_apart_and_rejects_wrong_lengths(cache_dir) -> None:
    cache = EmbeddingCache(cache_dir)
    keys = [text_key("a"), text_key("b")]
    cache.put_many("model-one", keys, np.eye(2, 4, dtype=np.float32))
    found = cache.get_many("model-one", [*keys, text_key("c")], 4)
    assert sorted(found) == sorted(keys)
    assert np.array_equal(found[keys[1]], [0, 1, 0, 0])
    assert cache.get_many("model-two", keys, 4) == {}
    assert cache.get_many("model-one", keys, 8) == {}  # another length is not this model's
    assert (cache.dimension("model-one"), cache.dimension("model-two")) == (4, None)
    cache.clear("model-one")
    assert cache.count() == 0


def _write_shared(folder: Path, worker: int) -> None:
    """One writer of the concurrency test: 10 batches of 20 vectors, its own connections."""
    cache = EmbeddingCache(folder)
    for batch in range(10):
        keys = [text_key(f"{worker}-{batch}-{i}") for i in range(20)]
        cache.put_many("shared", keys, np.ones((20, 8), dtype=np.float32))
    assert cache.enabled


def test_concurrent_writers_share_one_cache(cache_dir) -> None:
    import multiprocessing

    errors: list[BaseException] = []

    def write(worker: int) -> None:
        try:
            _write_shared(cache_dir, worker)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    forks = "fork" in multiprocessing.get_all_start_methods()
    processes = [
        multiprocessing.get_context("fork").Process(target=_write_shared, args=(cache_dir, n))
        for n in ((0, 1) if forks else ())
    ]
    threads = [threading.Thread(target=write, args=(n,)) for n in (2, 3, 4)]
    for worker in [*processes, *threads]:
        worker.start()
    for worker in [*processes, *threads]:
        worker.join()
    assert errors == []
    assert all(process.exitcode == 0 for process in processes)
    assert EmbeddingCache(cache_dir).count("shared") == (3 + len(processes)) * 10 * 20


def test_the_default_cache_follows_the_environment(tmp_path, monkeypatch) -> None:
    assert _default_cache().folder == tmp_path / "toolsearch-cache" / "embeddings"
    monkeypatch.setenv("TOOLSEARCH_EMBEDDING_CACHE", str(tmp_path / "elsewhere"))
    assert _default_cache().folder == tmp_path / "elsewhere"
    monkeypatch.setenv("TOOLSEARCH_EMBEDDING_CACHE", "off")
    assert OpenAIEmbedder(MODEL).cache is None


def _default_cache() -> EmbeddingCache:
    cache = OpenAIEmbedder(MODEL).cache
    assert cache is not None
    return cache


# -- names -----------------------------------------------------------------------------------


def test_names_resolve_to_embedders_and_back(server, monkeypatch) -> None:
    named = specs.resolve_embedder(f"openai:{MODEL}?base_url={server.url}/&dimensions=16")
    assert isinstance(named, OpenAIEmbedder)
    assert named.name == f"openai:{MODEL}?dimensions=16&base_url={server.url}"
    assert specs.resolve_embedder(named.name).name == named.name  # a recorded name round-trips
    assert specs.resolve_embedder("openai:text-embedding-3-small").name == (
        "openai:text-embedding-3-small"  # OpenAI's own endpoint is left out of the name
    )
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    from_env = specs.resolve_embedder(f"openai:{MODEL}")
    assert from_env.name == f"openai:{MODEL}?base_url={server.url}"
    assert from_env.embed_documents(["refund a payment"]).shape == (1, 64)
    assert specs.resolve_embedder("gemini:models/gemini-embedding-001").name == (
        "gemini:gemini-embedding-001"
    )


def test_bad_api_names_say_how_to_write_them() -> None:
    for bad in ("openai:", "openai:m?size=3", "openai:m?dimensions=0", "gemini:m?dimensions"):
        with pytest.raises(ValueError, match=r"MODEL, optionally \?dimensions=N&base_url=URL"):
            specs.embedder_factory(bad)
    with pytest.raises(ValueError, match="not an http"):
        specs.embedder_factory("openai:m?base_url=ftp://host/v1")
    with pytest.raises(ValueError, match="openai:MODEL, gemini:MODEL"):
        specs.embedder_factory("nope")


def test_a_recorded_name_never_chooses_the_endpoint(server, monkeypatch) -> None:
    recorded = f"openai:{MODEL}?base_url={server.url}"
    with pytest.raises(ValueError, match=re.escape(f"set OPENAI_BASE_URL={server.url}")):
        specs.embedder_factory(recorded, local_only=True)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    openai_own = re.escape("set OPENAI_BASE_URL=https://api.openai.com/v1")
    with pytest.raises(ValueError, match=openai_own):
        specs.embedder_factory("openai:text-embedding-3-small", local_only=True)
    embedder = specs.embedder_factory(recorded, local_only=True)()
    assert embedder.name == recorded
    assert ApiEmbedderSpec.parse(recorded) == ApiEmbedderSpec("openai", MODEL, None, server.url)


def test_index_specs_and_settings_take_api_embedders(server, monkeypatch) -> None:
    pytest.importorskip("faiss", reason="VectorToolIndex needs faiss")
    from toolsearch.settings import ToolSearchSettings, tool_search_advisor

    index = specs.make_index(f"vector:openai:{MODEL}?base_url={server.url}")
    assert index.embedder.name == f"openai:{MODEL}?base_url={server.url}"  # type: ignore[attr-defined]
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    settings = ToolSearchSettings(index_type="hybrid", embedder=f"openai:{MODEL}")
    advisor = tool_search_advisor(settings)
    hybrid = advisor.tool_index
    hybrid.index_tools("s", [ToolDefinition(name="refund_payment", description="Refund.")])
    assert server.requests == 1
    assert _names(hybrid, "refund")[0] == "refund_payment"


# -- Gemini ------------------------------------------------------------------------------------


def test_gemini_through_google_genai_at_a_local_endpoint(server, cache_dir) -> None:
    pytest.importorskip("google.genai", reason="GeminiEmbedder needs google-genai")
    waits, sleep = _sleeps()
    embedder = GeminiEmbedder(
        "gemini-embedding-001",
        base_url=server.root,
        dimensions=32,
        cache=cache_dir,
        batch_size=2,
        sleep=sleep,
    )
    assert embedder.name == f"gemini:gemini-embedding-001?dimensions=32&base_url={server.root}"
    server.fail(429, retry_after=0.5)
    vectors = embedder.embed_documents(["refund a payment", "send an email", "open a ticket"])
    assert vectors.shape == (3, 32)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)  # re-normalised
    assert waits == [0.5]
    assert server.batches == [2, 1]
    request = server.bodies[1]["requests"][0]
    assert request["taskType"] == "RETRIEVAL_DOCUMENT"
    assert request["outputDimensionality"] == 32
    assert request["model"] == "models/gemini-embedding-001"
    assert request["content"]["parts"][0]["text"] == "refund a payment"
    query = embedder.embed_query("refund my payment")
    assert server.bodies[-1]["requests"][0]["taskType"] == "RETRIEVAL_QUERY"
    assert float(query @ vectors[0]) > float(query @ vectors[1])
    assert server.headers[-1].get("x-goog-api-key") == "unused"
    again = GeminiEmbedder(
        "gemini-embedding-001", base_url=server.root, dimensions=32, cache=cache_dir
    )
    before = server.requests
    again.embed_documents(["refund a payment", "send an email", "open a ticket"])
    assert server.requests == before


def test_gemini_failures_are_the_project_error(server) -> None:
    pytest.importorskip("google.genai", reason="GeminiEmbedder needs google-genai")
    server.fail(500, times=3)
    waits, sleep = _sleeps()
    embedder = GeminiEmbedder(
        "gemini-embedding-001", base_url=server.root, cache=False, max_retries=2, sleep=sleep
    )
    with pytest.raises(EmbeddingApiError, match="HTTP 500") as caught:
        embedder.embed_documents(["refund a payment"])
    assert caught.value.provider == "gemini"
    assert server.requests == 3
    assert len(waits) == 2


# -- the catalog index and its command line ----------------------------------------------------


def _write_catalog(tools: tuple[ToolDefinition, ...], path: Path) -> Path:
    lines = [
        json.dumps(
            {
                "name": tool.name,
                "description": tool.description,
                "input_schema": tool.input_schema,
                "category": tool.category,
            }
        )
        for tool in tools
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


_PROBE = "dimension probe"


def _embedded_reused(output: str) -> tuple[int, int]:
    found = re.search(r"\((\d+) embedded, (\d+) reused\)", output)
    assert found, output
    return int(found[1]), int(found[2])


def test_catalog_build_search_and_rebuild_without_requests(
    server, cache_dir, acme, tmp_path, monkeypatch
) -> None:
    """The issue's bar: a catalog index built with an API embedder against a local endpoint,
    searched, and rebuilt (over itself, into a new folder, in a new process) with no new
    embedding request, counted at the server."""
    pytest.importorskip("typer", reason="the command line needs toolsearch[catalog]")
    pytest.importorskip("faiss", reason="catalog indexes need toolsearch[vector]")
    from typer.testing import CliRunner

    from toolsearch.cli import _app

    tools, _ = acme
    catalog = _write_catalog(tools, tmp_path / "acme.jsonl")
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("TOOLSEARCH_EMBEDDING_CACHE", str(cache_dir))
    monkeypatch.setenv("COLUMNS", "200")  # the info table wraps long values at 80 columns
    runner = CliRunner()

    def index(*args: str) -> Any:
        result = runner.invoke(_app(), ["index", *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result

    build = ("build", str(catalog), "--kind", "hybrid", "--embedder", f"openai:{MODEL}")
    built = index(*build, "--out", str(tmp_path / "one"))
    assert f"{len(tools)} tools" in built.output
    assert server.inputs >= len(tools)  # every tool once; the vector length came with them
    assert _PROBE not in str(server.bodies)
    searched = index("search", str(tmp_path / "one"), "refund a payment", "-k", "3")
    assert "refund_payment" in searched.output
    info = index("info", str(tmp_path / "one"))
    assert f"openai:{MODEL}?base_url={server.url} (64-d)" in info.output
    after_search = server.requests

    over_itself = index(*build, "--out", str(tmp_path / "one"))
    embedded, reused = _embedded_reused(over_itself.output)
    assert embedded + reused == len(tools)
    assert reused > 0  # the catalog's own reuse, before the cache is asked
    into_new_folder = index(*build, "--out", str(tmp_path / "two"))
    assert _embedded_reused(into_new_folder.output) == (len(tools), 0)  # from the cache
    assert server.requests == after_search

    code = "import sys; from toolsearch.cli import main; main()"
    child = subprocess.run(
        [sys.executable, "-c", code, "index", *build, "--out", str(tmp_path / "three")],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=300,
    )
    assert child.returncode == 0, child.stderr
    assert server.requests == after_search  # a new process: still nothing sent

    monkeypatch.delenv("OPENAI_BASE_URL")  # the manifest alone never picks the endpoint
    refused = runner.invoke(_app(), ["index", "search", str(tmp_path / "one"), "refund"])
    assert refused.exit_code == 1
    # the error paragraph is wrapped to the terminal's width: read it unwrapped
    assert f"set OPENAI_BASE_URL={server.url}" in " ".join(refused.output.split())


def test_catalog_build_reports_an_api_failure_in_one_line(
    server, acme, tmp_path, monkeypatch
) -> None:
    pytest.importorskip("typer", reason="the command line needs toolsearch[catalog]")
    pytest.importorskip("faiss", reason="catalog indexes need toolsearch[vector]")
    from typer.testing import CliRunner

    from toolsearch.cli import _app

    tools, _ = acme
    catalog = _write_catalog(tools[:5], tmp_path / "few.jsonl")
    server.fail(400, message="input too long")
    spec = f"openai:{MODEL}?base_url={server.url}"
    result = CliRunner().invoke(
        _app(),
        ["index", "build", str(catalog), "--kind", "vector", "--embedder", spec, "--out", "x"],
    )
    assert result.exit_code == 1
    assert "input too long" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("spoil", ["nan", "not-json"])
def test_an_unusable_answer_is_the_project_error_and_is_never_cached(
    server, cache_dir, spoil: str
) -> None:
    """NaN vectors (or an HTTP 200 that is not JSON, a proxy's page) fail as the project's
    error, and nothing of them reaches the on-disk cache: a later process embeds again."""
    from toolsearch.errors import EmbeddingApiError

    server.spoil = spoil
    embedder = _openai(server, cache=cache_dir)
    with pytest.raises(EmbeddingApiError, match="unusably"):
        embedder.embed_documents(["send an email", "weather forecast"])
    server.spoil = None
    again = _openai(
        server, cache=cache_dir
    )  # another process: the cache on disk, nothing in memory
    vectors = again.embed_documents(["send an email", "weather forecast"])
    assert np.isfinite(vectors).all()
    assert again.cache_hits == 0


def test_a_damaged_cached_vector_is_embedded_again(server, cache_dir) -> None:
    """A NaN row in the cache (written by an older version) is never served."""
    from toolsearch.indexes.embedders.cache import text_key

    first = _openai(server, cache=cache_dir)
    first.embed_documents(["send an email"])
    assert first.cache is not None
    first.cache.put_many(first.name, [text_key("send an email")], np.full((1, 64), np.nan, "f4"))
    later = _openai(server, cache=cache_dir)
    before = server.inputs
    vector = later.embed_documents(["send an email"])
    assert np.isfinite(vector).all()
    assert server.inputs == before + 1  # embedded again, not read back
