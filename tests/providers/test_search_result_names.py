"""A tool search's result names the tools under the names the provider is offered them by.

Tools whose own names a provider refuses (``github.create_issue``, ``docs/search``, a name
over 64 characters) travel under wire names (``toolsearch.models.wire_names``); the search
tool's result text (a JSON list of names, or of ``{"name", "summary"}`` objects) must name
them the same way, or the model reads one name and is offered another. Checked on the
request bodies of the three adapters (Anthropic in both modes), through the advisor's loop
with a scripted model, and end to end over each SDK with a fake endpoint that plays the
model: it reads only the wire (the tools offered, the search result) and calls the tool
the search found.

The rules themselves are in ``test_wire_names.py``."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from providers.fakes import AnthropicEndpoint, Endpoint, GeminiEndpoint, OpenAIEndpoint

from toolsearch import (
    AssistantMessage,
    ChatClient,
    ChatOptions,
    FunctionToolCallback,
    Message,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    ToolResultText,
    ToolSearchHit,
    ToolSearchToolCallingAdvisor,
    UserMessage,
)
from toolsearch.chat.prompt import Prompt
from toolsearch.indexes import RegexToolIndex
from toolsearch.models import FunctionChatModel
from toolsearch.models.anthropic import anthropic_request_body, anthropic_wire_names
from toolsearch.models.gemini import gemini_request_body, gemini_wire_names
from toolsearch.models.openai import openai_request_body, openai_wire_names
from toolsearch.models.wire_names import (
    ANTHROPIC_NAMES,
    GEMINI_NAMES,
    OPENAI_NAMES,
    NameRule,
    WireNames,
)
from toolsearch.tools.definition import ToolDefinition

SEARCH = "toolSearchTool"  # the advisor's search tool (a name every provider takes)
ISSUE = "github.create_issue"
DOCS = "docs/search"
LONG = "reports.quarterly_revenue.export_breakdown_by_region_and_product_lines"
assert len(LONG) == 70
ODD = (ISSUE, DOCS, LONG)

# -- the providers' request bodies, read back -----------------------------------------------


@dataclass(frozen=True)
class Wire:
    """One adapter's request body for a prompt, and how to read its tools and results."""

    id: str
    rule: NameRule
    body: Callable[[Prompt], dict[str, Any]]
    wire_names: Callable[[Prompt], WireNames]
    tools: Callable[[dict[str, Any]], list[str]]
    results: Callable[[dict[str, Any]], list[Any]]
    """The content of each tool result, in order."""


