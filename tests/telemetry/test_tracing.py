"""The span tree of the plain and the tool-search loops, through the global tracer
provider: names, parents, GenAI attributes, errors, async and streaming, and no content
unless opted in."""

from __future__ import annotations

import asyncio
import json

import pytest
from opentelemetry.trace import SpanKind, StatusCode
from telemetry_scripts import (
    ANSWER,
    CITY,
    QUERY,
    RESULT,
    SECRETS,
    USER,
    broken_forecast,
    get_forecast,
    script,
    send_email,
)

from toolsearch import (
    CONVERSATION_ID,
    ChatClient,
    ChatModelError,
    DefaultToolExecutionExceptionProcessor,
    ToolCallingAdvisor,
    ToolCallingManager,
    ToolExecutionError,
    ToolSearchToolCallingAdvisor,
    telemetry,
)
from toolsearch.indexes import Bm25ToolIndex, RegexToolIndex
from toolsearch.models import FunctionChatModel
from toolsearch.search.builtin_tools.search_tool import ToolSearchEvent


def plain_client(model=None, **advisor):
    model = model or FunctionChatModel(script)
    return ChatClient.builder(model).default_advisors(ToolCallingAdvisor(**advisor)).build()


def search_client(index=None, **options):
    advisor = ToolSearchToolCallingAdvisor(tool_index=index or Bm25ToolIndex(), **options)
    return ChatClient.builder(FunctionChatModel(script)).default_advisors(advisor).build()


def every_text(otel) -> str:
    """Every attribute value and event of every span, as one string."""
    parts = []
    for span in otel.spans():
        parts.append(span.name)
        parts.extend(f"{k}={v}" for k, v in (span.attributes or {}).items())
        parts.append(str(span.status.description))
        for event in span.events:
            parts.append(event.name)
            parts.extend(f"{k}={v}" for k, v in (event.attributes or {}).items())
    return "\n".join(parts)


AGENT = "invoke_agent chat_client"

PLAIN_TREE = [
    AGENT,
    "  chat",
    "  execute_tool get_forecast",
    "  chat",
]

SEARCH_TREE = [
    AGENT,
    "  chat",
    "  execute_tool toolSearchTool",
    "    retrieval Bm25ToolIndex",
    "  chat",
    "  execute_tool get_forecast",
    "  chat",
]


# -- the plain loop ---------------------------------------------------------------------


def test_plain_loop_span_tree_and_attributes(otel):
    answer = plain_client().prompt(USER).tools(get_forecast).call().content()
    assert answer == ANSWER
    assert otel.tree() == PLAIN_TREE
    root = otel.one("invoke_agent")
    assert root.parent is None
    assert root.kind is SpanKind.INTERNAL
    assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert root.attributes["gen_ai.agent.name"] == "chat_client"
    assert root.attributes["gen_ai.provider.name"] == "FunctionChatModel"
    assert root.attributes["toolsearch.model_calls"] == 2
    assert root.attributes["toolsearch.tool_calls"] == 1
    assert root.attributes["gen_ai.request.stream"] is False
    assert "toolsearch.stream" not in root.attributes  # gen_ai.request.stream replaced it
    assert "gen_ai.conversation.id" not in root.attributes  # no conversation named
    chats = otel.named("chat ") + [s for s in otel.spans() if s.name == "chat"]
    assert len(chats) == 2
    for chat in chats:
        assert otel.parent_of(chat) is root
        assert chat.kind is SpanKind.CLIENT
        assert chat.attributes["gen_ai.operation.name"] == "chat"
        assert chat.attributes["gen_ai.provider.name"] == "FunctionChatModel"
        assert chat.attributes["gen_ai.usage.input_tokens"] > 0
        assert chat.attributes["gen_ai.usage.output_tokens"] > 0
        assert chat.attributes["toolsearch.tools.visible"] == 1
        assert chat.attributes["gen_ai.request.stream"] is False
        assert "server.address" not in chat.attributes  # a scripted model has no endpoint
    assert chats[0].attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert chats[1].attributes["gen_ai.response.finish_reasons"] == ("stop",)
    # the client span sums the loop
    assert root.attributes["gen_ai.usage.input_tokens"] == sum(
        c.attributes["gen_ai.usage.input_tokens"] for c in chats
    )
    tool_span = otel.one("execute_tool")
    assert otel.parent_of(tool_span) is root
    assert tool_span.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool_span.attributes["gen_ai.tool.name"] == "get_forecast"
    assert tool_span.attributes["gen_ai.tool.call.id"] == "call-1"
    assert tool_span.attributes["gen_ai.tool.description"] == "Get the weather forecast for a city"
    assert tool_span.attributes["gen_ai.tool.type"] == "function"
    assert tool_span.status.status_code is StatusCode.UNSET
    assert all(s.context.trace_id == root.context.trace_id for s in otel.spans())


