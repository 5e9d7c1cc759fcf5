"""Offline-built catalog indexes for large tool catalogs (``toolsearch[catalog]``).

``CatalogIndex.build(sources, kind=..., out=...)`` writes an index folder once;
``CatalogIndex.load(path)`` opens it memory-mapped in every process, searches the whole
catalog (``search_catalog``) and serves sessions over subsets of it as a ``ToolIndex``.
Names load on first use, so importing this package stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolsearch.catalog.bm25_artifact import Bm25Settings
    from toolsearch.catalog.index import CatalogIndex, HybridSettings, resolve_embedder
    from toolsearch.catalog.manifest import FORMAT_VERSION, Manifest, read_manifest
    from toolsearch.catalog.vector_artifact import VectorSettings

_LOCATIONS = {
    "Bm25Settings": "bm25_artifact",
    "CatalogIndex": "index",
    "FORMAT_VERSION": "manifest",
    "HybridSettings": "index",
    "Manifest": "manifest",
    "VectorSettings": "vector_artifact",
    "read_manifest": "manifest",
    "resolve_embedder": "index",
}

__all__ = [
    "FORMAT_VERSION",
    "Bm25Settings",
    "CatalogIndex",
    "HybridSettings",
    "Manifest",
    "VectorSettings",
    "read_manifest",
    "resolve_embedder",
]


def __getattr__(name: str) -> Any:
    module = _LOCATIONS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"toolsearch.catalog.{module}"), name)