def _openai_results(body: dict[str, Any]) -> list[Any]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def _anthropic_results(body: dict[str, Any]) -> list[Any]:
    return [
        block["content"]
        for message in body["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "tool_result"
    ]


def _gemini_results(body: dict[str, Any]) -> list[Any]:
    return [
        part["functionResponse"]["response"]["output"]
        for content in body["contents"]
        for part in content["parts"]
        if "functionResponse" in part
    ]


OPENAI = Wire(
    "openai",
    OPENAI_NAMES,
    lambda prompt: openai_request_body(prompt, model="gpt"),
    openai_wire_names,
    lambda body: [t["function"]["name"] for t in body.get("tools", ())],
    _openai_results,
)
ANTHROPIC = Wire(
    "anthropic",
    ANTHROPIC_NAMES,
    lambda prompt: anthropic_request_body(prompt, model="claude", tool_search="none"),
    anthropic_wire_names,
    lambda body: [t["name"] for t in body.get("tools", ())],
    _anthropic_results,
)
ANTHROPIC_DEFERRED = Wire(
    "anthropic-defer_loading",
    ANTHROPIC_NAMES,
    lambda prompt: anthropic_request_body(prompt, model="claude", tool_search="defer_loading"),
    anthropic_wire_names,
    ANTHROPIC.tools,
    _anthropic_results,
)
GEMINI = Wire(
    "gemini",
    GEMINI_NAMES,
    gemini_request_body,
    gemini_wire_names,
    lambda body: [d["name"] for t in body.get("tools", ()) for d in t["functionDeclarations"]],
    _gemini_results,
)
TEXT_WIRES = [OPENAI, ANTHROPIC, GEMINI]
"""The adapters that send a search result as its text (every result, in every mode)."""
WIRES = [*TEXT_WIRES, ANTHROPIC_DEFERRED]


def result_names(content: Any) -> list[str]:
    """The tool names a rendered search result gives the model: ``tool_reference`` blocks'
    names, or the names in its JSON text (plain names or ``{"name", ...}`` objects)."""
    if isinstance(content, list):
        return [block["tool_name"] for block in content if block["type"] == "tool_reference"]
    shown = json.loads(content)
    return [item["name"] if isinstance(item, dict) else item for item in shown]


# -- a request whose history has a search result ------------------------------------------


def tool(
    name: str, description: str = "", executed: list[str] | None = None, **properties: str
) -> FunctionToolCallback:
    """A tool answering ``<name> done``; its runs are appended to ``executed`` when given."""

    def run(arguments: dict[str, Any]) -> str:
        if executed is not None:
            executed.append(name)
        return f"{name} done"

    schema = {
        "type": "object",
        "properties": {key: {"type": kind} for key, kind in properties.items()},
        "required": list(properties),
    }
    return FunctionToolCallback.from_schema(
        run, name=name, description=description or f"The {name} tool.", input_schema=schema
    )


def search_turn(
    names: tuple[str, ...], *, summaries: bool = False, text: str | None = None
) -> list[Message]:
    """A user turn, the model's search call and the search tool's result naming ``names``
    (the tools' own names, as :meth:`SearchRun.render` writes them)."""
    hits = tuple(ToolSearchHit(name=n, summary=f"Does {n}, à la carte.") for n in names)
    shown: list[Any] = (
        [{"name": h.name, "summary": h.summary} for h in hits]
        if summaries
        else [h.name for h in hits]
    )
    result = ToolResultText(
        text if text is not None else json.dumps(shown, ensure_ascii=False), search_hits=hits
    )
    return [
        UserMessage(content="Open an issue about the broken docs search."),
        AssistantMessage(tool_calls=(ToolCall(id="s1", name=SEARCH, arguments='{"query": "x"}'),)),
        ToolResponseMessage(responses=(ToolResponse.of(id="s1", name=SEARCH, result=result),)),
    ]


def prompt_with(names: tuple[str, ...], history: list[Message]) -> Prompt:
    return Prompt(history, ChatOptions(tool_callbacks=[tool(SEARCH), *map(tool, names)]))


# -- request bodies ----------------------------------------------------------------------


@pytest.mark.parametrize("summaries", [False, True], ids=["names", "summaries"])
@pytest.mark.parametrize("wire", WIRES, ids=lambda w: w.id)
def test_a_search_result_names_the_tools_as_they_are_offered(wire: Wire, summaries: bool) -> None:
    prompt = prompt_with(ODD, search_turn(ODD, summaries=summaries))
    body = wire.body(prompt)

    tools = wire.tools(body)
    [content] = wire.results(body)
    found = result_names(content)
    assert all(wire.rule.accepts(name) for name in tools), tools
    assert all(wire.rule.accepts(name) for name in found), found
    assert set(found) == set(tools) - {SEARCH}
    names = wire.wire_names(prompt)
    assert found == [names.wire(n) for n in ODD]
    assert names.renamed  # the test is about names the provider refuses
    if summaries and isinstance(content, str):
        assert [item["summary"] for item in json.loads(content)] == [
            f"Does {n}, à la carte." for n in ODD
        ]
        assert "à la carte" in content  # kept as the search tool writes it, not escaped


@pytest.mark.parametrize("wire", TEXT_WIRES, ids=lambda w: w.id)
def test_a_search_result_with_nothing_to_rename_is_sent_byte_for_byte(wire: Wire) -> None:
    valid = ("get_weather", "send-email")
    text = '[ "get_weather",\n  "send-email" ]'  # not json.dumps' spacing: never re-encoded
    body = wire.body(prompt_with(valid, search_turn(valid, text=text)))
    assert wire.results(body) == [text]


@pytest.mark.parametrize("wire", TEXT_WIRES, ids=lambda w: w.id)
def test_search_errors_and_other_results_are_sent_unchanged(wire: Wire) -> None:
    error = '{"error": "invalid_pattern", "message": "bad pattern: github.create_issue("}'
    echo = json.dumps([ISSUE, DOCS])  # not a search: its names are its own business
    history = [
        UserMessage(content="Search."),
        AssistantMessage(
            tool_calls=(
                ToolCall(id="s1", name=SEARCH, arguments="{}"),
                ToolCall(id="s2", name=SEARCH, arguments="{}"),
                ToolCall(id="e1", name="echo", arguments="{}"),
            )
        ),
        ToolResponseMessage(
            responses=(
                ToolResponse(id="s1", name=SEARCH, response_data=error),  # as the tool gives it
                ToolResponse(id="s2", name=SEARCH, response_data=error, search_hits=()),
                ToolResponse(id="e1", name="echo", response_data=echo),
            )
        ),
    ]
    body = wire.body(prompt_with((*ODD, "echo"), history))
    assert wire.results(body) == [error, error, echo]


def test_anthropic_references_it_cannot_resolve_fall_back_to_text_under_wire_names() -> None:
    # docs/search is no tool of this request: no tool_reference block may name it
    prompt = prompt_with((ISSUE, LONG), search_turn(ODD))
    body = ANTHROPIC_DEFERRED.body(prompt)
    [content] = ANTHROPIC_DEFERRED.results(body)
    assert isinstance(content, str)
    found = result_names(content)
    assert found == ["github_create_issue", "docs_search", anthropic_wire_names(prompt).wire(LONG)]
    assert all(ANTHROPIC_NAMES.accepts(n) for n in found)
    assert set(found) & set(ANTHROPIC_DEFERRED.tools(body)) == {found[0], found[2]}


# -- the advisor's loop: the second request, through each adapter --------------------------


def catalog(executed: list[str]) -> list[FunctionToolCallback]:
    """The three odd names (each matches :data:`QUERY`) and one the search does not find."""
    return [
        tool(
            ISSUE,
            "Open a new issue in a GitHub repository.",
            executed,
            repo="string",
            title="string",
        ),
        tool(DOCS, "Search the docs pages for an issue or a phrase.", executed, query="string"),
        tool(LONG, "Export the quarterly revenue report of an issue, by region.", executed),
        tool("get_weather", "Current weather for a city.", executed, city="string"),
    ]


QUERY = "issue"
"""What the model searches for."""


def scripted(messages: list[Message], tools: list[ToolDefinition]) -> AssistantMessage:
    """Searches, then calls the GitHub tool the search found, then answers."""
    last = messages[-1]
    if not isinstance(last, ToolResponseMessage):
        search = ToolCall(id="c1", name=SEARCH, arguments=json.dumps({"query": QUERY}))
        return AssistantMessage(tool_calls=(search,))
    if last.responses[0].name == SEARCH:
        arguments = json.dumps({"repo": "acme/app", "title": "Docs search is broken"})
        return AssistantMessage(tool_calls=(ToolCall(id="c2", name=ISSUE, arguments=arguments),))
    return AssistantMessage(content=last.responses[0].response_data)


@pytest.mark.parametrize("wire", WIRES, ids=lambda w: w.id)
def test_the_advisors_next_request_names_the_found_tools_as_it_offers_them(wire: Wire) -> None:
    executed: list[str] = []
    model = FunctionChatModel(scripted)
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), max_results=5)
    client = ChatClient.builder(model).default_advisors(advisor).build()
    answer = client.prompt("Open an issue about the docs search").tools(catalog(executed)).call()
    assert answer.content() == f"{ISSUE} done"
    assert executed == [ISSUE]

    second, third = model.requests[1:]
    for prompt in (second, third):  # the search result stays in the history
        body = wire.body(prompt)
        names = wire.wire_names(prompt)
        tools = wire.tools(body)
        found = result_names(wire.results(body)[0])
        assert set(ODD) <= {names.real(n) for n in found}  # all three were found
        assert names.wire(ISSUE) in tools
        assert names.wire(ISSUE) in found
        assert set(found) == set(tools) - {SEARCH}
        assert all(wire.rule.accepts(n) for n in [*tools, *found])


