"""Modules that moved into family folders still import by their old paths, with a warning.

Every row of :data:`toolsearch._moved.MOVED` is tried in a fresh interpreter state: the old
name imports (as ``import`` and as ``from package import name``), warns with a
``DeprecationWarning`` that names the new path, and gives the very module of the new
path, so the objects in it are the same. The three modules that became packages under
their own names hand on their old public names with no warning at all.
"""

from __future__ import annotations

import importlib
import sys
import warnings

import pytest

from toolsearch._moved import MOVED


def _forget(name: str) -> None:
    """Drop the old name so the import system asks the finder again."""
    sys.modules.pop(name, None)
    parent, _, child = name.rpartition(".")
    package = sys.modules.get(parent)
    if package is not None and child in vars(package):
        delattr(package, child)


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_the_old_path_imports_the_new_module_with_a_warning(old: str, new: str) -> None:
    _forget(old)
    moved = importlib.import_module(new)
    with pytest.warns(DeprecationWarning, match=rf"{old} moved to {new}"):
        module = importlib.import_module(old)
    assert module is moved
    assert module.__name__ == new
    assert module.__spec__ is not None
    assert module.__spec__.name == new
    for name in getattr(moved, "__all__", []):
        assert getattr(module, name) is getattr(moved, name)


@pytest.mark.parametrize("old", sorted(MOVED))
def test_from_package_import_the_old_name_works_too(old: str) -> None:
    _forget(old)
    parent, _, child = old.rpartition(".")
    namespace: dict[str, object] = {}
    with pytest.warns(DeprecationWarning, match=rf"{old} moved to "):
        exec(f"from {parent} import {child} as module", namespace)
    assert namespace["module"] is importlib.import_module(MOVED[old])


def test_the_warning_points_at_the_import_line() -> None:
    old = "toolsearch.search.redis_store"
    _forget(old)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(f"import {old}", {})
    assert [w.filename for w in caught if w.category is DeprecationWarning] == ["<string>"]


@pytest.mark.parametrize(
    ("package", "module"),
    [
        ("toolsearch.indexes.embedders", "toolsearch.indexes.embedders.local"),
        ("toolsearch.indexes.milvus", "toolsearch.indexes.milvus.index"),
        ("toolsearch.catalog.cli", "toolsearch.catalog.cli.commands"),
    ],
)
def test_a_module_that_became_a_package_hands_on_its_names(package: str, module: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        face = importlib.import_module(package)
        inner = importlib.import_module(module)
    assert face.__all__
    for name in face.__all__:
        assert getattr(face, name) is getattr(inner, name)


def test_the_package_faces_and_toolsearch_search_import_without_warnings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from toolsearch.indexes import Bm25ToolIndex, OnnxEmbedder, RegexToolIndex
        from toolsearch.search import JsonlSearchLog, RedisSessionStore, ToolSearchTool
        from toolsearch.stores import InMemorySessionStore

    assert Bm25ToolIndex.__module__ == "toolsearch.indexes.lexical.bm25"
    assert RegexToolIndex.__module__ == "toolsearch.indexes.lexical.regex"
    assert OnnxEmbedder.__module__ == "toolsearch.indexes.embedders.onnx"
    assert JsonlSearchLog.__module__ == "toolsearch.search.logs.sink"
    assert RedisSessionStore.__module__ == "toolsearch.stores.redis_store"
    assert ToolSearchTool.__module__ == "toolsearch.search.builtin_tools.search_tool"
    assert InMemorySessionStore.__module__ == "toolsearch.stores.session_store"


def test_an_unknown_name_is_still_not_found() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("toolsearch.search.no_such_module")
