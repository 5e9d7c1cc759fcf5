"""Provider tool-name rules (``toolsearch.models.wire_names``): every name a provider
refuses gets a valid wire name, unique within the request, stable, and mapped back.

The adapters' use of them (definitions, history, whole and streamed calls, in every
mode) is in ``tests/contracts/test_provider_contract.py``."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolsearch import (
    AssistantMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    ToolSearchHit,
)
from toolsearch.models.wire_names import (
    ANTHROPIC_NAMES,
    GEMINI_NAMES,
    OPENAI_NAMES,
    NameRule,
    WireNames,
    request_names,
    wire_result_text,
    wire_search_result,
)

RULES = [OPENAI_NAMES, ANTHROPIC_NAMES, GEMINI_NAMES]


@pytest.fixture(params=RULES, ids=lambda rule: rule.provider)
def rule(request: pytest.FixtureRequest) -> NameRule:
    return request.param  # type: ignore[no-any-return]


def test_the_rules_are_the_providers_documented_ones() -> None:
    for provider in (OPENAI_NAMES, ANTHROPIC_NAMES):
        assert provider.accepts("get_weather-2")
        assert provider.accepts("a" * 64)
        assert not provider.accepts("a" * 65)
        assert not provider.accepts("files.read")
        assert not provider.accepts("")
    assert GEMINI_NAMES.accepts("files.read")
    assert GEMINI_NAMES.accepts("ns:files.read-2")
    assert GEMINI_NAMES.accepts("_private")
    assert not GEMINI_NAMES.accepts("1password")  # must start with a letter or _
    assert not GEMINI_NAMES.accepts("-dash")
    assert not GEMINI_NAMES.accepts("files/read")
    assert not GEMINI_NAMES.accepts("a" * 65)


@pytest.mark.parametrize(
    ("name", "openai", "gemini"),
    [
        ("files.read", "files_read", "files.read"),  # dots
        ("files/read", "files_read", "files_read"),  # slashes
        ("read file", "read_file", "read_file"),  # spaces (MCP servers' names may have them)
        ("météo", "meteo", "meteo"),  # accents dropped
        ("1password", "1password", "_1password"),
        ("get_weather", "get_weather", "get_weather"),  # valid: unchanged
    ],
)
def test_names_are_rewritten_readably(name: str, openai: str, gemini: str) -> None:
    assert WireNames(OPENAI_NAMES, [name]).wire(name) == openai
    assert WireNames(ANTHROPIC_NAMES, [name]).wire(name) == openai
    assert WireNames(GEMINI_NAMES, [name]).wire(name) == gemini


def test_names_with_nothing_the_provider_takes_stay_apart(rule: NameRule) -> None:
    names = WireNames(rule, ["天气", "查询"])
    first, second = names.wire("天气"), names.wire("查询")
    assert first != second
    assert first.startswith("tool_")
    assert rule.accepts(first)
    assert names.real(first) == "天气"


def test_a_name_over_the_limit_is_cut_with_a_hash(rule: NameRule) -> None:
    long_a = "very_long_tool_name_" * 4 + "a"
    long_b = "very_long_tool_name_" * 4 + "b"  # the same first 64 characters
    names = WireNames(rule, [long_a, long_b])
    wire_a, wire_b = names.wire(long_a), names.wire(long_b)
    assert 56 < len(wire_a) <= 64
    assert 56 < len(wire_b) <= 64
    assert wire_a != wire_b
    assert wire_a.startswith("very_long_tool_name_")
    assert names.real(wire_a) == long_a


def test_two_names_that_map_to_one_wire_name_get_distinct_ones(rule: NameRule) -> None:
    names = WireNames(rule, ["files/read", "files_read", "files\\read"])
    assert names.wire("files_read") == "files_read"  # the valid name keeps its own
    others = {names.wire("files/read"), names.wire("files\\read")}
    assert len(others) == 2
    assert "files_read" not in others
    assert all(w.startswith("files_read_") for w in others)


def test_the_mapping_does_not_depend_on_the_order(rule: NameRule) -> None:
    names = ["a.b", "a/b", "a_b", "b c", "x" * 80]
    forward = WireNames(rule, names)
    backward = WireNames(rule, names[::-1])
    assert {n: forward.wire(n) for n in names} == {n: backward.wire(n) for n in names}


def test_unknown_wire_names_come_back_unchanged(rule: NameRule) -> None:
    names = WireNames(rule, ["files.read"])
    assert names.real("no_such_tool") == "no_such_tool"  # the loop answers unknown tools


def test_history_names_join_the_mapping() -> None:
    history = [
        AssistantMessage(tool_calls=(ToolCall(id="1", name="old.tool", arguments="{}"),)),
        ToolResponseMessage(responses=(ToolResponse(id="1", name="old.tool", response_data=""),)),
    ]
    names = request_names(OPENAI_NAMES, ["files.read"], history)
    assert names.renamed == {"files.read": "files_read", "old.tool": "old_tool"}
    assert names.real("old_tool") == "old.tool"


_NAMES = st.lists(
    st.text(min_size=1, max_size=90).filter(lambda s: s.strip()), min_size=1, max_size=12
)


@given(names=_NAMES, rule_index=st.integers(0, len(RULES) - 1))
def test_any_names_get_valid_unique_reversible_wire_names(
    names: list[str], rule_index: int
) -> None:
    rule = RULES[rule_index]
    mapping = WireNames(rule, names)
    unique = list(dict.fromkeys(names))
    wires = [mapping.wire(name) for name in unique]
    assert all(rule.accepts(w) for w in wires)
    assert len(set(wires)) == len(wires)
    assert [mapping.real(w) for w in wires] == unique
    for name in unique:  # names the provider takes are never changed
        if rule.accepts(name):
            assert mapping.wire(name) == name


# -- search results: the names the model reads are the names it is offered ---------------


def _hits(*names: str) -> tuple[ToolSearchHit, ...]:
    return tuple(ToolSearchHit(name=name, summary=f"{name} summary") for name in names)


def test_a_search_result_names_its_tools_by_their_wire_names() -> None:
    hits = _hits("github.create_issue", "docs/search", "get_weather")
    names = WireNames(OPENAI_NAMES, [h.name for h in hits])
    text = json.dumps([h.name for h in hits], ensure_ascii=False)
    wired = wire_search_result(text, hits, names)
    assert wired == '["github_create_issue", "docs_search", "get_weather"]'
    assert json.loads(wired) == [names.wire(h.name) for h in hits]


def test_a_search_result_with_summaries_renames_only_the_name_key() -> None:
    hits = _hits("météo.forecast", "get_weather")
    names = WireNames(OPENAI_NAMES, [h.name for h in hits])
    shown = [{"name": "météo.forecast", "summary": "Prévisions à 7 jours"}, {"name": "get_weather"}]
    wired = wire_search_result(json.dumps(shown, ensure_ascii=False), hits, names)
    expected = [
        {"name": "meteo_forecast", "summary": "Prévisions à 7 jours"},
        {"name": "get_weather"},
    ]
    assert wired == json.dumps(expected, ensure_ascii=False)  # the search tool's own format
    assert "Prévisions" in wired  # not escaped


def test_a_search_result_with_nothing_to_rename_is_returned_byte_for_byte(rule: NameRule) -> None:
    hits = _hits("get_weather", "send_email")
    names = WireNames(rule, [h.name for h in hits])
    for text in ('["get_weather","send_email"]', '[ "get_weather" ,\n "send_email" ]', "[]"):
        assert wire_search_result(text, hits, names) is text
    # Gemini takes dots: nothing is renamed there, so nothing is re-encoded either
    dotted = _hits("files.read")
    text = '["files.read"]'
    wired = wire_search_result(text, dotted, WireNames(GEMINI_NAMES, ["files.read"]))
    assert wired is text


@pytest.mark.parametrize(
    "text",
    [
        '{"error": "invalid_pattern", "message": "bad regex: files.read("}',
        "not json: files.read",
        '"files.read"',
        "",
    ],
)
def test_error_objects_and_other_text_are_left_alone(text: str) -> None:
    hits = _hits("files.read")
    assert wire_search_result(text, hits, WireNames(OPENAI_NAMES, ["files.read"])) is text


def test_only_names_the_hits_have_are_renamed() -> None:
    hits = _hits("files.read")
    names = WireNames(OPENAI_NAMES, ["files.read", "other.tool"])
    text = json.dumps(["files.read", "other.tool", "files_read", 3, ["files.read"], {"x": 1}])
    assert json.loads(wire_search_result(text, hits, names)) == [
        "files_read",
        "other.tool",  # not a hit: not this search's to rename
        "files_read",  # already a wire name: never renamed twice
        3,
        ["files.read"],
        {"x": 1},
    ]


def test_only_search_results_are_rewritten() -> None:
    names = WireNames(OPENAI_NAMES, ["files.read"])
    plain = ToolResponse(id="1", name="echo", response_data='["files.read"]')
    search = plain.model_copy(update={"search_hits": _hits("files.read")})
    assert wire_result_text(plain, names) == '["files.read"]'
    assert wire_result_text(search, None) == '["files.read"]'
    assert wire_result_text(search, names) == '["files_read"]'


def test_search_hits_in_the_history_join_the_mapping() -> None:
    hits = _hits("docs/search", "x" * 70)
    history = [
        ToolResponseMessage(
            responses=(ToolResponse(id="1", name="search", response_data="", search_hits=hits),)
        ),
    ]
    names = request_names(OPENAI_NAMES, ["search"], history)
    assert set(names.renamed) == {"docs/search", "x" * 70}
    assert all(OPENAI_NAMES.accepts(w) for w in names.renamed.values())
    # the same stable mapping as when the tools themselves are offered
    offered = request_names(OPENAI_NAMES, ["search", "docs/search", "x" * 70])
    assert names.renamed == offered.renamed
