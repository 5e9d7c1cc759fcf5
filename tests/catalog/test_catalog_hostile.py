"""Hostile catalog files fail with a one-line CatalogSourceError, within bounded memory."""

from __future__ import annotations

import json
import resource
from pathlib import Path

import pytest

from toolsearch.errors import CatalogSourceError


def _billion_laughs(path: Path) -> Path:
    lines = [
        "openapi: 3.0.0",
        'info: {title: lol, version: "1"}',
        'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]',
    ]
    previous = "a"
    for name in "bcdefghi":
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
        previous = name
    lines.append("paths: {}")
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def test_a_yaml_alias_bomb_is_refused_without_expanding_it(tmp_path):
    pytest.importorskip("yaml", reason="toolsearch[catalog] is not installed (pyyaml)")
    from toolsearch.catalog.openapi_documents import MIN_YAML_VALUES, load_document

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(CatalogSourceError, match="expands to more than") as caught:
        load_document(_billion_laughs(tmp_path / "bomb.yaml"))
    assert "bomb.yaml" in str(caught.value)
    assert f"{MIN_YAML_VALUES:,}" in str(caught.value)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 1024  # 10^9 values would need tens of GB


def test_yaml_with_a_few_aliases_still_loads(tmp_path):
    pytest.importorskip("yaml", reason="toolsearch[catalog] is not installed (pyyaml)")
    from toolsearch.catalog.openapi_documents import load_document

    path = tmp_path / "spec.yaml"
    path.write_text(
        "openapi: 3.0.0\ninfo: {title: t, version: '1'}\n"
        "x-common: &common {type: string}\npaths: {}\ncomponents:\n"
        "  schemas:\n    A: *common\n    B: *common\n",
        encoding="utf-8",
    )
    document = load_document(path)
    assert document["components"]["schemas"]["A"] == {"type": "string"}


def test_a_deeply_nested_jsonl_line_is_a_one_line_error_naming_the_line(tmp_path):
    pytest.importorskip("tantivy", reason="toolsearch[bm25] is not installed (tantivy)")
    from toolsearch.catalog import CatalogIndex

    depth = 100_000
    schema = '{"a":' * depth + "1" + "}" * depth
    source = tmp_path / "deep.jsonl"
    source.write_text(
        json.dumps({"name": "fine", "description": "ok", "input_schema": {"type": "object"}})
        + '\n{"name": "deep", "description": "x", "input_schema": '
        + schema
        + "}\n",
        encoding="utf-8",
    )
    with pytest.raises(CatalogSourceError, match=r"deep\.jsonl:2.*nested too deeply"):
        CatalogIndex.build([source], out=tmp_path / "index", kind="bm25", workers=1)


def test_a_deeply_nested_jsonl_line_read_as_tools_names_the_line(tmp_path):
    from toolsearch.catalog import iter_tools

    depth = 100_000
    source = tmp_path / "deep.jsonl"
    source.write_text(
        '{"name": "deep", "description": "x", "input_schema": '
        + '{"a":' * depth + "1" + "}" * depth + "}\n",
        encoding="utf-8",
    )  # fmt: skip
    with pytest.raises(CatalogSourceError, match=r"deep\.jsonl:1: JSON nested too deeply"):
        list(iter_tools([source]))


def test_a_lone_surrogate_in_a_jsonl_record_is_built_like_the_in_memory_indexes(tmp_path):
    """Issue 47, item 8: ``toolsearch index build`` stopped at the codec's message (no file,
    no record) on a lone surrogate; the in-memory indexes clean it. The build stores the
    text the engines can encode (U+FFFD in the summary and category) and the definition
    as given (a JSON escape), so the tool is found and reads back unchanged."""
    from toolsearch.catalog import CatalogIndex

    source = tmp_path / "tools.jsonl"
    source.write_text(
        '{"name": "send_email", "description": "Send an email \\ud800 now",'
        ' "category": "mail \\udfff", "input_schema": {"type": "object", "properties": {}}}\n'
        + json.dumps({"name": "get_weather", "description": "weather of a city"})
        + "\n",
        encoding="utf-8",
    )
    index = CatalogIndex.build([source], out=tmp_path / "index", kind="bm25", workers=1)
    [tool] = [t for t in index.tools() if t.name == "send_email"]
    assert tool.description == "Send an email " + chr(0xD800) + " now"
    assert tool.category == "mail " + chr(0xDFFF)
    assert index.search_catalog("send an email").tool_names[0] == "send_email"
