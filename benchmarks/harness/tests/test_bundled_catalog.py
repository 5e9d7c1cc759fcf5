"""The bundled Acme catalog: its size and mix, its schemas, its requests, and its loader."""

import json
import re
from collections import Counter

import pytest

from toolsearch.tools.definition import ToolDefinition
from toolsearch_bench.data import Catalog, Query, QuerySet
from toolsearch_bench.loaders import bundled as bundled_module
from toolsearch_bench.loaders.bundled import load_bundled


@pytest.fixture(scope="module")
def acme():
    return load_bundled()


def test_size_and_mix(acme):
    catalog, queries = acme
    assert catalog.name == queries.name == "acme"
    assert 140 <= len(catalog) <= 170
    categories = Counter(t.category for t in catalog.tools)
    assert None not in categories
    assert 13 <= len(categories) <= 18
    assert min(categories.values()) >= 5  # every service is a real service, not a stray
    assert 360 <= len(queries) <= 460
    multi = [q for q in queries if len(q.gold) > 1]
    assert 0.30 <= len(multi) / len(queries) <= 0.40
    assert all(2 <= len(q.gold) <= 4 for q in multi)
    assert any(len(q.gold) == 4 for q in multi)
    assert sum(1 for q in multi if len(q.metadata["services"]) > 1) >= len(multi) // 2


def test_every_gold_exists_and_every_tool_is_gold(acme):
    catalog, queries = acme
    queries.validate_against(catalog)
    used = {g for q in queries for g in q.gold}
    assert used == set(catalog.names)
    singles = {q.gold[0] for q in queries if len(q.gold) == 1}
    assert singles == set(catalog.names)  # each tool is also asked for on its own


def test_query_records(acme):
    catalog, queries = acme
    category = {t.name: t.category for t in catalog.tools}
    ids = [q.id for q in queries]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"acme-\d{4}", i) for i in ids)
    assert len({q.text for q in queries}) == len(queries)
    for query in queries:
        assert query.text
        assert query.text.strip() == query.text
        assert len(set(query.gold)) == len(query.gold), query.id
        kind = "multi" if len(query.gold) > 1 else "single"
        assert query.metadata["kind"] == kind, query.id
        assert query.metadata["services"] == list(dict.fromkeys(category[g] for g in query.gold))


def test_requests_do_not_name_their_tools(acme):
    _, queries = acme
    naming = [q.id for q in queries if any(g.lower() in q.text.lower() for g in q.gold)]
    assert len(naming) <= 0.05 * len(queries), naming


def _style(name: str) -> str:
    if "." in name:
        return "dotted"
    if "-" in name:
        return "kebab"
    if "_" in name:
        return "snake" if name == name.lower() else "prefixed"
    if name[0].isupper():
        return "pascal"
    return "camel" if any(c.isupper() for c in name) else "lower"


def test_naming_styles(acme):
    catalog, _ = acme
    for tool in catalog.tools:
        assert tool.name
        assert not any(c.isspace() for c in tool.name)
    styles = Counter(_style(t.name) for t in catalog.tools)
    assert len([s for s, n in styles.items() if n >= 5]) >= 4, styles
    prefixes = Counter(re.split(r"[._-]", t.name)[0] for t in catalog.tools if "_" in t.name)
    assert prefixes["codehub"] >= 5  # product-prefixed names, as real servers use


def _properties_described(schema, where):
    for key, prop in (schema.get("properties") or {}).items():
        assert isinstance(prop, dict), f"{where}.{key}"
        assert str(prop.get("description") or "").strip(), f"{where}.{key} has no description"
        _properties_described(prop, f"{where}.{key}")
        items = prop.get("items")
        if isinstance(items, dict):
            _properties_described(items, f"{where}.{key}[]")


def test_schemas(acme):
    catalog, _ = acme
    nested = arrays_of_objects = enums = 0
    for tool in catalog.tools:
        schema = tool.input_schema
        assert schema.get("type") == "object", tool.name
        assert isinstance(schema.get("properties"), dict), tool.name
        assert schema["properties"], tool.name
        assert set(schema.get("required", [])) <= set(schema["properties"]), tool.name
        assert tool.description.strip(), tool.name
        _properties_described(schema, tool.name)
        text = json.dumps(schema)
        props = schema["properties"].values()
        nested += any(p.get("type") == "object" for p in props)
        arrays_of_objects += any(
            p.get("type") == "array" and p["items"].get("type") == "object" for p in props
        )
        enums += '"enum"' in text
    assert nested >= 20
    assert arrays_of_objects >= 15
    assert enums >= 60
    try:
        from jsonschema import Draft202012Validator
    except ImportError:  # the structural checks above still ran
        return
    for tool in catalog.tools:
        Draft202012Validator.check_schema(tool.input_schema)


def test_jsonl_round_trip(acme, tmp_path):
    catalog, queries = acme
    catalog.to_jsonl(tmp_path / "tools.jsonl")
    queries.to_jsonl(tmp_path / "queries.jsonl")
    catalog_back = Catalog.from_jsonl(tmp_path / "tools.jsonl", name="acme")
    queries_back = QuerySet.from_jsonl(tmp_path / "queries.jsonl", name="acme")
    assert catalog_back.tools == catalog.tools
    assert [t.category for t in catalog_back.tools] == [t.category for t in catalog.tools]
    assert [t.fingerprint for t in catalog_back.tools] == [t.fingerprint for t in catalog.tools]
    assert queries_back.queries == queries.queries


def test_loader_prefers_the_installed_copy(tmp_path, monkeypatch):
    folder = tmp_path / "_datasets" / "acme"
    Catalog("acme", (ToolDefinition("only_tool", "x"),)).to_jsonl(folder / "tools.jsonl")
    QuerySet("acme", (Query("q1", "do it", ("only_tool",)),)).to_jsonl(folder / "queries.jsonl")
    monkeypatch.setattr(bundled_module.importlib.resources, "files", lambda _pkg: tmp_path)
    catalog, queries = load_bundled("acme")
    assert catalog.names == {"only_tool"}
    assert len(queries) == 1


def test_loader_rejects_gold_outside_the_catalog(tmp_path, monkeypatch):
    folder = tmp_path / "_datasets" / "broken"
    Catalog("broken", (ToolDefinition("a_tool"),)).to_jsonl(folder / "tools.jsonl")
    QuerySet("broken", (Query("q1", "x", ("ghost",)),)).to_jsonl(folder / "queries.jsonl")
    monkeypatch.setattr(bundled_module.importlib.resources, "files", lambda _pkg: tmp_path)
    with pytest.raises(ValueError, match="ghost"):
        load_bundled("broken")


def test_missing_dataset_names_both_places():
    with pytest.raises(FileNotFoundError) as info:
        load_bundled("no-such-dataset")
    message = str(info.value)
    assert "installed package" in message
    assert "source checkout" in message
    assert message.count("no-such-dataset") >= 3  # the name and both folders


def test_bad_names_are_refused():
    with pytest.raises(ValueError, match="not a bundled dataset name"):
        load_bundled("../acme")