def test_request_model_names_the_chat_span(otel):
    from toolsearch import ChatOptions

    model = FunctionChatModel(script, default_options=ChatOptions(model="scripted-1"))
    plain_client(model).prompt(USER).tools(get_forecast).call()
    names = [s.name for s in otel.spans()]
    assert names.count("chat scripted-1") == 2
    chat = otel.named("chat scripted-1")[0]
    assert chat.attributes["gen_ai.request.model"] == "scripted-1"
    assert otel.one(AGENT).attributes["gen_ai.request.model"] == "scripted-1"


def test_model_called_directly_gets_one_span(otel):
    from toolsearch.chat.messages import UserMessage
    from toolsearch.chat.prompt import Prompt

    model = FunctionChatModel(lambda messages, tools: "hi")
    model.call(Prompt([UserMessage(content="x")]))  # call() runs stream(): still one span
    assert otel.tree() == ["chat"]
    assert "".join(c.text for c in model.stream(Prompt([UserMessage(content="x")]))) == "hi"
    assert otel.tree() == ["chat", "chat"]


# -- the tool-search loop -----------------------------------------------------------------


def test_search_loop_span_tree_and_attributes(otel):
    client = search_client()
    answer = (
        client.prompt(USER)
        .tools(get_forecast, send_email)
        .advisors(lambda a: a.param("chat_memory_conversation_id", "conversation-42"))
        .call()
        .content()
    )
    assert answer == ANSWER
    assert otel.tree() == SEARCH_TREE
    root = otel.one("invoke_agent")
    assert root.attributes["toolsearch.searches"] == 1
    assert root.attributes["toolsearch.tool_calls"] == 2
    assert root.attributes["toolsearch.tools.registered"] == 2
    search = otel.one("retrieval")
    parent = otel.parent_of(search)
    assert parent is not None
    assert parent.name == "execute_tool toolSearchTool"
    assert otel.parent_of(parent) is root
    attributes = search.attributes
    assert attributes["gen_ai.operation.name"] == "retrieval"
    assert attributes["gen_ai.data_source.id"] == "Bm25ToolIndex"
    assert attributes["toolsearch.search.index"] == "Bm25ToolIndex"
    assert attributes["toolsearch.search.type"] == "bm25"
    assert attributes["toolsearch.search.hits"] >= 1
    assert attributes["toolsearch.tools.visible"] == 1  # the model saw only the search tool
    assert attributes["toolsearch.tools.registered"] == 2
    assert attributes["toolsearch.session.id_hash"] == telemetry.hash_session_id("conversation-42")
    # the id itself too: an identifier, not content (recorded without the opt-in)
    assert attributes["gen_ai.conversation.id"] == "conversation-42"
    assert root.attributes["gen_ai.conversation.id"] == "conversation-42"
    chats = [s for s in otel.spans() if s.name == "chat"]
    assert [c.attributes["toolsearch.tools.visible"] for c in chats] == [1, 2, 2]
    tool_search = otel.exact("execute_tool toolSearchTool")
    assert tool_search.attributes["gen_ai.tool.description"].startswith("Search")


