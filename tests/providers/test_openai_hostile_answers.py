"""Issue 47, item 3: a malformed HTTP 200 answer, served by a real local HTTP server, never
escapes either OpenAI adapter's ``.call()`` / ``.acall()`` untyped.

The ``openai`` SDK does not validate answers, so a compatible server that sends a list or
``null`` body, a non-string call id or a string where an object belongs used to raise
``AttributeError`` / ``TypeError`` / pydantic's ``ValidationError`` from the mapping. Each
scenario below must give a :class:`ProviderError` whose message names the offending field
(or a normal answer, for the harmless ones), and the Hypothesis fuzz sends random JSON in
the answers' shapes: 0 untyped exceptions.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

openai = pytest.importorskip(
    "openai", reason="the openai SDK (toolsearch[openai]) is not installed"
)

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from providers.hostile_server import HostileServer  # noqa: E402

from toolsearch import ChatResponse, Prompt, ToolsearchError, UserMessage  # noqa: E402
from toolsearch.errors import ProviderError  # noqa: E402
from toolsearch.models import OpenAIChatModel  # noqa: E402
from toolsearch.models.openai_responses import OpenAIResponsesChatModel  # noqa: E402

PROMPT = Prompt([UserMessage(content="hi")])

_CHOICE = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}
_COMPLETION = {"id": "c1", "object": "chat.completion", "created": 1, "model": "m"}
_CALL = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
_RESPONSE = {"id": "r1", "object": "response", "created_at": 1, "model": "m", "status": "completed"}
_FN = {"type": "function_call", "id": "fc1", "call_id": "call_1", "name": "f", "arguments": "{}"}


def _completion(**fields: Any) -> dict[str, Any]:
    return {**_COMPLETION, "choices": [_CHOICE], **fields}


def _choice(**fields: Any) -> dict[str, Any]:
    return _completion(choices=[{**_CHOICE, **fields}])


def _message(**fields: Any) -> dict[str, Any]:
    return _choice(message={"role": "assistant", **fields})


def _call(**fields: Any) -> dict[str, Any]:
    return _message(content=None, tool_calls=[{**_CALL, **fields}])


def _function(**fields: Any) -> dict[str, Any]:
    return _call(function={"name": "f", "arguments": "{}", **fields})


def _response(**fields: Any) -> dict[str, Any]:
    return {**_RESPONSE, "output": [], **fields}


def _item(item: Any) -> dict[str, Any]:
    return _response(output=[item])


# (body, the field the error must name; None: a normal answer is fine)
CHAT_SCENARIOS: list[tuple[Any, str | None]] = [
    (None, "body"),
    ([], "body"),
    ([_completion()], "body"),
    ("a string", "body"),
    (42, "body"),
    (True, "body"),
    (b"not json at all", "not JSON"),
    (b"\xff\xfe\x00", "not JSON"),
    (b'{"choices": [', "not JSON"),
    (_completion(choices={}), "choices"),
    (_completion(choices="x"), "choices"),
    (_completion(choices=[None]), "choices[0]"),
    (_completion(choices=[1]), "choices[0]"),
    (_completion(choices=[[]]), "choices[0]"),
    (_choice(message="hello"), "choices[0].message"),
    (_choice(message=[]), "choices[0].message"),
    (_choice(finish_reason=5), "choices[0].finish_reason"),
    (_choice(finish_reason=["stop"]), "choices[0].finish_reason"),
    (_message(content=5), "choices[0].message.content"),
    (_message(content={"text": "x"}), "choices[0].message.content"),
    (_message(content=["a"]), "choices[0].message.content"),
    (_message(tool_calls={}), "choices[0].message.tool_calls"),
    (_message(tool_calls="f"), "choices[0].message.tool_calls"),
    (_message(tool_calls=[1]), "choices[0].message.tool_calls[0]"),
    (_message(tool_calls=[None]), "choices[0].message.tool_calls[0]"),
    (_call(id=5), "choices[0].message.tool_calls[0].id"),
    (_call(id=["a"]), "choices[0].message.tool_calls[0].id"),
    (_call(id={"a": 1}), "choices[0].message.tool_calls[0].id"),
    (_call(id=True), "choices[0].message.tool_calls[0].id"),
    (_call(function="f"), "choices[0].message.tool_calls[0].function"),
    (_call(function=[1]), "choices[0].message.tool_calls[0].function"),
    (_function(name=5), "choices[0].message.tool_calls[0].function.name"),
    (_function(name=None), "choices[0].message.tool_calls[0].function.name"),
    (_function(name=""), "choices[0].message.tool_calls[0].function.name"),
    (_function(arguments={"a": 1}), "choices[0].message.tool_calls[0].function.arguments"),
    (_function(arguments=[1]), "choices[0].message.tool_calls[0].function.arguments"),
    (_completion(usage=5), "usage"),
    (_completion(usage=[]), "usage"),
    (_completion(usage={"prompt_tokens": "a"}), "usage.prompt_tokens"),
    (_completion(usage={"prompt_tokens": -1}), "usage.prompt_tokens"),
    (_completion(usage={"completion_tokens": 1.5}), "usage.completion_tokens"),
    (_completion(usage={"prompt_tokens_details": 3}), "usage.prompt_tokens_details"),
    (
        _completion(usage={"prompt_tokens_details": {"cached_tokens": [9]}}),
        "usage.prompt_tokens_details.cached_tokens",
    ),
    (_completion(model=5), "model"),
    (_completion(id=[]), "id"),
    ({}, None),
    (_completion(choices=None), None),
    (_completion(choices=[]), None),
    (_choice(message=None), None),
    (_message(content=None, tool_calls=None), None),
    (_call(id=None), None),
    (_function(arguments=None), None),
]

RESPONSES_SCENARIOS: list[tuple[Any, str | None]] = [
    (None, "body"),
    ([], "body"),
    ([_response()], "body"),
    ("a string", "body"),
    (7, "body"),
    (False, "body"),
    (b"<html>502</html>", "not JSON"),
    (b"\x00\x01", "not JSON"),
    (b'{"output": [', "not JSON"),
    (_response(output=5), "output"),
    (_response(output={}), "output"),
    (_response(output="x"), "output"),
    (_item(1), "output[0]"),
    (_item(None), "output[0]"),
    (_item("message"), "output[0]"),
    (_item([]), "output[0]"),
    (_item({"type": 5}), "output[0].type"),
    (_item({**_FN, "call_id": 5}), "output[0].call_id"),
    (_item({**_FN, "call_id": ["a"]}), "output[0].call_id"),
    (_item({**_FN, "call_id": {"x": 1}}), "output[0].call_id"),
    (_item({**_FN, "call_id": True}), "output[0].call_id"),
    (_item({**_FN, "name": None}), "output[0].name"),
    (_item({**_FN, "name": 5}), "output[0].name"),
    (_item({**_FN, "name": ""}), "output[0].name"),
    (_item({**_FN, "arguments": {"a": 1}}), "output[0].arguments"),
    (_item({**_FN, "arguments": 3}), "output[0].arguments"),
    (_item({"type": "message", "content": 5}), "output[0].content"),
    (_item({"type": "message", "content": "hi"}), "output[0].content"),
    (_item({"type": "message", "content": [1]}), "output[0].content[0]"),
    (
        _item({"type": "message", "content": [{"type": "output_text", "text": 5}]}),
        "output[0].content[0].text",
    ),
    (
        _item({"type": "message", "content": [{"type": 5, "text": "x"}]}),
        "output[0].content[0].type",
    ),
    (
        _item({"type": "tool_search_call", "execution": "client", "call_id": 5}),
        "output[0].call_id",
    ),
    (
        _item({"type": "tool_search_call", "execution": "client", "id": [1]}),
        "output[0].id",
    ),
    (_response(usage=5), "usage"),
    (_response(usage=[]), "usage"),
    (_response(usage={"input_tokens": "x"}), "usage.input_tokens"),
    (_response(usage={"output_tokens": -3}), "usage.output_tokens"),
    (_response(usage={"input_tokens_details": "x"}), "usage.input_tokens_details"),
    (
        _response(usage={"input_tokens_details": {"cached_tokens": []}}),
        "usage.input_tokens_details.cached_tokens",
    ),
    (_response(status=5), "status"),
    (_response(status="incomplete", incomplete_details=5), "incomplete_details"),
    (
        _response(status="incomplete", incomplete_details={"reason": 5}),
        "incomplete_details.reason",
    ),
    (_response(model={"m": 1}), "model"),
    (_response(id=5), "id"),
    ({}, None),
    (_response(output=None), None),
    (_item({"type": "unknown_kind", "x": [1, 2]}), None),
    (_item({**_FN, "call_id": None}), None),
    (_item({"type": "tool_search_output", "tools": 5}), None),
    (_item({"type": "tool_search_call", "execution": "client", "arguments": 5}), None),
    (_response(status="incomplete", incomplete_details=None), None),
]


def test_there_are_48_scenarios_or_more_per_adapter() -> None:
    assert len(CHAT_SCENARIOS) >= 48
    assert len(RESPONSES_SCENARIOS) >= 48


@pytest.fixture(scope="module")
def server() -> Any:
    with HostileServer() as running:
        yield running


def _chat(server: HostileServer) -> OpenAIChatModel:
    return OpenAIChatModel(
        "m",
        client=openai.OpenAI(base_url=server.url, api_key="k", max_retries=0),
        async_client=openai.AsyncOpenAI(base_url=server.url, api_key="k", max_retries=0),
    )


def _responses(server: HostileServer) -> OpenAIResponsesChatModel:
    return OpenAIResponsesChatModel(
        "m",
        client=openai.OpenAI(base_url=server.url, api_key="k", max_retries=0),
        async_client=openai.AsyncOpenAI(base_url=server.url, api_key="k", max_retries=0),
    )


def _answer(model: Any, server: HostileServer, body: Any, *, use_async: bool = False) -> Any:
    """What ``.call()`` (or ``.acall()``) gives for ``body``: a response or our error;
    anything else fails the test (pytest reports it as raised)."""
    server.reply(body)
    try:
        if use_async:
            return asyncio.run(model.acall(PROMPT))
        return model.call(PROMPT)
    except ToolsearchError as exc:
        return exc


def _check(result: Any, field: str | None) -> None:
    if field is None:
        assert isinstance(result, ChatResponse), result
        return
    assert isinstance(result, ProviderError), result
    assert "malformed answer" in str(result)
    assert field in str(result), str(result)


@pytest.mark.parametrize("use_async", [False, True], ids=["call", "acall"])
@pytest.mark.parametrize(("body", "field"), CHAT_SCENARIOS)
def test_chat_completions_malformed_answer_is_typed(
    server: HostileServer, body: Any, field: str | None, use_async: bool
) -> None:
    _check(_answer(_chat(server), server, body, use_async=use_async), field)


@pytest.mark.parametrize("use_async", [False, True], ids=["call", "acall"])
@pytest.mark.parametrize(("body", "field"), RESPONSES_SCENARIOS)
def test_responses_malformed_answer_is_typed(
    server: HostileServer, body: Any, field: str | None, use_async: bool
) -> None:
    _check(_answer(_responses(server), server, body, use_async=use_async), field)


def test_the_error_names_the_field_and_both_types(server: HostileServer) -> None:
    result = _answer(_chat(server), server, _call(id=5))
    assert isinstance(result, ProviderError)
    assert result.status_code == 200
    assert "choices[0].message.tool_calls[0].id is an integer, expected a string" in str(result)


def test_a_well_formed_answer_still_reads(server: HostileServer) -> None:
    result = _answer(_chat(server), server, _call())
    assert isinstance(result, ChatResponse)
    assert [(c.id, c.name, c.arguments) for c in result.message.tool_calls] == [
        ("call_1", "f", "{}")
    ]
    result = _answer(_responses(server), server, _item(_FN))
    assert isinstance(result, ChatResponse)
    assert [(c.id, c.name) for c in result.message.tool_calls] == [("call_1", "f")]


# -- the fuzz: random JSON in the answers' shapes ------------------------------------------

_scalar = (
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(allow_nan=False)
    | st.text(max_size=5)
)
_json = st.recursive(
    _scalar,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


def _maybe(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return value | _json


_chat_call = st.fixed_dictionaries(
    {},
    optional={
        "id": _maybe(st.text(max_size=4)),
        "type": _maybe(st.just("function")),
        "function": _maybe(
            st.fixed_dictionaries(
                {},
                optional={
                    "name": _maybe(st.sampled_from(["f", "", "g"])),
                    "arguments": _maybe(st.just("{}")),
                },
            )
        ),
    },
)
_chat_body = _json | st.fixed_dictionaries(
    {},
    optional={
        "id": _maybe(st.just("c")),
        "model": _maybe(st.just("m")),
        "usage": _maybe(
            st.fixed_dictionaries(
                {}, optional={"prompt_tokens": _json, "prompt_tokens_details": _json}
            )
        ),
        "choices": _maybe(
            st.lists(
                _maybe(
                    st.fixed_dictionaries(
                        {},
                        optional={
                            "finish_reason": _maybe(st.just("stop")),
                            "message": _maybe(
                                st.fixed_dictionaries(
                                    {},
                                    optional={
                                        "content": _maybe(st.text(max_size=4)),
                                        "tool_calls": _maybe(
                                            st.lists(_maybe(_chat_call), max_size=2)
                                        ),
                                    },
                                )
                            ),
                        },
                    )
                ),
                max_size=2,
            )
        ),
    },
)
_output_item = st.fixed_dictionaries(
    {
        "type": _maybe(
            st.sampled_from(["message", "function_call", "tool_search_call", "tool_search_output"])
        )
    },
    optional={
        "call_id": _maybe(st.text(max_size=4)),
        "id": _json,
        "name": _maybe(st.just("f")),
        "arguments": _json,
        "execution": _maybe(st.just("client")),
        "content": _maybe(
            st.lists(
                _maybe(
                    st.fixed_dictionaries({"type": _maybe(st.just("output_text")), "text": _json})
                ),
                max_size=2,
            )
        ),
        "tools": _json,
    },
)
_responses_body = _json | st.fixed_dictionaries(
    {},
    optional={
        "id": _json,
        "model": _json,
        "status": _maybe(st.sampled_from(["completed", "incomplete"])),
        "incomplete_details": _json,
        "usage": _maybe(
            st.fixed_dictionaries({}, optional={"input_tokens": _json, "output_tokens": _json})
        ),
        "output": _maybe(st.lists(_maybe(_output_item), max_size=3)),
    },
)

_FUZZ = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@_FUZZ
@given(body=_chat_body)
def test_fuzz_chat_completions_answers_are_typed(server: HostileServer, body: Any) -> None:
    result = _answer(_chat(server), server, body)
    assert isinstance(result, ChatResponse | ToolsearchError)


@_FUZZ
@given(body=_responses_body)
def test_fuzz_responses_answers_are_typed(server: HostileServer, body: Any) -> None:
    result = _answer(_responses(server), server, body)
    assert isinstance(result, ChatResponse | ToolsearchError)


# -- streams: hostile chunks and events --------------------------------------------------


def _sse(*events: Any) -> str:
    lines = [f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n" for e in events]
    return "".join(lines) + "data: [DONE]\n\n"


CHAT_CHUNKS: list[tuple[Any, str]] = [
    ({"choices": "x"}, "chunk.choices"),
    ({"choices": [{"delta": {"tool_calls": [{"index": "a"}]}}]}, "tool_calls[0].index"),
    ({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": 5}]}}]}, "tool_calls[0].id"),
    ({"choices": [{"delta": {"content": 5}}]}, "chunk.choices[0].delta.content"),
    ({"choices": [{"delta": "x"}]}, "chunk.choices[0].delta"),
    ({"choices": [{"finish_reason": 3, "delta": {}}]}, "chunk.choices[0].finish_reason"),
    ({"usage": 5, "choices": []}, "chunk.usage"),
    ([1], "a stream chunk"),
    (None, "a stream chunk"),
    ("{not json", "not JSON"),
]
RESPONSES_EVENTS: list[tuple[Any, str]] = [
    ({"type": "response.output_item.done", "item": 5}, "event.item"),
    (
        {"type": "response.output_item.done", "item": {**_FN, "call_id": 5}},
        "event.item.call_id",
    ),
    ({"type": "response.completed", "response": 5}, "event.response"),
    ({"type": "response.completed", "response": {**_RESPONSE, "usage": "x"}}, "response.usage"),
    ({"type": 5}, "event.type"),
    ([], "a stream event"),
    ({"type": "response.output_text.delta", "delta": 5}, "event.delta"),
    ("{not json", "not JSON"),
]


@pytest.mark.parametrize(("chunk", "field"), CHAT_CHUNKS)
def test_chat_completions_hostile_stream_chunk_is_typed(
    server: HostileServer, chunk: Any, field: str
) -> None:
    server.reply(_sse(chunk), content_type="text/event-stream")
    with pytest.raises(ProviderError, match="malformed answer") as caught:
        list(_chat(server).stream(PROMPT))
    assert field in str(caught.value)


@pytest.mark.parametrize(("event", "field"), RESPONSES_EVENTS)
def test_responses_hostile_stream_event_is_typed(
    server: HostileServer, event: Any, field: str
) -> None:
    server.reply(_sse(event), content_type="text/event-stream")
    with pytest.raises(ProviderError, match="malformed answer") as caught:
        list(_responses(server).stream(PROMPT))
    assert field in str(caught.value)
