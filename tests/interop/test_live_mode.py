"""Live mode, as changed after running it against llama.cpp's server: it sends
``tool_choice="auto"`` to OpenAI-compatible servers (llama-cpp-python's
``chatml-function-calling`` handler ignores the tools otherwise), and its records say how
the failed tasks failed (``error_kinds``).

Not interop tests: no server, no ``[llama]`` extra; they run in the normal test run.
"""

from __future__ import annotations

from typing import Any

import pytest

from toolsearch import AssistantMessage, ChatOptions, FunctionToolCallback, Prompt, ToolCall
from toolsearch.chat.model import BaseChatModel
from toolsearch.errors import ProviderError
from toolsearch.models import FunctionChatModel
from toolsearch.tools import ToolDefinition
from toolsearch_bench.data import Catalog, Query
from toolsearch_bench.live import provider_model_factory, run_live


def test_the_openai_live_model_sends_tool_choice_auto() -> None:
    pytest.importorskip("openai", reason="openai is not installed ([openai])")
    from toolsearch.models.openai import OpenAIChatModel, openai_request_body

    model = provider_model_factory("openai:any-model", environ={"OPENAI_API_KEY": "k"})()
    assert isinstance(model, OpenAIChatModel)
    tool = FunctionToolCallback.from_schema(
        lambda arguments: "ok", name="ping", description="Ping.", input_schema={"type": "object"}
    )
    prompt = Prompt.of("hi", ChatOptions(tool_callbacks=[tool]))
    options = model.effective_options(prompt)
    body = openai_request_body(prompt.with_options(options), model="any-model")
    assert body["tool_choice"] == "auto"
    assert [t["function"]["name"] for t in body["tools"]] == ["ping"]


@pytest.mark.parametrize(
    ("spec", "environ"),
    [
        ("anthropic:claude-sonnet-4-6", {"ANTHROPIC_API_KEY": "k"}),
        ("gemini:gemini-2.5-flash", {"GEMINI_API_KEY": "k"}),
    ],
)
def test_other_providers_get_no_request_extras(spec: str, environ: dict[str, str]) -> None:
    provider = spec.partition(":")[0]
    sdk = {"anthropic": "anthropic", "gemini": "google.genai"}[provider]
    pytest.importorskip(sdk, reason=f"{sdk} is not installed")
    model = provider_model_factory(spec, environ=environ)()
    assert isinstance(model, BaseChatModel)
    assert model.effective_options(Prompt.of("hi")).extra == {}


def test_records_count_the_ways_tasks_failed() -> None:
    definition = ToolDefinition(name="ping", description="Ping.", input_schema={"type": "object"})
    catalog = Catalog("tiny", (definition,))
    queries = [
        Query(id="loops", text="loop for ever", gold=("ping",)),
        Query(id="rejected", text="too long", gold=("ping",)),
        Query(id="answers", text="just answer", gold=("ping",)),
    ]

    def script(messages: list[Any], tools: list[Any]) -> Any:
        text = messages[1].content  # after the system message
        if text == "too long":
            raise ProviderError("openai", "maximum context length", status_code=400)
        if text == "loop for ever":
            return AssistantMessage(tool_calls=[ToolCall(id="c", name="ping")])
        return "done"

    (record,) = run_live(catalog, queries, lambda: FunctionChatModel(script), max_iterations=2)
    assert record.errors == 2
    assert record.error_kinds == {"ProviderError (HTTP 400)": 1, "ToolLoopLimitError": 1}
    assert record.as_dict()["error_kinds"] == record.error_kinds