@pytest.mark.parametrize("mode", ["call", "stream", "acall", "astream"])
def test_the_conversation_id_groups_the_spans_of_a_turn(otel, mode):
    """The conversation id is an identifier, not content: recorded without the opt-in, on
    the agent span, every model call of the request (the request names it) and the search
    span (which is given the session)."""
    request = (
        search_client()
        .prompt(USER)
        .tools(get_forecast, send_email)
        .advisors(lambda a: a.param(CONVERSATION_ID, "conversation-42"))
    )
    if mode == "call":
        request.call()
    elif mode == "stream":
        list(request.stream().content())
    elif mode == "acall":
        asyncio.run(request.acall())
    else:

        async def consume():
            return [chunk async for chunk in request.astream().content()]

        asyncio.run(consume())
    assert otel.tree() == SEARCH_TREE
    search = otel.one("retrieval")
    root = otel.one(AGENT)
    chats = [s for s in otel.spans() if s.name == "chat"]
    assert search.attributes["gen_ai.conversation.id"] == "conversation-42"
    assert search.attributes["toolsearch.session.id_hash"] == telemetry.hash_session_id(
        "conversation-42"
    )
    assert root.attributes["gen_ai.conversation.id"] == "conversation-42"
    assert [c.attributes.get("gen_ai.conversation.id") for c in chats] == [
        "conversation-42",
        "conversation-42",
        "conversation-42",
    ]
    assert "gen_ai.conversation.id" not in otel.one("execute_tool get_forecast").attributes


def test_a_request_that_never_searches_still_names_its_conversation(otel):
    client = ChatClient.builder(FunctionChatModel(lambda m, t: "hello")).build()
    client.prompt(USER).advisors(lambda a: a.param(CONVERSATION_ID, "c-1")).call()
    assert otel.one(AGENT).attributes["gen_ai.conversation.id"] == "c-1"
    assert otel.one("chat").attributes["gen_ai.conversation.id"] == "c-1"


def test_a_throwaway_session_names_no_conversation(otel):
    search_client().prompt(USER).tools(get_forecast, send_email).call()
    search = otel.one("retrieval")
    assert "toolsearch.session.id_hash" in search.attributes
    assert all("gen_ai.conversation.id" not in s.attributes for s in otel.spans())


def test_search_metrics(otel):
    search_client().prompt(USER).tools(get_forecast, send_email).call()
    recorded = otel.histograms()
    ((attributes, duration),) = recorded["toolsearch.search.duration"]
    assert attributes == {"toolsearch.search.index": "Bm25ToolIndex"}
    assert duration.count == 1
    assert duration.sum > 0
    ((attributes, hits),) = recorded["toolsearch.search.hits"]
    assert hits.count == 1
    assert hits.sum >= 1
    tokens = {a["gen_ai.token.type"]: p for a, p in recorded["gen_ai.client.token.usage"]}
    assert tokens["input"].count == 3
    assert tokens["output"].count == 3
    assert all(
        a["gen_ai.operation.name"] == "chat" for a, _ in recorded["gen_ai.client.token.usage"]
    )
    per_request = {
        a["gen_ai.token.type"]: p for a, p in recorded["toolsearch.chat_client.token.usage"]
    }
    assert per_request["input"].count == 1
    assert per_request["input"].sum == tokens["input"].sum
    assert recorded["gen_ai.client.operation.duration"][0][1].count == 3


