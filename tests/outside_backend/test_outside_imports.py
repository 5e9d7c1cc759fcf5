"""The outside-package example (``acme_index`` and its contract test) depends on nothing an
outside package could not have: the standard library, pytest, itself, and toolsearch's
public API (a public module's ``__all__``: no ``toolsearch._*`` module, no name outside
``__all__``), with ``toolsearch.testing`` for the contract. Nothing from ``tests/``."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLE = [*sorted((HERE / "acme_index").rglob("*.py")), HERE / "test_acme_index.py"]
OWN = {"acme_index"}
THIRD_PARTY = {"pytest"}


def _imports(path: Path) -> list[tuple[str, list[str], int]]:
    """``(module, names, level)`` of every import in the file (``names`` empty for
    ``import module``)."""
    found: list[tuple[str, list[str], int]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.extend((alias.name, [], 0) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.append((node.module or "", [a.name for a in node.names], node.level))
    return found


def _problems(path: Path) -> list[str]:
    problems = []
    inside = "acme_index" in path.parts
    for module, names, level in _imports(path):
        where = f"{path.name}: from {'.' * level}{module} import {', '.join(names) or '-'}"
        top = module.split(".")[0]
        if level:
            if not inside:
                problems.append(f"{where}: a relative import outside the package")
            continue
        if module == "__future__" or top in sys.stdlib_module_names or top in THIRD_PARTY:
            continue
        if top in OWN:
            continue
        if top != "toolsearch":
            problems.append(f"{where}: not the standard library, pytest or toolsearch")
            continue
        parts = module.split(".")
        if len(parts) > 2 or any(part.startswith("_") for part in parts):
            problems.append(f"{where}: not a public toolsearch module")
            continue
        public = set(getattr(importlib.import_module(module), "__all__", ()))
        problems.extend(
            f"{where}: {name} is not in {module}.__all__" for name in names if name not in public
        )
    return problems


def test_the_example_imports_only_the_public_api() -> None:
    assert len(EXAMPLE) >= 2
    problems = [problem for path in EXAMPLE for problem in _problems(path)]
    assert problems == []


def test_the_check_catches_what_it_forbids(tmp_path: Path) -> None:
    bad = tmp_path / "test_bad.py"
    bad.write_text(
        "import services\n"
        "from front_doors import Brain\n"
        "from toolsearch.indexes.session import SessionIndex\n"
        "from toolsearch._async import run_sync\n"
        "from toolsearch.indexes import _LOCATIONS\n"
        "from . import helpers\n"
    )
    assert len(_problems(bad)) == 6
