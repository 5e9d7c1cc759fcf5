"""Which session a run belongs to (:class:`SessionRef`, :func:`resolve_session`), and the
worker-thread helper the async paths share (:func:`run_in_thread`)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

__all__ = ["EPHEMERAL_PREFIX", "SessionRef", "resolve_session", "run_in_thread"]

EPHEMERAL_PREFIX = "ephemeral-"
"""How a throwaway session's id begins."""


async def run_in_thread(function: Any, /, *args: Any, **kwargs: Any) -> Any:
    """``asyncio.to_thread`` (imported here: ``import toolsearch`` loads no event loop)."""
    import asyncio

    return await asyncio.to_thread(function, *args, **kwargs)


@dataclass(frozen=True)
class SessionRef:
    """Which session a run belongs to; ``ephemeral`` for a throwaway session of one run."""

    session_id: str
    ephemeral: bool


def resolve_session(*candidates: object) -> SessionRef:
    """The first candidate that names a session (a non-empty string, or a value whose
    ``str`` is one; ``None`` and ``""`` are skipped), else a new throwaway session.

    A front door passes, in order, the id the caller gave explicitly and the framework's
    own session or conversation id; with neither, the run gets a session of its own, so two
    unrelated runs never see each other's discoveries.
    """
    for candidate in candidates:
        if candidate is None:
            continue
        text = str(candidate)
        if text:
            return SessionRef(text, ephemeral=False)
    return SessionRef(f"{EPHEMERAL_PREFIX}{uuid.uuid4().hex}", ephemeral=True)
