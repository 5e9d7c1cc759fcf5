"""Test-wide setup: everything runs offline."""

import contextlib
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import services

# the OpenTelemetry SDK comes with the [test] extra: its fixtures serve every directory
with contextlib.suppress(ImportError):
    from otel_fixtures import Telemetry, _providers, otel  # noqa: F401

# Models load from local paths; never let a library reach for a model hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def _embedding_caches(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("embedding-caches")


@pytest.fixture(autouse=True)
def own_embedding_cache(
    monkeypatch: pytest.MonkeyPatch, _embedding_caches: Path, request: pytest.FixtureRequest
) -> None:
    """Each test's local embedders get a disk embedding cache of their own (created on first
    write), never the user's: no test reads rows another test, or an earlier run, wrote."""
    folder = _embedding_caches / hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:16]
    monkeypatch.setenv("TOOLSEARCH_EMBEDDING_CACHE", str(folder))


@pytest.fixture
def clean_toolsearch_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No inherited ``TOOLSEARCH_*`` variable and no ``toolsearch.toml`` in the directory."""
    for key in list(os.environ):
        if key.startswith("TOOLSEARCH_"):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A Redis server's URL (``REDIS_URL``, or one started for this run): see tests/services.py."""
    yield from services.redis_server()()


@pytest.fixture(scope="session")
def milvus_uri() -> Iterator[str]:
    """A Milvus server's URI (``MILVUS_URI``, or a Milvus Lite server started for this run)."""
    yield from services.milvus_server()()


COLD_SEARCH = {"load_all": "never", "preload_results": 0}
"""The search loop as it was before the working set became the default: no pre-retrieval,
never every tool (see ``cold_search``)."""


@pytest.fixture(autouse=True)
def cold_search(request: pytest.FixtureRequest) -> Iterator[None]:
    """For tests marked ``cold_search``: the tool-search options default to
    :data:`COLD_SEARCH`.

    Those tests pin the search loop's own mechanics (the search tool, discoveries, wire
    names, unloading, spans, each front door's search path) on catalogs of a few tools.
    With the library's defaults the working set's cost model hands such a catalog the full
    tool list, with no search tool (the full list read from the cache costs less than a
    search's worth of tools billed fresh), and pre-retrieval loads the user's words' hits
    before the first call; neither is what those tests are about. The defaults themselves
    are pinned in tests/search/test_working_set.py and tests/search/test_tool_search_options.py.
    """
    if request.node.get_closest_marker("cold_search") is None:
        yield
        return
    from toolsearch.search.options import ToolSearchOptions
    from toolsearch.settings import Settings, ToolSearchSettings

    models = (ToolSearchOptions, ToolSearchSettings)  # the settings hold copies of the fields
    before = {
        (model, name): model.model_fields[name].default for model in models for name in COLD_SEARCH
    }
    for (model, name), _ in before.items():
        model.model_fields[name].default = COLD_SEARCH[name]
    for model in (*models, Settings):  # Settings compiled ToolSearchSettings' schema in
        model.model_rebuild(force=True)
    try:
        yield
    finally:
        for (model, name), value in before.items():
            model.model_fields[name].default = value
        for model in (*models, Settings):
            model.model_rebuild(force=True)
