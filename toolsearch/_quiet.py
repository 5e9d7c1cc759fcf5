"""Quiet model loading: the command line silences it for the whole run
(:func:`quiet_model_loading`), the library around each of its own model loads
(:func:`quiet_load`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["quiet_load", "quiet_model_loading"]


def quiet_model_loading() -> None:
    """Silence transformers' load reports, which would break up the progress display."""
    try:
        from transformers.utils import logging as transformers_api
    except ImportError:
        return
    transformers_logging: Any = transformers_api  # its functions carry no annotations
    transformers_logging.set_verbosity_error()
    transformers_logging.disable_progress_bar()


@contextmanager
def quiet_load() -> Iterator[None]:
    """Within the block, transformers prints no load report and no progress bar: loading
    the packaged MiniLM reports a benign ``UNEXPECTED embeddings.position_ids`` key and a
    weights bar on stderr, from the Python API and the MCP proxy alike. The caller's own
    verbosity and bar setting come back afterwards, so a user who raised transformers'
    verbosity sees its messages everywhere else."""
    try:
        from transformers.utils import logging as transformers_api
    except ImportError:
        yield
        return
    transformers_logging: Any = transformers_api  # its functions carry no annotations
    verbosity = transformers_logging.get_verbosity()
    bars = transformers_logging.is_progress_bar_enabled()
    transformers_logging.set_verbosity_error()
    transformers_logging.disable_progress_bar()
    try:
        yield
    finally:
        transformers_logging.set_verbosity(verbosity)
        if bars:
            transformers_logging.enable_progress_bar()
