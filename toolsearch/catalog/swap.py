"""Crash-safe replacement of a built index folder.

A build writes into ``.NAME.build-PID-...`` next to the target and swaps it in with two
renames (the previous index moves to ``.NAME.old-PID-...`` first); a build killed at any
point leaves the previous index whole, and the next ``load`` or ``build`` of the folder
puts it back or removes what the killed build left.
"""

from __future__ import annotations

import logging
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

from toolsearch.catalog.manifest import MANIFEST_NAME

_log = logging.getLogger(__name__)

__all__ = ["clean_stale", "leftovers", "recover_interrupted_swap", "swap_into_place"]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def leftovers(out: Path) -> Iterator[tuple[str, Path]]:
    """``(build|old, folder)`` of the temporary folders next to ``out`` whose build process
    is gone (killed): ``.NAME.build-PID-*`` (a new index being written) and
    ``.NAME.old-PID-*`` (the previous index, moved aside while swapping)."""
    if not out.parent.is_dir():
        return
    for candidate in sorted(out.parent.glob(f".{out.name}.*-*")):
        parts = candidate.name[len(out.name) + 2 :].split("-")
        if (
            len(parts) >= 2
            and parts[0] in ("build", "old")
            and parts[1].isdigit()
            and not _pid_alive(int(parts[1]))
        ):
            yield parts[0], candidate


def recover_interrupted_swap(out: Path) -> bool:
    """Put the previous index back when a build was killed between its two renames
    (``out`` moved aside, the new one not yet in place). Returns whether it did."""
    if out.exists():
        return False
    for stage, candidate in leftovers(out):
        if stage == "old" and (candidate / MANIFEST_NAME).is_file():
            try:
                os.replace(candidate, out)
            except OSError:
                continue
            _log.warning("%s: a build was interrupted; the previous index is back in place", out)
            return True
    return False


def clean_stale(out: Path) -> None:
    """Recover from a swap that was killed halfway, then remove what killed builds left."""
    recover_interrupted_swap(out)
    for _stage, candidate in leftovers(out):
        shutil.rmtree(candidate, ignore_errors=True)


def swap_into_place(staging: Path, out: Path) -> None:
    """Replace ``out`` with ``staging``: two renames; the old index stays whole until the
    new one is complete, and is deleted only after the new one is in place. An error
    between the renames moves the old index back; a process killed between them leaves it
    at ``.NAME.old-PID-*``, which the next ``load`` or ``build`` of ``out`` moves back."""
    if out.exists():
        old = out.with_name(f".{out.name}.old-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        os.replace(out, old)
        try:
            os.replace(staging, out)
        except BaseException:
            os.replace(old, out)  # the previous index goes back where it was
            raise
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(staging, out)
