"""Every corruption of a built index is a typed error or a correct result.

A small BM25 and a small hybrid index are built once; each artifact file is then deleted,
truncated (to nothing, to half), grown by a byte, or has one byte flipped (at its start,
middle and end), and the manifest is edited field by field. For each damaged copy, loading
and searching either raises a :class:`~toolsearch.errors.CatalogIndexError` (corrupted,
mismatched, not found) or answers exactly what the intact index answers.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from toolsearch import ToolDefinition
from toolsearch.errors import CatalogIndexError
from toolsearch.search.types import ToolSearchRequest

pytest.importorskip("tantivy", reason="toolsearch[bm25] is not installed (tantivy)")

WORDS = ["weather", "forecast", "refund", "payment", "ticket", "archive", "email", "issue"]
TOOLS = [
    ToolDefinition(
        name=f"{WORDS[i % 8]}_{WORDS[(i * 3 + 1) % 8]}_{i}",
        description=f"{WORDS[i % 8]} {WORDS[(i + 2) % 8]} tool number {i}",
        input_schema={"type": "object", "properties": {"id": {"type": "string"}}},
        category=f"c{i % 3}",
    )
    for i in range(40)
]
QUERIES = ["weather forecast", "refund a payment", "archive ticket", TOOLS[5].name, "email"]


def _answers(index: Any) -> list[Any]:
    out: list[Any] = []
    for query in QUERIES:
        response = index.search_catalog(query, 5)
        out.append([(r.tool_name, r.summary, round(r.relevance_score or 0, 9)) for r in
                    response.tool_references])  # fmt: skip
        out.append(index.search_catalog(query, 3, category="c1").tool_names)
    index.index_tools("s", TOOLS[::3])
    out += [index.search(ToolSearchRequest("s", q, 4)).tool_names for q in QUERIES]
    index.clear_index("s")
    return out


@pytest.fixture(scope="module", params=["bm25", "hybrid"])
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    if request.param == "hybrid":
        pytest.importorskip("faiss", reason="toolsearch[vector] is not installed (faiss-cpu)")
    from toolsearch.catalog import CatalogIndex

    folder = tmp_path_factory.mktemp("intact") / request.param
    index = CatalogIndex.build(TOOLS, out=folder, kind=request.param, embedder="hashing", workers=1)
    expected = _answers(index)
    index.close()
    return folder, expected


def _flip(at: int) -> Any:
    def flip(path: Path) -> None:
        data = bytearray(path.read_bytes())
        if data:
            data[min(at, len(data) - 1)] ^= 0x5A
        path.write_bytes(bytes(data))

    return flip


def _damages(folder: Path) -> list[tuple[str, str, Any]]:
    """``(label, file name, damage(path))`` for every artifact file of ``folder``."""
    cases: list[tuple[str, str, Any]] = []
    for path in sorted(p for p in folder.iterdir() if p.is_file()):
        size = path.stat().st_size
        places = {0, size // 2, size - 1}
        if path.suffix == ".npy":  # inside the header's dict text (issue 34: a TokenError)
            places |= {12, 20, 30, 45, 60}
        flips = [(f"byte {at} flipped", path.name, _flip(at)) for at in places]
        cases += [
            ("deleted", path.name, Path.unlink),
            ("emptied", path.name, lambda p: p.write_bytes(b"")),
            ("halved", path.name, lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])),
            ("one byte longer", path.name, lambda p: p.write_bytes(p.read_bytes() + b"\0")),
            *sorted(flips),
        ]
    return cases


MANIFEST_EDITS = [
    ("tool count", lambda m: m["counts"].update(tools=m["counts"]["tools"] + 1)),
    ("bm25 k1", lambda m: m["settings"].setdefault("bm25", {}).update(k1=2.0)),
    ("bm25 name weight", lambda m: m["settings"].setdefault("bm25", {}).update(name_weight=1)),
    ("fusion k", lambda m: m["settings"].setdefault("hybrid", {}).update(rrf_k=60.0)),
    ("kind", lambda m: m.update(kind="vector" if m["kind"] == "hybrid" else "hybrid")),
    ("embedder name", lambda m: m.update(embedder={"name": "hashing-32", "dimension": 32})),
    ("fingerprints digest", lambda m: m.update(fingerprints_digest="0" * 64)),
    ("a file's sha256", lambda m: next(iter(m["files"].values())).update(sha256="0" * 64)),
    ("a file's size", lambda m: next(iter(m["files"].values())).update(size=1)),
    ("files dropped", lambda m: m.update(files={})),
    ("format version", lambda m: m.update(format_version=99)),
    ("not an object", lambda m: m.clear()),
]


def _outcome(folder: Path, expected: list[Any], verify: bool | None = None) -> str:
    from toolsearch.catalog import CatalogIndex

    try:
        index = CatalogIndex.load(folder, verify=verify)
        answers = _answers(index)
    except CatalogIndexError:
        return "typed error"
    except Exception as exc:  # the failure this test exists to catch
        return f"untyped {type(exc).__name__}: {exc}"
    return "same results" if answers == expected else "DIFFERENT results"


def test_every_damaged_artifact_is_a_typed_error_or_the_same_results(built, tmp_path) -> None:
    folder, expected = built
    bad = []
    for label, name, damage in _damages(folder):
        copy = tmp_path / "copy"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(folder, copy)
        damage(copy / name)
        outcome = _outcome(copy, expected)
        if outcome not in ("typed error", "same results"):
            bad.append(f"{name} {label}: {outcome}")
    assert not bad, "\n".join(bad)


def test_without_checksums_a_damaged_byte_is_never_an_untyped_error(built, tmp_path) -> None:
    """What a large index (not checksummed at load) does: a damaged byte is a typed error
    when it breaks the structure, otherwise it may change results (``--verify`` finds it)."""
    folder, expected = built
    untyped = []
    for label, name, damage in _damages(folder):
        copy = tmp_path / "copy"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(folder, copy)
        damage(copy / name)
        outcome = _outcome(copy, expected, verify=False)
        if outcome.startswith("untyped"):
            untyped.append(f"{name} {label}: {outcome}")
    assert not untyped, "\n".join(untyped)


@pytest.mark.parametrize(("label", "edit"), MANIFEST_EDITS, ids=[e[0] for e in MANIFEST_EDITS])
def test_every_manifest_edit_is_a_typed_error_or_the_same_results(built, tmp_path, label, edit):
    folder, expected = built
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    manifest_path = copy / "manifest.json"
    data = json.loads(manifest_path.read_text())
    edit(data)
    manifest_path.write_text(json.dumps(data, indent=2))
    assert _outcome(copy, expected) in ("typed error", "same results")
