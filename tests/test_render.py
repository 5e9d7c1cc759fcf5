"""Provider request renderers (golden files) and exact token counts."""

import json
from pathlib import Path

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
from toolsearch.bench.render import PROVIDERS, count_request, render_request
from toolsearch.tokens import WhitespaceTokenCounter
from toolsearch.tools.function import FunctionToolCallback

GOLDEN = Path(__file__).parent / "golden"

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


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rendered_requests_match_the_golden_files(provider):
    rendered = render_request(_prompt(), provider)
    golden = json.loads((GOLDEN / f"render_{provider}.json").read_text())
    assert rendered == golden


def test_openai_shape():
    body = render_request(_prompt(), "openai")
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "tool"]
    assert body["messages"][2]["tool_calls"][0]["function"]["arguments"] == '{"city": "Paris"}'
    assert body["messages"][3] == {"role": "tool", "tool_call_id": "c1", "content": "sunny"}
    assert body["tools"][0]["type"] == "function"
    assert body["tools"][0]["function"]["parameters"] == WEATHER_SCHEMA


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


def test_gemini_shape_inlines_refs_and_drops_unsupported_keys():
    body = render_request(_prompt(), "gemini")
    assert body["system_instruction"] == {"parts": [{"text": "You are helpful."}]}
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]
    declarations = body["tools"][0]["function_declarations"]
    parameters = declarations[0]["parameters"]
    assert parameters["properties"]["unit"] == {"type": "string", "enum": ["celsius", "fahrenheit"]}
    assert "additionalProperties" not in parameters
    assert "$defs" not in parameters
    assert "parameters" not in declarations[1]  # a tool without parameters


def test_counts_split_definitions_from_conversation():
    prompt = _prompt()
    counter = WhitespaceTokenCounter()
    with_tools = count_request(prompt, "openai", counter)
    without = count_request(prompt.with_options(ChatOptions()), "openai", counter)
    assert without.definitions == 0
    assert with_tools.conversation == without.conversation
    assert with_tools.total == with_tools.definitions + with_tools.conversation > without.total


def test_exact_o200k_counts():
    pytest.importorskip("bpe_openai", reason="bpe-openai is not installed (toolsearch[bench])")
    from toolsearch.bench.tokens import BpeTokenCounter

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
