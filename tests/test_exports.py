"""Each package's ``__all__`` is its one list of public names, and it tells the truth.

As httpx checks its own: every listed name resolves; the list has no duplicates;
everything public a package binds (the classes and functions it imports or defines, not
its submodules) is listed; and a package that loads names lazily (a
``__getattr__`` over a table) lists exactly the names of its table plus those it imports,
and declares each lazy name for type checkers too (its ``TYPE_CHECKING`` block), so the
three can never drift apart.
"""

from __future__ import annotations

import ast
import importlib
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "toolsearch"
PACKAGES = [
    "toolsearch",
    *sorted(f"toolsearch.{p.parent.name}" for p in ROOT.glob("*/__init__.py")),
]


def _type_checking_names(source: str) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in ast.walk(node):
                if isinstance(child, ast.ImportFrom):
                    names.update(alias.asname or alias.name for alias in child.names)
    return names


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_unique_and_resolves(name: str) -> None:
    package = importlib.import_module(name)
    listed = list(package.__all__)
    assert len(listed) == len(set(listed)), f"{name}.__all__ repeats a name"
    for public in listed:
        assert getattr(package, public, None) is not None, f"{name}.{public} does not resolve"


@pytest.mark.parametrize("name", PACKAGES)
def test_everything_public_the_package_binds_is_listed(name: str) -> None:
    package = importlib.import_module(name)
    bound = {
        key
        for key, value in vars(package).items()
        if not key.startswith("_")
        and not isinstance(value, types.ModuleType)
        and key not in {"annotations", "TYPE_CHECKING", "Any", "importlib"}
        and getattr(value, "__module__", name).startswith("toolsearch")
    }
    missing = sorted(bound - set(package.__all__))
    assert missing == [], f"{name} binds public names it does not list: {missing}"


@pytest.mark.parametrize("name", PACKAGES)
def test_lazy_names_are_declared_for_type_checkers(name: str) -> None:
    package = importlib.import_module(name)
    source = Path(package.__file__ or "").read_text(encoding="utf-8")
    declared = _type_checking_names(source)
    if not hasattr(package, "__getattr__"):
        return
    lazy = {n for n in package.__all__ if n not in vars(package)}
    assert lazy <= declared, (
        f"{name}: lazy names missing from its TYPE_CHECKING block: {sorted(lazy - declared)}"
    )
    assert declared <= set(package.__all__), (
        f"{name}: TYPE_CHECKING names it does not list: {sorted(declared - set(package.__all__))}"
    )
