"""Quiet model loading for the command line (``toolsearch bench``, ``toolsearch embedder``)."""

from __future__ import annotations

__all__ = ["quiet_model_loading"]


def quiet_model_loading() -> None:
    """Silence transformers' load reports, which would break up the progress display."""
    try:
        from transformers.utils import logging as transformers_logging
    except ImportError:
        return
    transformers_logging.set_verbosity_error()
    transformers_logging.disable_progress_bar()
