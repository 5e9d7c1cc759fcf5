"""Counted request bodies: the adapters' own request mapping (golden files, and checked
against what each adapter sends through its real SDK) and exact token counts."""

import importlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolsearch import (
    AssistantMessage,
    ChatOptions,
    Prompt,
    SystemMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolsearch.chat import ToolSearchHit
from toolsearch.models.gemini import SIGNATURES_METADATA_KEY
from toolsearch.tokens import WhitespaceTokenCounter
from toolsearch.tools.function import FunctionToolCallback
from toolsearch_bench.render import (
    PROMPT_KEYS,
    PROVIDERS,
    adapter_request_body,
    count_request,
    render_request,
)

GOLDEN = Path(__file__).parent / "golden"
FIXTURES = Path(__file__).parents[3] / "tests" / "fixtures" / "providers"  # recorded replies
MODEL = "bench-model"

WEATHER_SCHEMA = {
    "$defs": {
        "Unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
    },
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "city": {"type": "string", "description": "City name"},
        "unit": {"$ref": "#/$defs/Unit"},
    },
    "required": ["city"],
}


def _prompt() -> Prompt:
    weather = FunctionToolCallback.from_schema(
        lambda arguments: "sunny",
        name="get_weather",
        description="Current weather for a city.",
        input_schema=WEATHER_SCHEMA,
    )
    ping = FunctionToolCallback.from_schema(
        lambda arguments: "pong", name="ping", description="Health check.", input_schema={}
    )
    messages = [
        SystemMessage(content="You are helpful."),
        UserMessage(content="Weather in Paris?"),
        AssistantMessage(
            content="Checking.",
            tool_calls=[ToolCall(id="c1", name="get_weather", arguments='{"city": "Paris"}')],
        ),
        ToolResponseMessage(
            responses=[ToolResponse(id="c1", name="get_weather", response_data="sunny")]
        ),
    ]
    return Prompt(messages, ChatOptions(tool_callbacks=[weather, ping]))


def _loop_prompt() -> Prompt:
    """A tool-search loop's later request: a search with typed hits, parallel calls, a
    result followed by user text, a tool without description or parameters, thought
    signatures."""
    weather, ping = _prompt().options.tool_callbacks
    bare = FunctionToolCallback.from_schema(
        lambda arguments: "ok", name="bare", description="", input_schema={"type": "object"}
    )
    hits = (ToolSearchHit(name="get_weather", summary="Current weather.", score=2.5),)
    messages = [
        SystemMessage(content="You are helpful."),
        UserMessage(content="Weather in Paris and Rome?"),
        AssistantMessage(tool_calls=[ToolCall(id="s1", name="toolSearchTool", arguments="{}")]),
        ToolResponseMessage(
            responses=[
                ToolResponse(
                    id="s1",
                    name="toolSearchTool",
                    response_data='["get_weather"]',
                    search_hits=hits,
                )
            ]
        ),
        AssistantMessage(
            content="",
            tool_calls=[
                ToolCall(id="c1", name="get_weather", arguments='{"city": "Paris"}'),
                ToolCall(id="c2", name="get_weather", arguments='{"city": "Rome"}'),
            ],
            metadata={SIGNATURES_METADATA_KEY: {"c1": "c2lnbmF0dXJl"}},
        ),
        ToolResponseMessage(
            responses=[
                ToolResponse(id="c1", name="get_weather", response_data="sunny"),
                ToolResponse(id="c2", name="get_weather", response_data="rain"),
            ]
        ),
        UserMessage(content="And tomorrow?"),
    ]
    return Prompt(messages, ChatOptions(tool_callbacks=[weather, ping, bare]))


PROMPTS = {"simple": _prompt, "loop": _loop_prompt}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rendered_requests_match_the_golden_files(provider):
    rendered = render_request(_prompt(), provider)
    golden = json.loads((GOLDEN / f"render_{provider}.json").read_text())
    assert rendered == golden


# -- the counted body is the body the adapter sends -----------------------------------------