# -- end to end over each SDK: a fake endpoint reads the wire and plays the model ----------


def act(tools: list[str], results: list[Any]) -> tuple[str, dict[str, Any]] | str:
    """What a model does seeing only the wire: search; call the GitHub tool the result
    names, if the request offers it under that name; answer with the last result."""
    if not results:
        return SEARCH, {"query": QUERY}
    if len(results) == 1:
        offered = [n for n in result_names(results[0]) if n in tools and "issue" in n]
        if not offered:
            return f"the search found no tool I was offered: {results[0]}"
        return offered[0], {"repo": "acme/app", "title": "Docs search is broken"}
    return str(results[-1])


class Playing(Endpoint):
    """An endpoint that answers each request with what :func:`act` decides from it."""

    wire: Wire

    def __init__(self) -> None:
        super().__init__()

    def __call__(self, request: Any) -> Any:
        body = json.loads(request.content)
        self.requests.append(body)
        decision = act(self.wire.tools(body), self.wire.results(body))
        reply = self.reply(decision, len(self.requests))
        content = json.dumps(reply).encode()
        return self.http.Response(
            200, content=content, headers={"content-type": "application/json"}
        )

    def reply(self, decision: tuple[str, dict[str, Any]] | str, turn: int) -> dict[str, Any]:
        raise NotImplementedError


