"""What a front door's first request would otherwise load on an async app's event loop,
loaded ahead: the argument validator (``jsonschema``, 0.1-0.7 s the first time), the
OpenTelemetry API the hooks use, the settings module, and an index's embedding model; and
what is loaded then, frozen out of the cyclic garbage collector's full collections.

Front doors call :func:`preload` when they are built, and :func:`warm_index` from their
``warm_up()`` (blocking: at start-up, or on a worker thread through ``awarm_up()``).
Nothing here runs at ``import toolsearch``.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["freeze_loaded_objects", "preload", "warm_index"]

_MODULES = ("toolsearch.settings", "toolsearch.indexes.clauses")


_FROZEN: set[str] = set()


def freeze_loaded_objects(occasion: str = "door") -> None:
    """Move every object alive now (the frameworks' modules, a loaded model's objects) out
    of the cyclic garbage collector's view (``gc.freeze()``, a constant-time move): a full
    collection then walks only what the application allocates afterwards, instead of
    holding the interpreter, and an async app's event loop, for 0.2-1.8 s
    (``benchmarks/loop_stall.py``). Frozen objects are still freed by reference counting,
    but a cycle that was garbage already when this ran is kept for good: so it runs at most
    once per ``occasion`` per process (``"door"``: the first front door built; ``"model"``:
    the first packaged model loaded), never once per door an application builds per
    request. ``TOOLSEARCH_GC_FREEZE=0`` turns it off."""
    import gc
    import os

    if os.environ.get("TOOLSEARCH_GC_FREEZE", "1").strip().lower() in {"0", "false", "no"}:
        return
    if occasion in _FROZEN:
        return
    _FROZEN.add(occasion)
    gc.freeze()


def preload() -> None:
    """Import what the first tool call and the first search import lazily (each one that
    is installed), then :func:`freeze_loaded_objects`: front doors call it when they are
    built, after their framework is imported. A second call costs little."""
    from toolsearch.observe import warm_up_observer
    from toolsearch.tools.validation import preload as preload_validator

    preload_validator()
    warm_up_observer()
    for module in _MODULES:
        try:
            importlib.import_module(module)
        except ImportError:
            continue
    freeze_loaded_objects()


def warm_index(index: Any) -> None:
    """:func:`preload`, then ask the index's embedding model for one vector (a model
    runtime allocates its buffers at its first call). Blocking."""
    preload()
    embedder = getattr(index, "embedder", None)
    for part in (index, getattr(index, "vector", None)):
        embedder = embedder or getattr(part, "embedder", None)
    if embedder is not None and hasattr(embedder, "embed_query"):
        embedder.embed_query("warm-up")
