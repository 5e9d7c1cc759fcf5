"""The GenAI conventions' attributes beyond the span tree: the endpoint of a provider
adapter (``server.address`` / ``server.port``), the content attributes in the conventions'
JSON shapes (system instructions apart for the providers that take them apart, tool
definitions, retrieval documents), and a model's exception message kept out of spans unless
content capture is on. Provider adapters run on their real SDKs over a mocked transport
(``tests/providers/fakes.py``)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from opentelemetry.trace import StatusCode
from telemetry_scripts import USER, get_forecast, script, send_email

from toolsearch import (
    ChatClient,
    ChatModelError,
    Prompt,
    SystemMessage,
    ToolSearchToolCallingAdvisor,
    UserMessage,
    telemetry,
)
from toolsearch.chat.model import BaseChatModel
from toolsearch.errors import ProviderError
from toolsearch.indexes import Bm25ToolIndex, RegexToolIndex
from toolsearch.models import FunctionChatModel
from toolsearch.telemetry.hooks import retrieval_documents
from toolsearch.telemetry.models import server_address

SYSTEM = "System-Instructions-Text-6620"


def every_text(otel) -> str:
    """Every attribute value, status and event of every span, as one string."""
    parts = []
    for span in otel.spans():
        parts.append(span.name)
        parts.extend(f"{k}={v}" for k, v in (span.attributes or {}).items())
        parts.append(str(span.status.description))
        for event in span.events:
            parts.extend(f"{k}={v}" for k, v in (event.attributes or {}).items())
    return "\n".join(parts)


def search_client(index=None):
    advisor = ToolSearchToolCallingAdvisor(tool_index=index or Bm25ToolIndex())
    return ChatClient.builder(FunctionChatModel(script)).default_advisors(advisor).build()


def system_prompt() -> Prompt:
    return Prompt([SystemMessage(content=SYSTEM), UserMessage(content=USER)])


# -- server.address / server.port from the adapters ---------------------------------------


def endpoints():
    from providers import fakes

    return [
        pytest.param(fakes.OpenAIEndpoint, "completion_final.json", ("llm.test", 80), id="openai"),
        pytest.param(
            fakes.OpenAIResponsesEndpoint,
            "response_final.json",
            ("llm.test", 80),
            id="openai-responses",
        ),
        pytest.param(
            fakes.AnthropicEndpoint, "message_final.json", ("claude.test", 80), id="anthropic"
        ),
        pytest.param(
            fakes.GeminiEndpoint,
            "generate_final.json",
            ("generativelanguage.googleapis.com", 443),
            id="gemini",
        ),
    ]


@pytest.mark.parametrize(("endpoint", "reply", "server"), endpoints())
def test_a_provider_chat_span_names_its_server(otel, endpoint, reply, server):
    model = endpoint(reply).model()
    model.call(Prompt([UserMessage(content="hi")]))
    (chat,) = otel.named("chat ")
    assert chat.name == f"chat {endpoint.model_name}"
    assert (chat.attributes["server.address"], chat.attributes["server.port"]) == server
    ((attributes, _),) = otel.histograms()["gen_ai.client.operation.duration"]
    assert (attributes["server.address"], attributes["server.port"]) == server


def test_a_stream_span_names_its_server_too(otel):
    from providers.fakes import OpenAIEndpoint

    model = OpenAIEndpoint("stream_final.sse").model()
    assert list(model.stream(Prompt([UserMessage(content="hi")])))
    chat = otel.one("chat ")
    assert chat.attributes["gen_ai.request.stream"] is True
    assert chat.attributes["server.address"] == "llm.test"


def test_the_server_comes_from_the_base_url_before_a_client_is_built():
    pytest.importorskip("openai")
    from toolsearch.models import OpenAIChatModel

    model = OpenAIChatModel("llama3.1", base_url="http://localhost:11434/v1")
    assert server_address(model) == ("localhost", 11434)
    assert model._client is None  # reading it built no client
    assert server_address(OpenAIChatModel("gpt-4o", base_url="https://proxy.example/v1")) == (
        "proxy.example",
        443,
    )
    assert server_address(FunctionChatModel(script)) == (None, None)


# -- content in the conventions' shapes ---------------------------------------------------


@pytest.mark.parametrize("provider", ["anthropic", "gemini"])
def test_a_provider_that_takes_the_system_text_apart_records_system_instructions(otel, provider):
    from providers import fakes

    endpoint = {"anthropic": fakes.AnthropicEndpoint, "gemini": fakes.GeminiEndpoint}[provider]
    reply = {"anthropic": "message_final.json", "gemini": "generate_final.json"}[provider]
    telemetry.set_capture_content(True)
    endpoint(reply).model().call(system_prompt())
    chat = otel.one("chat ")
    assert json.loads(chat.attributes["gen_ai.system_instructions"]) == [
        {"type": "text", "content": SYSTEM}
    ]
    assert json.loads(chat.attributes["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": USER}]}
    ]
    (output,) = json.loads(chat.attributes["gen_ai.output.messages"])
    assert output["role"] == "assistant"
    assert output["finish_reason"] == "stop"
    assert output["parts"][0]["type"] == "text"


def test_a_provider_with_system_messages_in_the_history_keeps_them_there(otel):
    from providers.fakes import OpenAIEndpoint

    telemetry.set_capture_content(True)
    OpenAIEndpoint("completion_final.json").model().call(system_prompt())
    chat = otel.one("chat ")
    assert "gen_ai.system_instructions" not in chat.attributes
    assert json.loads(chat.attributes["gen_ai.input.messages"]) == [
        {"role": "system", "parts": [{"type": "text", "content": SYSTEM}]},
        {"role": "user", "parts": [{"type": "text", "content": USER}]},
    ]


def test_chat_spans_carry_the_tool_definitions_the_model_saw(otel):
    search_client().prompt(USER).tools(get_forecast, send_email).call()
    chats = [s for s in otel.spans() if s.name == "chat"]
    assert all("gen_ai.tool.definitions" not in c.attributes for c in chats)  # content: opt-in
    otel.exporter.clear()
    telemetry.set_capture_content(True)
    search_client().prompt(USER).tools(get_forecast, send_email).call()
    chats = [s for s in otel.spans() if s.name == "chat"]
    seen = [json.loads(c.attributes["gen_ai.tool.definitions"]) for c in chats]
    assert [[d["name"] for d in definitions] for definitions in seen] == [
        ["toolSearchTool"],
        ["toolSearchTool", "get_forecast"],
        ["toolSearchTool", "get_forecast"],
    ]
    assert [len(d) for d in seen] == [c.attributes["toolsearch.tools.visible"] for c in chats]
    forecast = seen[1][1]
    assert forecast == {
        "type": "function",
        "name": "get_forecast",
        "description": "Get the weather forecast for a city",
        "parameters": forecast["parameters"],
    }
    assert forecast["parameters"]["properties"]["city"]["type"] == "string"
    assert seen[0][0]["parameters"]["required"] == ["query"]


def test_the_retrieval_span_is_named_by_its_index(otel):
    telemetry.set_capture_content(True)
    search_client(RegexToolIndex()).prompt(USER).tools(get_forecast, send_email).call()
    search = otel.one("retrieval")
    assert search.name == "retrieval RegexToolIndex"
    assert search.attributes["gen_ai.data_source.id"] == "RegexToolIndex"
    documents = json.loads(search.attributes["gen_ai.retrieval.documents"])
    assert [d["id"] for d in documents] == list(search.attributes["toolsearch.search.hit_names"])
    assert [d["score"] for d in documents] == list(
        search.attributes["toolsearch.search.hit_scores"]
    )


def test_a_hit_without_a_score_is_an_id_only():
    assert retrieval_documents(["a", "b"], [0.5, None]) == [{"id": "a", "score": 0.5}, {"id": "b"}]


# -- a model's exception message is content ------------------------------------------------


class Refusing(BaseChatModel):
    """A model whose every mode fails with a message that quotes the prompt (as a
    provider's refusal can)."""

    def call(self, prompt):
        raise ValueError(f"refused: {prompt.messages[-1].text!r}")


def run_mode(model, mode: str) -> None:
    prompt = Prompt([UserMessage(content=USER)])
    if mode == "call":
        model.call(prompt)
    elif mode == "stream":
        list(model.stream(prompt))
    elif mode == "acall":
        asyncio.run(model.acall(prompt))
    else:

        async def consume():
            return [chunk async for chunk in model.astream(prompt)]

        asyncio.run(consume())


@pytest.mark.parametrize("mode", ["call", "stream", "acall", "astream"])
def test_a_model_exception_message_stays_out_of_spans(otel, mode):
    with pytest.raises(ValueError, match="User-Content"):
        run_mode(Refusing(), mode)
    chat = otel.exact("chat")
    assert chat.status.status_code is StatusCode.ERROR
    assert chat.status.description is None
    assert chat.attributes["error.type"] == "ValueError"
    (event,) = chat.events
    assert event.attributes["exception.type"] == "ValueError"
    assert event.attributes["exception.message"] == ""
    assert event.attributes["exception.stacktrace"].endswith("\nValueError")
    assert USER not in every_text(otel)

    otel.exporter.clear()
    telemetry.set_capture_content(True)
    with pytest.raises(ValueError, match="User-Content"):
        run_mode(Refusing(), mode)
    assert USER in otel.exact("chat").events[0].attributes["exception.message"]


def test_a_provider_error_quoting_the_prompt_stays_out_of_spans(otel, tmp_path: Path):
    from providers.fakes import OpenAIEndpoint

    body = {"error": {"message": f"Cannot answer {USER!r}", "type": "invalid_request_error"}}
    (tmp_path / "error_400_quoting.json").write_text(json.dumps(body))

    def endpoint():
        server = OpenAIEndpoint((400, "error_400_quoting.json"))
        server.fixtures = tmp_path
        return server

    client = ChatClient.create(endpoint().model())
    with pytest.raises(ProviderError) as caught:
        client.prompt(USER).call()
    assert isinstance(caught.value, ChatModelError)
    assert USER in str(caught.value)  # the caller gets the message
    chat = otel.one("chat ")
    root = otel.one("invoke_agent")
    for span in (chat, root):
        assert span.status.status_code is StatusCode.ERROR
        assert span.events[0].attributes["exception.message"] == ""
    assert USER not in every_text(otel)

    otel.exporter.clear()
    telemetry.set_capture_content(True)
    with pytest.raises(ProviderError):
        ChatClient.create(endpoint().model()).prompt(USER).call()
    assert USER in otel.one("chat ").events[0].attributes["exception.message"]


# search-loop mechanics on a few tools: the plain loop (see cold_search in tests/conftest.py)
pytestmark = pytest.mark.cold_search
