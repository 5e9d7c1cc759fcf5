"""Thread discipline for query-time work: one thread per query by default, all cores to build.

A search embeds one short text, looks it up in a FAISS index and may rerank twenty pairs:
work too small to split. Given several threads anyway, torch and FAISS (both OpenMP) hand
each small operation to a team of threads and wait for the slowest; when other processes
hold the cores, a team member is not running, and the whole query waits for it (and, with
OpenMP's default wait policy, the idle members spin and take CPU from the neighbours).
Query-time work therefore runs with a bounded number of threads, one by default, while
batch encoding at build time keeps every core.

* :func:`query_threads` is the setting: an explicit count (an object's ``query_threads``
  argument), else the count an enclosing :func:`using_query_threads` gives this thread
  (an index passes its own ``query_threads`` to its embedder that way), else the
  environment variable ``TOOLSEARCH_QUERY_THREADS``, else 1. ``0`` means "do not limit":
  torch and FAISS keep their own thread counts (all cores).
* :func:`torch_query_threads` and :func:`faiss_query_threads` are context managers that run
  the calling thread's torch or FAISS work with that many threads;
  :func:`torch_build_threads` runs it with the process's baseline (all cores unless the
  application chose otherwise), so build-time encoding is never limited by a query.
* Importing this module sets ``OMP_WAIT_POLICY=PASSIVE`` unless the variable is already set
  (:func:`use_passive_wait_policy`): OpenMP's idle threads then sleep instead of spinning.
  OpenMP reads the variable once, when its runtime loads (when torch or FAISS is first
  imported), which is why this happens at import, before any model or index is touched;
  an application that imported torch or FAISS before toolsearch keeps the wait policy it
  started with. Set ``OMP_WAIT_POLICY=ACTIVE`` to keep spinning on a dedicated machine.

Why a context manager with a baseline and a lock, rather than ``torch.set_num_threads(1)``
once: torch's thread count is process-global in part. ``torch.set_num_threads(n)`` sets
the OpenMP thread count of the *calling* thread and the count that threads started later
begin with; threads already running keep theirs (FAISS's ``omp_set_num_threads`` behaves
the same). Setting it once would also limit build-time encoding, and a naive
save-and-restore races when queries overlap: a thread started while another thread's query
ran would "restore" the query's count for good. So each runtime keeps one baseline (its
thread count when toolsearch first limited it, taken under a lock): a scope sets the
calling thread's count on entry and puts the baseline back on exit, whatever other threads
do meanwhile. (Scopes only serialise their set and restore calls, never the work
between.) Results do not depend on the thread count; only the time does.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = [
    "DEFAULT_QUERY_THREADS",
    "PASSIVE_WAIT_POLICY",
    "QUERY_THREADS_VARIABLE",
    "faiss_query_threads",
    "query_threads",
    "torch_build_threads",
    "torch_query_threads",
    "use_passive_wait_policy",
    "using_query_threads",
]

QUERY_THREADS_VARIABLE = "TOOLSEARCH_QUERY_THREADS"
"""The environment variable with the default thread count of query-time work."""

DEFAULT_QUERY_THREADS = 1
"""Threads per query when neither an argument nor :data:`QUERY_THREADS_VARIABLE` says."""


_LOCAL = threading.local()


def query_threads(value: int | None = None) -> int:
    """The thread count for query-time work: ``value`` if given, else the innermost
    :func:`using_query_threads` of this thread, else ``TOOLSEARCH_QUERY_THREADS``, else
    :data:`DEFAULT_QUERY_THREADS`; ``0`` means no limit.

    Read at each call, so a changed environment variable applies to the next query.
    Raises ``ValueError`` for a negative count or a variable that is not an integer.
    """
    source = "query_threads"
    if value is None:
        value = getattr(_LOCAL, "count", None)
    if value is None:
        text = os.environ.get(QUERY_THREADS_VARIABLE, "").strip()
        if not text:
            return DEFAULT_QUERY_THREADS
        source = QUERY_THREADS_VARIABLE
        try:
            value = int(text)
        except ValueError:
            raise ValueError(
                f"{QUERY_THREADS_VARIABLE}={text!r}: give a whole number of threads "
                "(0 leaves torch and FAISS at their own defaults)"
            ) from None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{source} must be a whole number of threads, 0 or more, not {value!r}")
    return value


@contextmanager
def using_query_threads(count: int | None) -> Iterator[None]:
    """Inside it, query-time work of the calling thread that has no ``query_threads`` of its
    own uses ``count`` (``None`` changes nothing). Thread-local, so concurrent queries with
    different counts do not see each other's."""
    if count is None:
        yield
        return
    query_threads(count)  # validate
    previous = getattr(_LOCAL, "count", None)
    _LOCAL.count = count
    try:
        yield
    finally:
        _LOCAL.count = previous


def use_passive_wait_policy() -> bool:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` unless the environment already sets a policy.

    Returns whether the policy in force is passive *and* took effect: ``False`` when the
    variable says otherwise, or when torch or FAISS was imported first (their OpenMP
    runtimes read the variable only when they load).
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    passive = os.environ["OMP_WAIT_POLICY"].strip().upper() == "PASSIVE"
    return passive and not _LOADED_BEFORE


_LOADED_BEFORE = "torch" in sys.modules or "faiss" in sys.modules
PASSIVE_WAIT_POLICY = use_passive_wait_policy()
"""Whether OpenMP's idle threads sleep rather than spin in this process (see the module)."""


class _Runtime:
    """One OpenMP-backed library's thread count: its baseline and the lock around changes."""

    def __init__(self, get: Callable[[], int], set_: Callable[[int], None]) -> None:
        self._get = get
        self._set = set_
        self._lock = threading.Lock()
        self._baseline: int | None = None

    def baseline(self) -> int:
        """The thread count scopes restore: the library's count when first limited."""
        with self._lock:
            if self._baseline is None:
                self._baseline = max(1, int(self._get()))
            return self._baseline

    @contextmanager
    def scope(self, count: int | None) -> Iterator[None]:
        """Run the calling thread with ``count`` threads (the baseline for ``None``)."""
        with self._lock:
            if self._baseline is None:
                self._baseline = max(1, int(self._get()))
            baseline = self._baseline
            self._set(baseline if count is None else count)
        try:
            yield
        finally:
            with self._lock:
                self._set(baseline)


def _torch() -> Any:
    import torch

    return torch


def _faiss() -> Any:
    import faiss

    return faiss


_TORCH = _Runtime(lambda: _torch().get_num_threads(), lambda n: _torch().set_num_threads(n))
_FAISS = _Runtime(lambda: _faiss().omp_get_max_threads(), lambda n: _faiss().omp_set_num_threads(n))


@contextmanager
def _unlimited() -> Iterator[None]:
    yield


def torch_query_threads(count: int | None = None) -> Any:
    """A context manager: the calling thread's torch work inside it uses
    ``query_threads(count)`` threads; afterwards it uses the baseline again.

    With a resolved count of 0 it changes nothing (torch's own thread count).
    """
    resolved = query_threads(count)
    return _TORCH.scope(resolved) if resolved else _unlimited()


def torch_build_threads() -> Any:
    """A context manager for build-time batch encoding: the calling thread runs torch with
    the baseline thread count (all cores by default), even if the thread started while a
    query scope held the count at one."""
    return _TORCH.scope(None)


def faiss_query_threads(count: int | None = None) -> Any:
    """A context manager: FAISS searches from the calling thread inside it use
    ``query_threads(count)`` OpenMP threads; 0 changes nothing."""
    resolved = query_threads(count)
    return _FAISS.scope(resolved) if resolved else _unlimited()