class PlayingOpenAI(Playing, OpenAIEndpoint):
    wire = OPENAI

    def reply(self, decision: tuple[str, dict[str, Any]] | str, turn: int) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if isinstance(decision, str):
            message["content"] = decision
        else:
            name, arguments = decision
            function = {"name": name, "arguments": json.dumps(arguments)}
            message["tool_calls"] = [
                {"id": f"call_{turn}", "type": "function", "function": function}
            ]
        return {
            "id": f"chatcmpl-{turn}",
            "object": "chat.completion",
            "created": 1767225600,
            "model": self.model_name,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "stop" if isinstance(decision, str) else "tool_calls",
                }
            ],
        }


class PlayingAnthropic(Playing, AnthropicEndpoint):
    wire = ANTHROPIC

    def reply(self, decision: tuple[str, dict[str, Any]] | str, turn: int) -> dict[str, Any]:
        if isinstance(decision, str):
            content: list[dict[str, Any]] = [{"type": "text", "text": decision}]
        else:
            name, arguments = decision
            content = [
                {"type": "tool_use", "id": f"toolu_{turn}", "name": name, "input": arguments}
            ]
        return {
            "id": f"msg_{turn}",
            "type": "message",
            "role": "assistant",
            "model": self.model_name,
            "content": content,
            "stop_reason": "end_turn" if isinstance(decision, str) else "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }


class PlayingAnthropicDeferred(PlayingAnthropic):
    wire = ANTHROPIC_DEFERRED


class PlayingGemini(Playing, GeminiEndpoint):
    wire = GEMINI

    def reply(self, decision: tuple[str, dict[str, Any]] | str, turn: int) -> dict[str, Any]:
        if isinstance(decision, str):
            part: dict[str, Any] = {"text": decision}
        else:
            name, arguments = decision
            part = {"functionCall": {"name": name, "args": arguments}}
        return {
            "candidates": [
                {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
            ],
            "modelVersion": self.model_name,
        }


@pytest.mark.parametrize(
    "endpoint",
    [PlayingOpenAI, PlayingAnthropic, PlayingAnthropicDeferred, PlayingGemini],
    ids=lambda e: e.wire.id,
)
def test_a_model_that_reads_the_wire_calls_the_tool_its_search_found(
    endpoint: type[Playing],
) -> None:
    server = endpoint()
    options: dict[str, Any] = {}
    if endpoint.wire is ANTHROPIC_DEFERRED:
        options["tool_search"] = "defer_loading"
    executed: list[str] = []
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), max_results=5)
    client = ChatClient.builder(server.model(**options)).default_advisors(advisor).build()
    answer = client.prompt("Open an issue about the docs search").tools(catalog(executed)).call()

    assert executed == [ISSUE]  # the wire name the model read was mapped back to the tool
    assert answer.content() == f"{ISSUE} done"
    first, second, _final = server.requests
    assert endpoint.wire.tools(first) == [SEARCH]
    tools = endpoint.wire.tools(second)
    found = result_names(endpoint.wire.results(second)[0])
    rule = endpoint.wire.rule
    issue = ISSUE if rule.accepts(ISSUE) else "github_create_issue"  # Gemini takes dots
    assert len(found) == 3
    assert set(found) == set(tools) - {SEARCH}
    assert issue in found
    assert issue in tools
    assert "docs_search" in found
    assert DOCS not in found
    assert LONG not in found
    assert all(rule.accepts(n) for n in [*tools, *found])


# search-loop mechanics on a few tools: the plain loop (see cold_search in tests/conftest.py)
pytestmark = pytest.mark.cold_search
