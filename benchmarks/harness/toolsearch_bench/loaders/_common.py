"""Small pieces every dataset loader needs."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterable, Sequence

__all__ = ["choose", "distribution_version"]


def distribution_version(distribution: str) -> str:
    """The installed version of ``distribution``, or ``""`` when it is not installed."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return ""


def choose(given: Iterable[str] | str | None, allowed: Sequence[str], what: str) -> tuple[str, ...]:
    """The parts of a dataset a caller asked for, in order and without repeats.

    ``None`` means all of ``allowed``; an unknown or empty choice is a ``ValueError`` that
    lists what can be chosen (``what`` names the kind, e.g. ``"tau2 domain"``)."""
    if given is None:
        return tuple(allowed)
    if isinstance(given, str):
        given = [given]
    chosen: list[str] = []
    for item in given:
        if item not in allowed:
            raise ValueError(f"{what} {item!r} unknown; choose from {', '.join(allowed)}")
        if item not in chosen:
            chosen.append(item)
    if not chosen:
        raise ValueError(f"choose at least one {what}")
    return tuple(chosen)