def _capture(provider: str) -> tuple[Any, list[dict[str, Any]]]:
    """The ``provider`` adapter on its real SDK, over an HTTP transport that records each
    request's JSON body and answers with a final-answer fixture."""
    sent: list[dict[str, Any]] = []
    fixture = {
        "openai": "openai/completion_final.json",
        "anthropic": "anthropic/message_final.json",
        "gemini": "gemini/generate_final.json",
    }[provider]

    def handler(http: Any) -> Callable[[Any], Any]:
        def respond(request: Any) -> Any:
            sent.append(json.loads(request.content))
            body = (FIXTURES / fixture).read_bytes()
            return http.Response(200, content=body, headers={"content-type": "application/json"})

        return respond

    if provider == "openai":
        openai = pytest.importorskip("openai", reason="toolsearch[openai] is not installed")
        http = _http_library("openai._base_client")
        client = openai.OpenAI(
            api_key="k", http_client=http.Client(transport=http.MockTransport(handler(http)))
        )
        from toolsearch.models import OpenAIChatModel

        return OpenAIChatModel(MODEL, client=client), sent
    if provider == "anthropic":
        anthropic = pytest.importorskip(
            "anthropic", reason="toolsearch[anthropic] is not installed"
        )
        http = _http_library("anthropic._base_client")
        client = anthropic.Anthropic(
            api_key="k", http_client=http.Client(transport=http.MockTransport(handler(http)))
        )
        from toolsearch.models import AnthropicChatModel

        return AnthropicChatModel(MODEL, client=client, tool_search="none"), sent
    genai = pytest.importorskip("google.genai", reason="toolsearch[gemini] is not installed")
    http = _http_library("google.genai._api_client")
    client = genai.Client(
        api_key="k",
        http_options=genai.types.HttpOptions(
            httpx_client=http.Client(transport=http.MockTransport(handler(http)))
        ),
    )
    from toolsearch.models import GeminiChatModel

    return GeminiChatModel(MODEL, client=client), sent


def _http_library(module: str) -> Any:
    """The HTTP library the installed SDK is built on (httpx2 in current releases)."""
    return getattr(importlib.import_module(module), "httpx2", None) or importlib.import_module(
        "httpx"
    )


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("name", PROMPTS)
def test_the_counted_body_is_what_the_adapter_sends(provider, name):
    prompt = PROMPTS[name]()
    model, sent = _capture(provider)
    model.call(prompt)
    [wire] = sent
    # the whole body: the adapter's own mapping, byte for byte through the SDK
    assert wire == adapter_request_body(prompt, provider) | _model_field(provider)
    # and the counted part of it
    conversation_keys, tool_keys = PROMPT_KEYS[provider]
    counted = {k: wire[k] for k in (*conversation_keys, *tool_keys) if k in wire}
    assert render_request(prompt, provider) == counted


def _model_field(provider: str) -> dict[str, str]:
    return {} if provider == "gemini" else {"model": MODEL}  # Gemini's model is in the URL


def test_search_hits_render_as_the_adapters_render_them():
    """Without defer_loading the Anthropic body keeps the search result's text, as sent."""
    body = render_request(_loop_prompt(), "anthropic")
    search_result = body["messages"][2]["content"][0]
    assert search_result == {
        "type": "tool_result",
        "tool_use_id": "s1",
        "content": '["get_weather"]',
    }


def test_rendering_needs_no_provider_sdk(monkeypatch):
    for module in ("openai", "anthropic", "google.genai", "google"):
        monkeypatch.setitem(sys.modules, module, None)  # importing them now fails
    for provider in PROVIDERS:
        assert render_request(_loop_prompt(), provider)


def test_openai_shape():
    body = render_request(_prompt(), "openai")
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "tool"]
    assert body["messages"][2]["tool_calls"][0]["function"]["arguments"] == '{"city": "Paris"}'
    assert body["messages"][3] == {"role": "tool", "tool_call_id": "c1", "content": "sunny"}
    assert body["tools"][0]["type"] == "function"
    assert body["tools"][0]["function"]["parameters"] == WEATHER_SCHEMA
    assert set(body) == {"messages", "tools"}  # settings (model...) are not counted


def test_anthropic_shape():
    body = render_request(_prompt(), "anthropic")
    assert body["system"] == "You are helpful."
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    tool_use = body["messages"][1]["content"][1]
    assert tool_use == {
        "type": "tool_use",
        "id": "c1",
        "name": "get_weather",
        "input": {"city": "Paris"},
    }
    assert body["messages"][2]["content"][0]["type"] == "tool_result"
    assert body["tools"][0]["input_schema"] == WEATHER_SCHEMA
    # parallel results and the next user text share one user turn, results first
    loop = render_request(_loop_prompt(), "anthropic")
    last = loop["messages"][-1]["content"]
    assert [b["type"] for b in last] == ["tool_result", "tool_result", "text"]
    assert "description" not in loop["tools"][2]  # a tool without description


