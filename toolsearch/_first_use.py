"""What a front door's first request would otherwise load on an async app's event loop,
loaded ahead: the argument validator (``jsonschema``, 0.1-0.7 s the first time), the
OpenTelemetry API the hooks use, the settings module, and an index's embedding model.

Front doors call :func:`preload` when they are built, and :func:`warm_index` from their
``warm_up()`` (blocking: at start-up, or on a worker thread through ``awarm_up()``).
Nothing here runs at ``import toolsearch``.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["preload", "warm_index"]

_MODULES = ("toolsearch.settings",)


def preload() -> None:
    """Import what the first tool call and the first search import lazily (each one that
    is installed); a second call costs a few dictionary lookups."""
    from toolsearch.telemetry._runtime import otel
    from toolsearch.tools.validation import preload as preload_validator

    preload_validator()
    otel()
    for module in _MODULES:
        try:
            importlib.import_module(module)
        except ImportError:
            continue


def warm_index(index: Any) -> None:
    """:func:`preload`, then ask the index's embedding model for one vector (a model
    runtime allocates its buffers at its first call). Blocking."""
    preload()
    embedder = getattr(index, "embedder", None)
    for part in (index, getattr(index, "vector", None)):
        embedder = embedder or getattr(part, "embedder", None)
    if embedder is not None and hasattr(embedder, "embed_query"):
        embedder.embed_query("warm-up")
