"""Which discovered tools to unload: a pure choice over a session's uses.

:func:`choose_unloads` is what :meth:`~toolsearch.search.run.SearchRun.unload_idle` asks,
given the session's discoveries, each one's last turn of use (the store's
:meth:`~toolsearch.stores.session_store.SessionStore.last_used`) and the current turn; the run
then asks the store to unload them. Kept apart, the rule is tested without sessions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

__all__ = ["choose_unloads"]


def choose_unloads(
    discovered: Sequence[str],
    last_used: Mapping[str, int],
    turn: int,
    *,
    idle_turns: int | None,
    cap: int | None,
    keep: Iterable[str] = (),
) -> list[str]:
    """The tools of ``discovered`` (pinned ones already left out) to unload now, never one
    of ``keep``: every tool unused for ``idle_turns`` turns or more (``turn`` minus its
    last use), then, while more than ``cap`` would stay, the least recently used ones
    (the earliest discovered first among equals). A tool with no recorded use counts as
    used on ``turn``."""
    kept = set(keep)
    oldest_first = sorted(
        (n for n in discovered if n not in kept), key=lambda n: last_used.get(n, turn)
    )
    doomed = [
        n
        for n in oldest_first
        if idle_turns is not None and turn - last_used.get(n, turn) >= idle_turns
    ]
    if cap is not None:
        over = len(discovered) - len(doomed) - cap
        gone = set(doomed)
        doomed += [n for n in oldest_first if n not in gone][: max(0, over)]
    return doomed