def test_gemini_shape_sends_the_json_schema_unchanged():
    body = render_request(_prompt(), "gemini")
    assert body["systemInstruction"] == {"parts": [{"text": "You are helpful."}], "role": "user"}
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]
    declarations = body["tools"][0]["functionDeclarations"]
    assert declarations[0]["parameters_json_schema"] == WEATHER_SCHEMA
    result = body["contents"][2]["parts"][0]["functionResponse"]
    assert result == {"name": "get_weather", "response": {"output": "sunny"}, "id": "c1"}
    loop = render_request(_loop_prompt(), "gemini")
    assert loop["contents"][3]["parts"][0]["thoughtSignature"] == "c2lnbmF0dXJl"
    assert "parameters_json_schema" not in loop["tools"][0]["functionDeclarations"][2]


def test_counts_split_definitions_from_conversation():
    prompt = _prompt()
    counter = WhitespaceTokenCounter()
    with_tools = count_request(prompt, "openai", counter)
    without = count_request(prompt.with_options(ChatOptions()), "openai", counter)
    assert without.definitions == 0
    assert with_tools.conversation == without.conversation
    assert with_tools.total == with_tools.definitions + with_tools.conversation > without.total


def test_exact_o200k_counts():
    pytest.importorskip("bpe_openai", reason="bpe-openai is not installed (the harness)")
    from toolsearch.tokens import BpeTokenCounter

    o200k = BpeTokenCounter("o200k_base")
    cl100k = BpeTokenCounter("cl100k_base")
    # reference counts from OpenAI's published encodings
    assert o200k.count("hello world") == 2
    assert cl100k.count("hello world") == 2
    assert o200k.count("") == 0
    assert o200k.count("<|endoftext|>") > 1  # special tokens are counted as text
    with pytest.raises(ValueError, match="encoding"):
        BpeTokenCounter("p50k_base")
    # long texts are counted in pieces cut before spaces: the same total as whole
    words = " ".join(f"word{i % 97} value{i % 13}" for i in range(30_000))
    assert len(words) > 200_000
    assert o200k.count(words) == len(o200k._encoding.encode(words, disallowed_special=()))
    assert o200k.count("x" * 1_200_000) > 0  # over the library's own limit


def test_the_defer_loading_shape_counts_references_where_they_are_read():
    """``anthropic-defer``: deferred tools are left out of the prompt's tools, and each
    ``tool_reference`` carries the definition Anthropic expands in its place."""
    from toolsearch_bench.render import prompt_body

    wire = adapter_request_body(_loop_prompt(), "anthropic-defer")
    deferred = [t["name"] for t in wire["tools"] if t.get("defer_loading")]
    assert deferred == ["get_weather"]
    body = prompt_body(_loop_prompt(), "anthropic-defer")
    assert [t["name"] for t in body["tools"]] == [
        t["name"] for t in wire["tools"] if not t.get("defer_loading")
    ]
    [reference] = [
        block
        for message in body["messages"]
        for result in message["content"]
        if isinstance(result, dict) and result.get("type") == "tool_result"
        for block in (result["content"] if isinstance(result["content"], list) else [])
    ]
    assert reference["type"] == "tool_reference"
    assert reference["definition"]["name"] == "get_weather"
    assert "defer_loading" not in reference["definition"]


def test_the_tool_changes_shape_counts_an_addition_where_it_is_read():
    """``anthropic-changes``: a tool the working set added mid-conversation is declared
    deferred by the adapter and left out of the prompt's tools; its ``tool_addition``
    block (in a system-role message before the next assistant turn) carries the
    definition, so the tools array before it never moves. A ``tool_removal`` block
    costs its own tokens only."""
    from toolsearch.chat.options import ToolChange
    from toolsearch_bench.render import prompt_body

    prompt = _loop_prompt()
    changes = (ToolChange("add", ("get_weather",), 4), ToolChange("remove", ("bare",), 6))
    prompt = prompt.with_options(prompt.options.replace(tool_changes=changes))
    wire = adapter_request_body(prompt, "anthropic-changes")
    assert [t["name"] for t in wire["tools"] if t.get("defer_loading")] == ["get_weather"]
    body = prompt_body(prompt, "anthropic-changes")
    assert "get_weather" not in [t["name"] for t in body["tools"]]
    system = [m for m in body["messages"] if m["role"] == "system"]
    assert [[b["type"] for b in m["content"]] for m in system] == [
        ["tool_addition"],
        ["tool_removal"],
    ]
    added = system[0]["content"][0]["tool"]
    assert added["name"] == "get_weather"
    assert added["definition"]["name"] == "get_weather"
    assert "defer_loading" not in added["definition"]
    assert "definition" not in system[1]["content"][0]["tool"]