def test_search_listener_receives_the_event_inside_the_span(otel):
    from opentelemetry import trace

    events: list[tuple[ToolSearchEvent, int]] = []

    def listener(event):
        events.append((event, trace.get_current_span().get_span_context().span_id))

    advisor = ToolSearchToolCallingAdvisor(tool_index=Bm25ToolIndex(), search_listeners=[listener])
    client = ChatClient.builder(FunctionChatModel(script)).default_advisors(advisor).build()
    client.prompt(USER).tools(get_forecast, send_email).advisors(
        lambda a: a.param("chat_memory_conversation_id", "c-7")
    ).call()
    ((event, span_id),) = events
    assert event.session_id == "c-7"
    assert event.session_hash == telemetry.hash_session_id("c-7")
    assert QUERY in event.query
    assert event.hit_names[0] == "get_forecast"
    assert event.index == "Bm25ToolIndex"
    assert event.visible_tools == 1
    assert span_id == otel.one("retrieval").context.span_id


def test_failing_search_listener_is_logged_not_raised(otel, caplog):
    def listener(event):
        raise RuntimeError("listener bug")

    advisor = ToolSearchToolCallingAdvisor(tool_index=Bm25ToolIndex())
    advisor.add_search_listener(listener)
    client = ChatClient.builder(FunctionChatModel(script)).default_advisors(advisor).build()
    assert client.prompt(USER).tools(get_forecast).call().content() == ANSWER
    assert "tool-search listener" in caplog.text


def test_index_error_marks_the_search_span(otel):
    from toolsearch import AssistantMessage, ToolCall, ToolResponseMessage

    def pattern_script(messages, tools):
        if isinstance(messages[-1], ToolResponseMessage):
            return ANSWER
        too_long = json.dumps({"query": "a" * 300})
        return AssistantMessage(
            tool_calls=[ToolCall(id="c", name="toolSearchTool", arguments=too_long)]
        )

    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(mode="pattern"))
    client = ChatClient.builder(FunctionChatModel(pattern_script)).default_advisors(advisor).build()
    assert client.prompt(USER).tools(get_forecast).call().content() == ANSWER
    search = otel.one("retrieval")
    assert search.status.status_code is StatusCode.ERROR
    assert search.attributes["error.type"] == "pattern_too_long"
    assert search.attributes["toolsearch.search.hits"] == 0
    ((attributes, _),) = otel.histograms()["toolsearch.search.duration"]
    assert attributes["error.type"] == "pattern_too_long"


# -- errors -----------------------------------------------------------------------------


def test_tool_error_marks_its_span_and_the_loop_goes_on(otel):
    answer = plain_client().prompt(USER).tools(broken_forecast).call().content()
    assert answer == ANSWER
    span = otel.one("execute_tool broken_forecast")
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "ValueError"
    (event,) = span.events
    assert event.name == "exception"
    assert event.attributes["exception.type"] == "toolsearch.errors.ToolExecutionError"
    assert CITY not in every_text(otel)  # the message quotes the argument: left out
    assert otel.one("invoke_agent").status.status_code is StatusCode.UNSET


class Rethrow(DefaultToolExecutionExceptionProcessor):
    def process(self, error):
        raise error


def test_rethrown_tool_error_reaches_the_caller_and_marks_every_span(otel):
    manager = ToolCallingManager(exception_processor=Rethrow())
    client = plain_client(tool_calling_manager=manager)
    with pytest.raises(ToolExecutionError) as caught:
        client.prompt(USER).tools(broken_forecast).call()
    assert isinstance(caught.value.cause, ValueError)
    assert CITY in str(caught.value)  # the caller gets the exception unchanged
    tool_span = otel.one("execute_tool")
    root = otel.one("invoke_agent")
    assert tool_span.status.status_code is StatusCode.ERROR
    assert len(tool_span.events) == 1  # recorded once, though it failed then left
    assert root.status.status_code is StatusCode.ERROR
    assert root.attributes["error.type"] == "toolsearch.errors.ToolExecutionError"
    assert CITY not in every_text(otel)


