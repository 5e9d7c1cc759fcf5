"""Issue 47: the results-injection path under hostile input. A search's results go back to
the model in the next request (names, summaries or definitions in the tool result; the
Anthropic adapter's ``tool_reference`` blocks; the Responses adapter's
``tool_search_output``); with hostile tool names, descriptions, queries, scores and result
sets, ``.call()`` through the real SDKs and a local HTTP server playing the model raises
nothing but a ``ToolsearchError``, and every request body is JSON.

A lone surrogate anywhere in a conversation (a user's text, a tool's description or name,
a model's search query) used to make each SDK raise a bare ``UnicodeEncodeError`` while
encoding the body, and a tool name holding one broke the wire-name mapping the same way.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("openai", reason="the openai SDK (toolsearch[openai]) is not installed")
pytest.importorskip(
    "anthropic", reason="the anthropic SDK (toolsearch[anthropic]) is not installed"
)

from toolsearch import (
    CONVERSATION_ID,
    ChatClient,
    FunctionToolCallback,
    ToolSearchToolCallingAdvisor,
)
from toolsearch.indexes import Bm25ToolIndex
from toolsearch.models.wire_names import OPENAI_NAMES, WireNames
from toolsearch_bench.fuzz_hostile import ScriptedServer, _models, fuzz_injection

SCHEMA: dict[str, Any] = {"type": "object", "properties": {"to": {"type": "string"}}}


def _tools() -> list[FunctionToolCallback]:
    return [
        FunctionToolCallback.from_schema(
            lambda _a, n=name: f"{n} ok \ud800", name=name, description=text, input_schema=SCHEMA
        )
        for name, text in [
            ("send_email", "Send an email \udfff to a recipient"),
            ("\ud800mail", "Send a letter by post \u202e"),
            ("get_weather", "Get the weather in a city"),
        ]
    ]


@pytest.mark.parametrize("provider", ["openai-chat", "openai-responses", "anthropic"])
@pytest.mark.parametrize("injection", ["tools", "results"])
def test_lone_surrogates_anywhere_in_the_conversation_still_reach_the_server(
    provider: str, injection: str
) -> None:
    with ScriptedServer() as server:
        server.query = {"query": "send an email \ud800 or a letter"}
        advisor = ToolSearchToolCallingAdvisor(
            tool_index=Bm25ToolIndex(), injection=injection, search_results_with_summaries=True
        )
        model = _models(server)[provider]()
        client = ChatClient.builder(model).default_advisors(advisor).build()
        client.prompt("mail \udc00 the board").tools(_tools()).advisors(
            lambda a: a.param(CONVERSATION_ID, "u1")
        ).call()
        assert server.bad_bodies == []
        assert server.requests == 3  # search, a call of what was found, the answer


def test_a_tool_name_with_a_lone_surrogate_gets_its_own_wire_name() -> None:
    # "x" keeps its name, so "\ud800x" (rewritten "x" too) needs a hash of its own
    given = ["x", "\ud800x", "\ufffdx"]
    names = WireNames(OPENAI_NAMES, given)
    wire = {names.wire(n) for n in given}
    assert len(wire) == 3
    assert all(OPENAI_NAMES.accepts(w) for w in wire)
    assert names.real(names.wire("\ud800x")) == "\ud800x"


def test_the_seeded_injection_fuzz_slice_gives_no_untyped_exception() -> None:
    """A slice of benchmarks/fuzz_learned.py: hostile tool sets and queries, names,
    summaries or definitions injected, a BM25, a learned and a hostile index (NaN and
    infinite scores, unknown and duplicate names, thousands of references)."""
    report = fuzz_injection(12, 4, seed=47)
    assert report.untyped == []
    assert report.bad_bodies == []
    assert report.queries == 48
    assert report.requests >= 2 * 40  # most turns reached the server and went on


def test_the_injected_results_are_json_the_model_can_read() -> None:
    with ScriptedServer() as server:
        seen: list[Any] = []
        answer = server.answer

        def recording(path: str, raw: bytes) -> dict[str, Any]:
            seen.append(json.loads(raw))
            return answer(path, raw)

        server.answer = recording  # type: ignore[method-assign]
        server.query = {"query": "send an email"}
        advisor = ToolSearchToolCallingAdvisor(tool_index=Bm25ToolIndex(), injection="results")
        model = _models(server)["openai-chat"]()
        ChatClient.builder(model).default_advisors(advisor).build().prompt("hi").tools(
            _tools()
        ).call()
    result = next(m for m in seen[1]["messages"] if m["role"] == "tool")
    found = json.loads(result["content"])
    assert found[0]["name"] == "send_email"
    assert "\ufffd" in found[0]["description"]  # the lone surrogate, replaced


# search-loop mechanics on a few tools: the plain loop (see cold_search in tests/conftest.py)
pytestmark = pytest.mark.cold_search
