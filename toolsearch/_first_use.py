"""What a front door's first request would otherwise load on an async app's event loop,
loaded ahead: the argument validator (``jsonschema``, 0.1-0.7 s the first time), the
OpenTelemetry API the hooks use, the settings module, and an index's embedding model; the
running event loop's worker threads (a door's first request sends its search to them); and
what is loaded then, frozen out of the cyclic garbage collector's full collections.

Front doors call :func:`preload` when they are built, and :func:`warm_index` from their
``warm_up()`` (blocking: at start-up, or on a worker thread through ``awarm_up()``).
Nothing here runs at ``import toolsearch``.
"""

from __future__ import annotations

import importlib
import threading
import weakref
from typing import Any

__all__ = ["freeze_loaded_objects", "preload", "start_loop_workers", "warm_index"]

_MODULES = ("toolsearch.settings", "toolsearch.indexes.clauses")


_FROZEN: set[str] = set()
_STARTED_LOOPS: weakref.WeakSet[Any] = weakref.WeakSet()
_STARTED_LOCK = threading.Lock()
_WORKER_HOLD_SECONDS = 0.02


def start_loop_workers() -> None:
    """Start the running event loop's default executor threads now, if called inside one.

    A door sends its searches to that executor (``asyncio.to_thread``), which starts its
    threads one at a time as work arrives: ten concurrent first requests started them on
    the event loop, each start waiting for the new thread to take the GIL (0.03-0.5 s under
    load, measured with ``benchmarks/loop_stall.py``). Here each of the executor's usual
    ``min(32, cpus + 4)`` threads gets a short wait to run, so the executor starts them all,
    once per loop, when a door is built (a door built outside a loop gets them at its
    ``awarm_up()``)."""
    import asyncio
    import os
    import time

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    with _STARTED_LOCK:
        if loop in _STARTED_LOOPS:
            return
        _STARTED_LOOPS.add(loop)
    for _ in range(min(32, (os.cpu_count() or 1) + 4)):
        # each finds the threads started before it busy, so the executor starts another
        loop.run_in_executor(None, time.sleep, _WORKER_HOLD_SECONDS)


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
    start_loop_workers()
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