def test_model_error_marks_the_model_span_and_the_client_span(otel):
    def failing(messages, tools):
        raise RuntimeError("provider down")

    with pytest.raises(ChatModelError):
        plain_client(FunctionChatModel(failing)).prompt(USER).call()
    chat = otel.exact("chat")
    root = otel.one("invoke_agent")
    for span in (chat, root):
        assert span.status.status_code is StatusCode.ERROR
        assert span.attributes["error.type"] == "toolsearch.errors.ChatModelError"
        # a model's or provider's message may quote the prompt: content, off by default
        assert span.events[0].attributes["exception.message"] == ""
    assert otel.parent_of(chat) is root
    ((attributes, _),) = otel.histograms()["gen_ai.client.operation.duration"]
    assert attributes["error.type"] == "toolsearch.errors.ChatModelError"

    telemetry.set_capture_content(True)
    otel.exporter.clear()
    with pytest.raises(ChatModelError):
        plain_client(FunctionChatModel(failing)).prompt(USER).call()
    message = otel.exact("chat").events[0].attributes["exception.message"]
    assert message.endswith("provider down")  # with content capture on, the message too


# -- async and streaming ----------------------------------------------------------------


def test_async_call_gets_the_same_tree(otel):
    async def run():
        response = await search_client().prompt(USER).tools(get_forecast, send_email).acall()
        return response.content()

    assert asyncio.run(run()) == ANSWER
    assert otel.tree() == SEARCH_TREE


def test_async_model_and_tools(otel):
    async def amodel(messages, tools):
        return script(messages, tools)

    from toolsearch import tool

    @tool(description="Get the weather forecast for a city")
    async def get_forecast(city: str) -> str:
        await asyncio.sleep(0)
        return RESULT

    async def run():
        client = plain_client(FunctionChatModel(amodel))
        return (await client.prompt(USER).tools(get_forecast).acall()).content()

    assert asyncio.run(run()) == ANSWER
    assert otel.tree() == PLAIN_TREE


def test_stream_gets_the_same_tree(otel):
    chunks = list(search_client().prompt(USER).tools(get_forecast, send_email).stream().content())
    assert "".join(chunks) == ANSWER
    assert otel.tree() == SEARCH_TREE
    root = otel.one(AGENT)
    assert root.attributes["gen_ai.request.stream"] is True
    assert all(c.attributes["gen_ai.request.stream"] is True for c in otel.named("chat"))
    assert root.attributes["toolsearch.model_calls"] == 3
    assert root.attributes["gen_ai.usage.input_tokens"] > 0
    # the client span covers the whole stream
    assert all(
        root.start_time <= s.start_time and s.end_time <= root.end_time for s in otel.spans()
    )


def test_async_stream_gets_the_same_tree(otel):
    async def run():
        stream = plain_client().prompt(USER).tools(get_forecast).astream()
        return [chunk async for chunk in stream.content()]

    assert "".join(asyncio.run(run())) == ANSWER
    assert otel.tree() == PLAIN_TREE


def test_stream_closed_early_ends_its_spans(otel):
    def words(messages, tools):
        return "one two three four five"

    stream = plain_client(FunctionChatModel(words)).prompt(USER).stream().content()
    iterator = iter(stream)
    assert next(iterator) == "one "
    assert otel.spans() == []  # still running
    iterator.close()
    names = [s.name for s in otel.spans()]
    assert sorted(names) == ["chat", AGENT]
    root = otel.one("invoke_agent")
    assert root.attributes["toolsearch.stream.closed_early"] is True
    assert root.status.status_code is StatusCode.UNSET


def test_stream_error_reaches_the_caller_and_marks_the_span(otel):
    def failing(messages, tools):
        raise RuntimeError("stream broke")

    with pytest.raises(ChatModelError):
        list(plain_client(FunctionChatModel(failing)).prompt(USER).stream().content())
    assert otel.exact("chat").status.status_code is StatusCode.ERROR
    assert otel.one("invoke_agent").status.status_code is StatusCode.ERROR


# -- content: off by default, on when opted in --------------------------------------------


