"""Test-wide setup: everything runs offline."""

import os
from pathlib import Path

import pytest

# Models load from local paths; never let a library reach for a model hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture
def clean_toolsearch_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No inherited ``TOOLSEARCH_*`` variable and no ``toolsearch.toml`` in the directory."""
    for key in list(os.environ):
        if key.startswith("TOOLSEARCH_"):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
