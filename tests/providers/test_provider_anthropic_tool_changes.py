"""Mid-conversation tool changes (issue 44) on every provider, and the refused native search
of issue 47 item 4.

Anthropic speaks the beta ``mid-conversation-tool-changes-2026-07-01`` against a strict
local fake of the Messages API (``anthropic_strict.py``, through the real ``anthropic``
SDK): the request bytes of a conversation with an addition and a removal are pinned byte
for byte (``tests/golden/anthropic_tool_changes.jsonl``, one request body per line, as the
SDK sent it), each request's start is the previous request, and a model without the beta
is sent the request again without the changes, once. The OpenAI (Chat Completions,
Responses) and Gemini adapters ignore ``ChatOptions.tool_changes``: their request bytes
are the same with and without them.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

anthropic = pytest.importorskip(
    "anthropic", reason="the anthropic SDK (toolsearch[anthropic]) is not installed"
)

from providers.anthropic_strict import BETA, betas, problems  # noqa: E402
from providers.fakes import AnthropicStrictEndpoint as Strict  # noqa: E402

from toolsearch import (  # noqa: E402
    AssistantMessage,
    ChatClient,
    ChatOptions,
    Prompt,
    SystemMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    ToolSearchToolCallingAdvisor,
    UserMessage,
    tool,
)
from toolsearch.chat import ToolChange  # noqa: E402
from toolsearch.errors import ProviderError  # noqa: E402
from toolsearch.indexes import RegexToolIndex  # noqa: E402
from toolsearch.models.anthropic import anthropic_request_body  # noqa: E402
from toolsearch.tools import tool_callbacks  # noqa: E402

GOLDEN = Path(__file__).parents[1] / "golden" / "anthropic_tool_changes.jsonl"


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}"


@tool
def send_email(to: str, body: str) -> str:
    """Send an email message to a recipient."""
    return "sent"


@tool
def create_ticket(title: str) -> str:
    """Open a support ticket in the helpdesk."""
    return "T-1"


WEATHER, EMAIL, TICKET = tool_callbacks(get_weather, send_email, create_ticket)

START: list[Any] = [
    SystemMessage(content="Answer briefly."),
    UserMessage(content="Weather in Paris, then email it to Bob."),
]
TURN_1: list[Any] = [
    AssistantMessage(
        tool_calls=(ToolCall(id="toolu_1", name="get_weather", arguments='{"city": "Paris"}'),)
    ),
    ToolResponseMessage(
        responses=(ToolResponse(id="toolu_1", name="get_weather", response_data="sunny in Paris"),)
    ),
]
TURN_2: list[Any] = [
    AssistantMessage(
        content="Emailing Bob.",
        tool_calls=(
            ToolCall(id="toolu_2", name="send_email", arguments='{"to": "bob", "body": "sunny"}'),
        ),
    ),
    ToolResponseMessage(
        responses=(ToolResponse(id="toolu_2", name="send_email", response_data="sent"),)
    ),
]
ADD_EMAIL = ToolChange("add", ("send_email",), after_message=4)
REMOVE_WEATHER = ToolChange("remove", ("get_weather",), after_message=6)
ADD_TICKET = ToolChange("add", ("create_ticket",), after_message=6)


def conversation() -> list[Prompt]:
    """Three requests of one conversation, as a working set sends them: the weather tool
    held from the start; the email tool added after the first results; then the weather
    tool removed and the ticket tool added after the second."""
    return [
        Prompt(START, ChatOptions(tool_callbacks=[WEATHER])),
        Prompt(
            [*START, *TURN_1],
            ChatOptions(tool_callbacks=[WEATHER, EMAIL], tool_changes=[ADD_EMAIL]),
        ),
        Prompt(
            [*START, *TURN_1, *TURN_2],
            ChatOptions(
                tool_callbacks=[EMAIL, TICKET],
                deferred_tools=[WEATHER.definition],  # removed: declared, no longer callable
                tool_changes=[ADD_EMAIL, REMOVE_WEATHER, ADD_TICKET],
            ),
        ),
    ]


def _send_all(server: Strict, prompts: list[Prompt], **settings: Any) -> Any:
    model = server.model(sync_only=True, **settings)
    for prompt in prompts:
        model.call(prompt)
    return model


# -- Anthropic: the shapes, byte for byte ---------------------------------------------------


def test_a_conversation_with_additions_and_removals_is_pinned_byte_for_byte() -> None:
    server = Strict(*["message_final.json"] * 3)
    _send_all(server, conversation())
    assert server.refused == []
    lines = [raw.decode() for raw in server.raw]
    if os.environ.get("TOOLSEARCH_REGENERATE_GOLDEN"):
        GOLDEN.write_text("".join(line + "\n" for line in lines))
    assert lines == GOLDEN.read_text().splitlines()
    # the beta header goes with the requests that carry changes, only with them
    assert [BETA in betas(h) for h in server.headers] == [False, True, True]


def test_each_change_is_a_system_message_of_blocks_over_deferred_tools() -> None:
    server = Strict(*["message_final.json"] * 3)
    _send_all(server, conversation())
    _first, second, third = server.requests
    assert second["messages"][-1] == {
        "role": "system",
        "content": [
            {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "send_email"}}
        ],
    }
    assert [m["role"] for m in third["messages"]] == [
        "user",
        "assistant",
        "user",
        "system",  # + send_email, before the assistant turn that calls it
        "assistant",
        "user",
        "system",  # - get_weather
        "system",  # + create_ticket
    ]
    assert third["messages"][-2]["content"] == [
        {"type": "tool_removal", "tool": {"type": "tool_reference", "name": "get_weather"}}
    ]
    # tools a change adds are deferred; the tool held from the start stays in full
    flags = {t["name"]: t.get("defer_loading", False) for t in third["tools"]}
    assert flags == {"send_email": True, "create_ticket": True, "get_weather": False}


def test_every_request_starts_with_the_previous_one_so_the_cache_holds() -> None:
    server = Strict(*["message_final.json"] * 3)
    _send_all(server, conversation())
    for before, after in zip(server.requests, server.requests[1:], strict=False):
        assert after["system"] == before["system"]
        full = [json.dumps(t) for t in after["tools"] if not t.get("defer_loading")]
        assert full == [json.dumps(t) for t in before["tools"] if not t.get("defer_loading")]
        start = after["messages"][: len(before["messages"])]
        assert json.dumps(start) == json.dumps(before["messages"])


def test_a_change_after_an_assistant_turn_waits_for_its_tool_results() -> None:
    """A change counted right after the assistant's ``tool_use`` cannot sit between the call
    and its results: it goes before the next assistant turn (or at the end)."""
    prompt = Prompt(
        [*START, *TURN_1, *TURN_2],
        ChatOptions(
            tool_callbacks=[WEATHER, EMAIL],
            tool_changes=[ToolChange("remove", ("get_weather",), after_message=3)],
        ),
    )
    server = Strict("message_final.json")
    _send_all(server, [prompt])
    assert server.refused == []
    roles = [m["role"] for m in server.requests[0]["messages"]]
    assert roles == ["user", "assistant", "user", "system", "assistant", "user"]


def test_a_removal_with_a_cache_breakpoint_keeps_it_on_the_last_block() -> None:
    prompt = conversation()[2]
    body = anthropic_request_body(prompt, model="claude-sonnet-4-6", cache_prompt=True)
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert all("cache_control" not in t for t in body["tools"] if t.get("defer_loading"))
    assert problems(body, {"anthropic-beta": BETA}) == []


def test_a_change_naming_a_tool_the_request_does_not_declare_is_refused_before_sending() -> None:
    prompt = Prompt(
        START,
        ChatOptions(tool_callbacks=[WEATHER], tool_changes=[ToolChange("add", ("nowhere",), 1)]),
    )
    with pytest.raises(ValueError, match="nowhere"):
        anthropic_request_body(prompt, model="claude-sonnet-4-6")


def test_changes_are_ignored_when_the_beta_is_off() -> None:
    prompt = conversation()[1]
    off = anthropic_request_body(prompt, model="m", tool_changes=False)
    plain = anthropic_request_body(
        prompt.with_options(prompt.options.replace(tool_changes=())), model="m"
    )
    assert json.dumps(off) == json.dumps(plain)
    assert all(m["role"] != "system" for m in off["messages"])


# -- the strict fake refuses what the API refuses -------------------------------------------


def _body_with(*messages: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": "m",
        "max_tokens": 10,
        "tools": [
            {"name": "find_tools", "input_schema": {"type": "object"}},
            {"name": "get_weather", "input_schema": {"type": "object"}, "defer_loading": True},
        ],
        "messages": list(messages),
    }


USER = {"role": "user", "content": "hi"}
ASSISTANT = {"role": "assistant", "content": "hello"}


def _change(kind: str = "tool_removal", **tool: Any) -> dict[str, Any]:
    return {
        "role": "system",
        "content": [
            {"type": kind, "tool": tool or {"type": "tool_reference", "name": "get_weather"}}
        ],
    }


@pytest.mark.parametrize(
    ("messages", "headers", "expected"),
    [
        ([USER, _change()], {"anthropic-beta": BETA}, None),
        ([USER, _change(), ASSISTANT], {"anthropic-beta": BETA}, None),
        ([USER, _change(), _change("tool_addition")], {"anthropic-beta": BETA}, None),
        ([USER, _change()], {}, "need the"),
        ([_change(), USER], {"anthropic-beta": BETA}, "cannot be the first"),
        ([USER, ASSISTANT, _change()], {"anthropic-beta": BETA}, "must follow a user turn"),
        ([USER, _change(), USER], {"anthropic-beta": BETA}, "must precede an assistant"),
        (
            [USER, _change(type="tool_reference", name="nowhere")],
            {"anthropic-beta": BETA},
            "not declared",
        ),
        (
            [USER, _change(type="tool_reference", tool_name="get_weather")],
            {"anthropic-beta": BETA},
            "references one tool",
        ),
        (
            [USER, _change(type="tool_definition", name="get_weather")],
            {"anthropic-beta": BETA},
            "expected 'tool_reference'",
        ),
        ([USER, _change("tool_swap")], {"anthropic-beta": BETA}, "not a system message block"),
        ([USER, {"role": "system", "content": []}], {"anthropic-beta": BETA}, "at least one"),
    ],
)
def test_the_strict_fake_checks_the_documented_shapes(
    messages: list[dict[str, Any]], headers: dict[str, str], expected: str | None
) -> None:
    found = problems(_body_with(*messages), headers)
    if expected is None:
        assert found == []
    else:
        assert any(expected in p for p in found), found


def test_the_strict_fake_can_refuse_the_beta_like_a_model_without_it() -> None:
    found = problems(_body_with(USER, _change()), {"anthropic-beta": BETA}, accepts_changes=False)
    assert any("not supported for this model" in p for p in found)
    assert problems(_body_with(USER), {}, accepts_changes=False) == []


# -- a model or endpoint without the beta: once more without it, then never again -----------


@pytest.mark.parametrize("mode", ["call", "acall", "stream", "astream"])
def test_a_model_without_the_beta_gets_the_request_once_more_without_it_then_never(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    final = "stream_final.sse" if "stream" in mode else "message_final.json"
    server = Strict(final, final, final, accepts_changes=False)
    model = server.model()
    first, second = conversation()[1], conversation()[2]

    def send(prompt: Prompt) -> str:
        if mode == "call":
            return str(model.call(prompt).message.content)
        if mode == "stream":
            return "".join(c.message.content or "" for c in model.stream(prompt))

        async def run() -> str:
            if mode == "acall":
                return str((await model.acall(prompt)).message.content)
            return "".join([c.message.content or "" async for c in model.astream(prompt)])

        return asyncio.run(run())

    with caplog.at_level("WARNING", logger="toolsearch.models.anthropic"):
        assert send(first) == "It is sunny in Paris."
        assert send(second) == "It is sunny in Paris."
    assert len(server.requests) == 3  # refused, resent; then one request per turn
    assert len(server.refused) == 1
    assert "not supported" in server.refused[0][0]
    plain = anthropic_request_body(
        first.with_options(first.options.replace(tool_changes=())),
        model="claude-sonnet-4-6",
        stream="stream" in mode,
    )
    assert server.requests[1] == plain  # the tools as without the beta
    for body, headers in zip(server.requests[1:], server.headers[1:], strict=True):
        assert all(m["role"] != "system" for m in body["messages"])
        assert BETA not in betas(headers)
    assert model.tool_changes_beta is False
    warnings = [r.message for r in caplog.records if "mid-conversation" in r.message]
    assert len(warnings) == 1


def test_another_400_on_a_request_with_changes_is_not_retried() -> None:
    server = Strict((400, "error_400_other.json"))
    model = server.model(sync_only=True)
    with pytest.raises(ProviderError, match="roles must alternate"):
        model.call(conversation()[1])
    assert len(server.requests) == 1
    assert model.tool_changes_beta is True


# -- issue 47 item 4: native search on an endpoint without tool search ----------------------


def test_a_refused_native_search_is_remembered_and_its_server_tool_left_out() -> None:
    """Before the fix, each call sent the refused request again, and the resend kept the
    ``tool_search_tool_bm25`` server tool the endpoint had refused."""
    server = Strict(*["message_final.json"] * 3, accepts_tool_search=False)
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), search="native")
    model = server.model(sync_only=True)
    client = ChatClient.builder(model).default_advisors(advisor).build()
    for _ in range(2):
        text = client.prompt("Weather in Paris?").tools(get_weather, send_email).call().content()
        assert text == "It is sunny in Paris."
    refused, resent, later = server.requests
    assert len(server.refused) == 1
    assert refused["tools"][-1]["type"] == "tool_search_tool_bm25_20251119"
    for body in (resent, later):
        assert "tool_search_tool" not in json.dumps(body)
        assert "defer_loading" not in json.dumps(body)
    assert model.native_tool_search is None
    assert model.tool_search == "none"


# -- the other adapters ignore tool changes: their request bytes do not move -----------------


def _with_and_without_changes(server: Any, prompt: Prompt) -> tuple[str, str]:
    model = server.model()
    model.call(prompt.with_options(prompt.options.replace(tool_changes=())))
    model.call(prompt)
    without, with_changes = (raw.decode() for raw in server.raw)
    return without, with_changes


@pytest.mark.parametrize(
    ("endpoint", "final"),
    [
        ("OpenAIEndpoint", "completion_final.json"),
        ("OpenAIResponsesEndpoint", "response_final.json"),
        ("GeminiEndpoint", "generate_final.json"),
    ],
)
def test_the_other_adapters_send_the_same_bytes_with_or_without_tool_changes(
    endpoint: str, final: str
) -> None:
    import providers.fakes as fakes

    server = getattr(fakes, endpoint)(final, final)
    for prompt in conversation()[1:]:
        server.raw.clear()
        server.replies = [final, final]
        without, with_changes = _with_and_without_changes(server, prompt)
        assert with_changes == without
        assert "tool_addition" not in with_changes
        assert "tool_removal" not in with_changes


def test_a_model_without_tool_search_drops_the_changes_and_their_deferred_tools() -> None:
    server = Strict(*["message_final.json"] * 3, accepts_tool_search=False)
    model = server.model(sync_only=True)
    model.call(conversation()[1])
    model.call(conversation()[2])
    assert len(server.requests) == 3  # refused (defer_loading), resent; then one per turn
    assert "defer_loading" in server.refused[0][0]
    for body in server.requests[1:]:
        assert "defer_loading" not in json.dumps(body)
        assert all(m["role"] != "system" for m in body["messages"])
    assert model.tool_changes_beta is False


@pytest.mark.parametrize(
    ("message", "refusal"),
    [
        ("messages.3.role: Input should be 'user' or 'assistant'", True),
        ("Unexpected value(s) `mid-conversation-tool-changes-2026-07-01` for anthropic-beta", True),
        ("messages.3.content.0: unknown block type tool_removal", True),
        ("messages: roles must alternate between user and assistant", False),
        ("max_tokens: must be at most 64000", False),
    ],
)
def test_which_400s_read_as_a_refused_beta(message: str, refusal: bool) -> None:
    from toolsearch.models.anthropic.changes import refuses_tool_changes

    class Refused(Exception):
        status_code = 400

    assert refuses_tool_changes(Refused(message)) is refusal
    assert refuses_tool_changes(type("E", (Exception,), {"status_code": 500})(message)) is False


def test_a_working_set_can_add_its_tools_from_the_first_request() -> None:
    """Every changing tool added through a change, the search tool alone in full: the
    tools sent in full never change, whatever the working set holds."""
    search = tool_callbacks(_search_tool)[0]
    first = Prompt(
        START,
        ChatOptions(
            tool_callbacks=[search, WEATHER],
            tool_changes=[ToolChange("add", ("get_weather",), after_message=2)],
        ),
    )
    server = Strict("message_final.json", "message_final.json")
    _send_all(server, [first, conversation_after(first)])
    assert server.refused == []
    one, two = server.requests
    assert [m["role"] for m in one["messages"]] == ["user", "system"]
    assert [t["name"] for t in one["tools"] if not t.get("defer_loading")] == ["find_tools"]
    assert json.dumps(two["messages"][:2]) == json.dumps(one["messages"])
    assert [t["name"] for t in two["tools"] if not t.get("defer_loading")] == ["find_tools"]


def test_the_strict_fake_refuses_a_request_whose_tools_are_all_deferred() -> None:
    body = _body_with(USER)
    assert problems(body, {}) == []
    body["tools"] = body["tools"][1:]
    assert any("at least one tool" in p for p in problems(body, {}))


@tool(name="find_tools")
def _search_tool(query: str) -> str:
    """Find tools for a task."""
    return "[]"


def conversation_after(first: Prompt) -> Prompt:
    """``first`` answered by a weather call, then the email tool added."""
    return Prompt(
        [*first.messages, *TURN_1],
        first.options.replace(
            tool_callbacks=[*first.options.tool_callbacks, EMAIL],
            tool_changes=[
                *first.options.tool_changes,
                ToolChange("add", ("send_email",), after_message=4),
            ],
        ),
    )


def test_the_beta_joins_the_betas_the_caller_already_sends() -> None:
    prompt = conversation()[1]
    prompt = prompt.with_options(
        prompt.options.replace(extra={"extra_headers": {"anthropic-beta": "other-beta-1"}})
    )
    server = Strict("message_final.json")
    _send_all(server, [prompt])
    assert betas(server.headers[0]) == ["other-beta-1", BETA]
    plain = Strict("message_final.json")
    _send_all(plain, [conversation()[0]])
    assert BETA not in betas(plain.headers[0])