def run_everything():
    search_client().prompt(USER).tools(get_forecast, send_email).call()
    plain_client().prompt(USER).tools(get_forecast).call()
    list(search_client().prompt(USER).tools(get_forecast, send_email).stream().content())
    plain_client().prompt(USER).tools(broken_forecast).call()


CONTENT_KEYS = (
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.definitions",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "gen_ai.retrieval.query.text",
    "gen_ai.retrieval.documents",
    "toolsearch.search.query",
    "toolsearch.search.hit_names",
    "toolsearch.search.hit_scores",
    "toolsearch.tools.visible_names",
)


def test_no_content_without_the_opt_in(otel):
    run_everything()
    text = every_text(otel)
    assert "execute_tool get_forecast" in text
    for secret in SECRETS:
        assert secret not in text, secret
    for span in otel.spans():
        for key in span.attributes:
            assert key not in CONTENT_KEYS, key


@pytest.mark.parametrize("how", ["environment", "setting"])
def test_content_with_the_opt_in(otel, monkeypatch, how):
    if how == "environment":
        monkeypatch.setenv(telemetry.CAPTURE_CONTENT_ENV, "true")
    else:
        telemetry.set_capture_content(True)
    run_everything()
    text = every_text(otel)
    for secret in SECRETS:
        assert secret in text, secret
    tool_span = otel.named("execute_tool get_forecast")[0]
    assert json.loads(tool_span.attributes["gen_ai.tool.call.arguments"]) == {"city": CITY}
    assert tool_span.attributes["gen_ai.tool.call.result"].startswith(RESULT)
    search = otel.named("retrieval")[0]
    assert QUERY in search.attributes["gen_ai.retrieval.query.text"]
    assert QUERY in search.attributes["toolsearch.search.query"]  # kept beside it
    documents = json.loads(search.attributes["gen_ai.retrieval.documents"])
    assert documents[0]["id"] == "get_forecast"
    assert isinstance(documents[0]["score"], float)
    assert [d["id"] for d in documents] == list(search.attributes["toolsearch.search.hit_names"])
    chats = [s for s in otel.spans() if s.name == "chat"]
    # the search loop's last model call: after the search and the forecast tool
    chat = next(c for c in chats if RESULT in c.attributes["gen_ai.input.messages"])
    messages = json.loads(chat.attributes["gen_ai.input.messages"])
    # the advisor's system text stays in the history (a scripted model takes no system
    # text apart: no gen_ai.system_instructions)
    assert messages[0]["role"] == "system"
    assert "gen_ai.system_instructions" not in chat.attributes
    assert messages[1] == {"role": "user", "parts": [{"type": "text", "content": USER}]}
    assert messages[-1] == {
        "role": "tool",
        "parts": [
            {"type": "tool_call_response", "id": "call-2", "response": f"{RESULT} for {CITY}"}
        ],
    }
    assert messages[-2] == {
        "role": "assistant",
        "parts": [
            {
                "type": "tool_call",
                "id": "call-2",
                "name": "get_forecast",
                "arguments": {"city": CITY},
            }
        ],
    }
    output = json.loads(chat.attributes["gen_ai.output.messages"])
    assert output == [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": ANSWER}],
            "finish_reason": "stop",
        }
    ]
    calling = chats[0]
    (called,) = json.loads(calling.attributes["gen_ai.output.messages"])
    assert called["finish_reason"] == "tool_call"  # the conventions' spelling of tool_calls
    assert called["parts"][0]["type"] == "tool_call"
    assert calling.attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)


def test_the_setting_wins_over_the_environment(otel, monkeypatch):
    monkeypatch.setenv(telemetry.CAPTURE_CONTENT_ENV, "true")
    telemetry.set_capture_content(False)
    run_everything()
    assert CITY not in every_text(otel)


# search-loop mechanics on a few tools: the plain loop (see cold_search in tests/conftest.py)
pytestmark = pytest.mark.cold_search
