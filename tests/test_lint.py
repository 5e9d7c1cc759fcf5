"""The repository is ruff-clean (lint and format) and the package mypy-clean, as CI requires."""

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _ruff() -> list[str]:
    found = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if found is None:
        pytest.skip("ruff is not installed (it comes with the [test] extra)")
    return [found]


@pytest.mark.parametrize("command", [["check", "."], ["format", "--check", "."]])
def test_ruff(command):
    result = subprocess.run(
        [*_ruff(), *command], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _mypy() -> list[str]:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (it comes with the [test] extra)")
    return [sys.executable, "-m", "mypy"]


def test_mypy():
    """mypy with the pyproject.toml configuration (its ``files``: the package) finds nothing."""
    result = subprocess.run(
        [*_mypy(), "--config-file", str(ROOT / "pyproject.toml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
