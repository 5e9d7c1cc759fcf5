"""Issue 47, item 9: a manifest edited *and checksummed again* (its ``manifest_sha256``
recomputed, so the edit is not caught as corruption) gives a typed error naming the field
or the same results, never a bare ``TypeError`` from deep in the load, nor different
search results. Every field the load reads is set to values of each wrong JSON type."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("numpy", reason="catalog indexes need numpy")

from toolsearch.catalog import CatalogIndex
from toolsearch.catalog.manifest import DIGEST_KEY, _digest
from toolsearch.errors import CatalogError

WRONG = [None, -1, 0, 10**12, "x", [], {}, 1.5, True, 1e308]


def _edits(manifest: dict[str, Any]) -> list[tuple[tuple[str, ...], Any]]:
    paths: list[tuple[str, ...]] = [
        (k,) for k in manifest if k not in (DIGEST_KEY, "format_version")
    ]
    for section, value in manifest["settings"].items():
        paths.append(("settings", section))
        if isinstance(value, dict):
            paths += [("settings", section, key) for key in value]
    paths += [("counts", key) for key in manifest["counts"]]
    for name in manifest["files"]:
        paths += [("files", name), ("files", name, "size"), ("files", name, "sha256")]
    return [(path, value) for path in paths for value in WRONG]


def _set(data: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for key in path[:-1]:
        data = data[key]
    data[path[-1]] = value


def test_an_edited_and_rechecksummed_manifest_is_typed_or_harmless(tmp_path: Path) -> None:
    source = tmp_path / "tools.jsonl"
    words = ["email", "weather", "calendar", "files", "search", "music"] * 5
    source.write_text(
        "".join(
            json.dumps({"name": f"tool_{i}", "description": f"does {w} things, number {i}"}) + "\n"
            for i, w in enumerate(words)
        ),
        encoding="utf-8",
    )
    base = tmp_path / "base"
    CatalogIndex.build([source], out=base, kind="bm25", workers=1)
    original = json.loads((base / "manifest.json").read_text("utf-8"))
    expected = CatalogIndex.load(base).search_catalog("email things", 5).tool_names
    untyped: list[str] = []
    different: list[str] = []
    edits = _edits(original)
    assert len(edits) > 200
    target = tmp_path / "edited"
    for path, value in edits:
        data = copy.deepcopy(original)
        _set(data, path, value)
        data[DIGEST_KEY] = _digest(data)
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(base, target)
        (target / "manifest.json").write_text(json.dumps(data), encoding="utf-8")
        where = f"{'.'.join(path)} = {value!r:.20}"
        try:
            index = CatalogIndex.load(target)
            got = index.search_catalog("email things", 5).tool_names
            list(index.tools())
        except CatalogError as exc:
            if "rebuild" not in str(exc):
                untyped.append(f"{where}: a typed error without the fix: {exc}")
            continue
        except Exception as exc:  # what the test counts
            untyped.append(f"{where}: {type(exc).__name__}: {exc}")
            continue
        if got != expected:
            different.append(f"{where}: {got}")
    assert untyped == []
    assert different == []
