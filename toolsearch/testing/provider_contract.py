"""The provider-adapter contract: subclass :class:`ProviderContract`, set ``spec`` (an
:class:`~toolsearch.testing.AdapterSpec`: the adapter, its fake endpoint, what its fixtures
and wire format say), and pytest runs every check against the adapter on its real SDK.

.. code-block:: python

    class TestMyAdapter(ProviderContract):
        spec = AdapterSpec(name="my-provider", endpoint=MyEndpoint, ...)

The endpoint (a :class:`~toolsearch.testing.ProviderEndpoint`) serves the provider's
fixture files over a mock HTTP transport and records each request; the spec's readers
turn a request body back into a neutral form (the conversation, the tools, the sampling
options). An adapter whose SDK is missing skips with the extra to install.

The contract: a text reply and a tool call come back as a ``ChatResponse`` (text, whole
tool calls, finish reasons in toolsearch's vocabulary, the provider's own reason and raw
usage in the metadata); token usage means the same for every provider; the tool loop
sends the call and its result back, paired, through ``call``, ``stream``, ``acall`` and
``astream``, async paths on the async client; history keeps its order; a tool name the
provider refuses goes under a wire name and comes back; options and ``extra`` reach the
request (``toolsearch.`` keys never); deferred tools are sent in full by an adapter that
does not defer; HTTP failures, unreachable endpoints and missing credentials raise the
typed errors of :mod:`toolsearch.errors` with the provider's message; an abandoned stream
releases its HTTP response; the SDK is imported only when a model is built, and a missing
one names the extra.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest

from toolsearch.chat.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolsearch.chat.options import ChatOptions
from toolsearch.chat.prompt import Prompt
from toolsearch.chat.response import ChatResponse
from toolsearch.errors import (
    MissingExtraError,
    ProviderAuthenticationError,
    ProviderConnectionError,
    ProviderError,
    ProviderRateLimitError,
)
from toolsearch.loop.client import ChatClient
from toolsearch.testing.provider_spec import (
    MODES,
    REPLY,
    AdapterSpec,
    ErrorCase,
    ToolCallbackStub,
    answer,
    assert_paris_call,
    renamed_fixtures,
    run,
    texts,
    without_usage,
)
from toolsearch.tools import tool, tool_callbacks
from toolsearch.tools.definition import ToolDefinition

__all__ = ["EMAIL", "WEATHER", "WEIRD_NAME", "ProviderContract", "declared"]

weather_calls: list[str] = []


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    weather_calls.append(city)
    return f"sunny in {city}"


@tool
def send_email(to: str, body: str) -> str:
    """Send an email message to a recipient."""
    return "sent"


WEIRD_NAME = "weather.get/now"  # a dot and a slash, as MCP servers name tools
weird_calls: list[str] = []


@tool(name=WEIRD_NAME)
def weird_weather(city: str) -> str:
    """Current weather for a city."""
    weird_calls.append(city)
    return f"sunny in {city}"


def declared(function: Any) -> tuple[str, str, dict[str, Any]]:
    """``(name, description, input schema)`` of a ``@tool`` function, as sent."""
    (callback,) = tool_callbacks(function)
    definition = callback.definition
    return definition.name, definition.description, dict(definition.input_schema)


WEATHER = declared(get_weather)
EMAIL = declared(send_email)


class ProviderContract:
    """Every check of a provider adapter: set ``spec`` in a ``Test...`` subclass."""

    spec: ClassVar[AdapterSpec]

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "case" in metafunc.fixturenames:  # one test per error fixture of this adapter
            metafunc.parametrize("case", self.spec.errors, ids=str)

    @pytest.fixture
    def adapter(self) -> AdapterSpec:
        found = self.spec
        pytest.importorskip(
            found.sdk, reason=f"the {found.sdk} SDK (toolsearch[{found.extra}]) is not installed"
        )
        weather_calls.clear()
        return found

    def test_a_text_reply_is_our_response_with_the_providers_reason_kept(
        self, adapter: AdapterSpec
    ) -> None:
        response = adapter.endpoint(adapter.final).model().call(Prompt.of("hi"))
        assert response.text == REPLY
        assert response.message.tool_calls == ()
        assert response.finish_reason == "stop"
        assert response.metadata["provider"] == adapter.name
        assert response.metadata["model"] == adapter.reply_model
        assert response.metadata["id"] == adapter.reply_id
        assert response.metadata["provider_finish_reason"] == adapter.stop_reason

    def test_a_streamed_reply_hands_on_text_as_it_arrives(self, adapter: AdapterSpec) -> None:
        chunks = list(adapter.endpoint(adapter.stream_final).model().stream(Prompt.of("hi")))
        assert texts(chunks) == ["It is sunny", " in Paris."]
        last = chunks[-1]
        assert last.finish_reason == "stop"
        assert last.metadata["provider"] == adapter.name
        assert last.metadata["model"] == adapter.reply_model
        assert last.metadata["provider_finish_reason"] == adapter.stop_reason

    def test_a_tool_call_is_parsed_and_finishes_as_tool_calls(self, adapter: AdapterSpec) -> None:
        response = adapter.endpoint(adapter.tool_call).model().call(Prompt.of("hi"))
        (call,) = response.message.tool_calls
        assert_paris_call(call, adapter)
        assert response.message.content == adapter.call_text
        assert response.finish_reason == "tool_calls"
        assert response.metadata["provider_finish_reason"] == adapter.tool_call_reason

    def test_a_streamed_tool_call_is_handed_on_whole_once(self, adapter: AdapterSpec) -> None:
        chunks = list(adapter.endpoint(adapter.stream_tool_call).model().stream(Prompt.of("hi")))
        with_calls = [chunk.message.tool_calls for chunk in chunks if chunk.message.tool_calls]
        assert len(with_calls) == 1  # the deltas were joined: one chunk carries the call
        (call,) = with_calls[0]
        assert_paris_call(call, adapter)
        assert "".join(texts(chunks)) == (adapter.call_text or "")
        assert chunks[-1].finish_reason == "tool_calls"

    def test_usage_counts_prompt_completion_and_cached_tokens_alike(
        self, adapter: AdapterSpec
    ) -> None:
        response = adapter.endpoint(adapter.final).model().call(Prompt.of("hi"))
        usage = response.usage
        assert usage == adapter.usage
        assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
        # the provider's own counts stay in the metadata
        assert adapter.raw_cached(response.metadata["usage"]) == adapter.usage.cached_tokens

        chunks = list(adapter.endpoint(adapter.stream_final).model().stream(Prompt.of("hi")))
        assert chunks[-1].usage == adapter.usage  # the last chunk carries the whole count

    @pytest.mark.parametrize("mode", MODES)
    def test_the_tool_loop_sends_the_call_and_its_result_back(
        self, adapter: AdapterSpec, mode: str
    ) -> None:
        streaming = mode.endswith("stream")
        if streaming:
            server = adapter.endpoint(adapter.stream_tool_call, adapter.stream_final)
        else:
            server = adapter.endpoint(adapter.tool_call, adapter.final)
        spec = (
            ChatClient.create(server.model())
            .prompt("Weather in Paris?")
            .system("Answer briefly.")
            .tools(get_weather)
        )
        if mode == "call":
            response = spec.call().chat_response()
            assert response is not None
            assert response.finish_reason == "stop"
            text = response.text
        else:
            text = answer(spec, mode)

        assert text == REPLY
        assert weather_calls == ["Paris"]  # the arguments the provider sent, parsed whole
        first, second = server.requests
        asked = [("system", "Answer briefly."), ("user", "Weather in Paris?")]
        assert adapter.conversation(first) == asked
        assert adapter.tools(first) == [WEATHER]  # the JSON Schema unchanged
        said = [("assistant", adapter.call_text)] if adapter.call_text else []
        assert adapter.conversation(second) == [
            *asked,
            *said,
            ("call", adapter.call_ref, "get_weather", {"city": "Paris"}),
            ("result", adapter.call_ref, "sunny in Paris"),
        ]
        assert adapter.tools(second) == [WEATHER]
        sent = zip(server.urls, server.requests, strict=True)
        assert [adapter.streamed(url, body) for url, body in sent] == [streaming, streaming]
        side = "async" if mode.startswith("a") else "sync"
        assert server.sides == [side, side]  # async paths on the async client, sync on the sync

    def test_a_model_given_only_a_sync_client_serves_async_calls_from_it(
        self, adapter: AdapterSpec
    ) -> None:
        if not adapter.separate_async_client:
            pytest.skip(f"{adapter.name} has one client for sync and async calls")
        server = adapter.endpoint(adapter.final, adapter.stream_final)
        model = server.model(sync_only=True)
        assert run(model, Prompt.of("hi"), "acall")[0].text == REPLY
        assert "".join(texts(run(model, Prompt.of("hi"), "astream"))) == REPLY
        assert server.sides == ["sync", "sync"]  # in a worker thread; no async client was made

    def test_history_keeps_its_order_and_pairs_each_result_with_its_call(
        self, adapter: AdapterSpec
    ) -> None:
        server = adapter.endpoint(adapter.final)
        history: list[Message] = [
            SystemMessage(content="Answer briefly."),
            UserMessage(content="Paris and Rome?"),
            AssistantMessage(
                content="Checking both.",
                tool_calls=(
                    ToolCall(id="a", name="get_weather", arguments='{"city":"Paris"}'),
                    ToolCall(id="b", name="get_weather", arguments='{"city":"Rome"}'),
                ),
            ),
            ToolResponseMessage(
                responses=(
                    ToolResponse(id="a", name="get_weather", response_data="sunny"),
                    ToolResponse(id="b", name="get_weather", response_data="rain"),
                )
            ),
            UserMessage(content="And tomorrow?"),
        ]
        server.model().call(Prompt(history))
        assert adapter.conversation(server.requests[0]) == [
            ("system", "Answer briefly."),
            ("user", "Paris and Rome?"),
            ("assistant", "Checking both."),
            ("call", "a", "get_weather", {"city": "Paris"}),
            ("call", "b", "get_weather", {"city": "Rome"}),
            ("result", "a", "sunny"),
            ("result", "b", "rain"),
            ("user", "And tomorrow?"),
        ]

    @pytest.mark.parametrize("mode", MODES)
    def test_a_tool_name_the_provider_refuses_goes_under_a_wire_name_and_comes_back(
        self, adapter: AdapterSpec, mode: str, tmp_path: Path
    ) -> None:
        weird_calls.clear()
        streaming = mode.endswith("stream")
        if streaming:
            server = adapter.endpoint(adapter.stream_tool_call, adapter.stream_final)
        else:
            server = adapter.endpoint(adapter.tool_call, adapter.final)
        renamed_fixtures(adapter, server, tmp_path)
        spec = ChatClient.create(server.model()).prompt("Weather in Paris?").tools(weird_weather)
        text = answer(spec, mode)
        assert text == REPLY
        assert weird_calls == ["Paris"]  # the model's call, mapped back, reached the tool
        first, second = server.requests
        wire = adapter.wire_weather
        assert [name for name, _, _ in adapter.tools(first)] == [wire]
        assert [name for name, _, _ in adapter.tools(second)] == [wire]
        ref = wire if adapter.call_id is None else adapter.call_ref
        # the history goes back under the wire name: calls and (Gemini: by name) results
        assert adapter.conversation(second)[-2:] == [
            ("call", ref, wire, {"city": "Paris"}),
            ("result", ref, "sunny in Paris"),
        ]
        assert WEIRD_NAME not in json.dumps(second)

    @pytest.mark.parametrize("mode", MODES)
    def test_the_models_call_carries_the_tools_own_name(
        self, adapter: AdapterSpec, mode: str, tmp_path: Path
    ) -> None:
        reply = adapter.stream_tool_call if mode.endswith("stream") else adapter.tool_call
        server = adapter.endpoint(reply)
        renamed_fixtures(adapter, server, tmp_path)
        prompt = Prompt.of("hi", ChatOptions(tool_callbacks=tool_callbacks(weird_weather)))
        chunks = run(server.model(), prompt, mode)
        calls = [call for chunk in chunks for call in chunk.message.tool_calls]
        assert [call.name for call in calls] == [WEIRD_NAME]

    def test_two_names_that_map_to_one_wire_name_get_distinct_wire_names(
        self, adapter: AdapterSpec
    ) -> None:
        rule = adapter.rule
        if isinstance(rule, str):
            from toolsearch.models import wire_names

            rule = getattr(wire_names, rule)
        server = adapter.endpoint(adapter.final)
        tools = [
            ToolDefinition(name=name, description=f"Tool {name}.", input_schema={"type": "object"})
            for name in ("files/read", "files_read", "files\\read", "x" * 70, "météo")
        ]
        callbacks = [ToolCallbackStub(definition) for definition in tools]
        server.model().call(Prompt.of("hi", ChatOptions(tool_callbacks=callbacks)))
        sent = [name for name, _, _ in adapter.tools(server.requests[0])]
        assert len(set(sent)) == len(sent) == 5
        assert all(rule.accepts(name) for name in sent)
        assert sent[1] == "files_read"  # a name the provider takes is kept
        assert sent[4] == "meteo"
        assert len(sent[3]) == 64
        again = adapter.endpoint(adapter.final)
        again.model().call(Prompt.of("hi", ChatOptions(tool_callbacks=callbacks[::-1])))
        assert [name for name, _, _ in adapter.tools(again.requests[0])] == sent[::-1]  # stable

    def test_options_and_extra_reach_the_request(self, adapter: AdapterSpec) -> None:
        server = adapter.endpoint(adapter.final)
        defaults = ChatOptions(temperature=0.2, max_tokens=1000, extra=adapter.native_extra)
        model = server.model(options=defaults)
        options = ChatOptions(
            max_tokens=64,  # the request's options win over the model's defaults
            top_p=0.9,
            stop=("END",) if adapter.stop else (),
            extra={
                "brand_new_field": {"on": True},  # unknown to the SDK: sent in the body as is
                "toolsearch.internal": "never sent",
            },
        )
        try:
            model.call(Prompt.of("hi", options))
        except ProviderError:  # a strict endpoint refuses the unknown field, as the API would
            assert adapter.strict
            refused: list[list[str]] = getattr(server, "refused", [[""]])
            assert "brand_new_field" in refused[0][0]
        body = server.requests[0]
        expected = {"temperature": 0.2, "top_p": 0.9, "max_tokens": 64}
        assert adapter.sampling(body) == {**expected, **({"stop": ["END"]} if adapter.stop else {})}
        assert adapter.read_native(body) == adapter.native_extra
        assert body["brand_new_field"] == {"on": True}
        sent = json.dumps(body)
        assert "toolsearch" not in sent
        assert "never sent" not in sent

    def test_the_requests_model_overrides_the_adapters(self, adapter: AdapterSpec) -> None:
        server = adapter.endpoint(adapter.final, adapter.final)
        model = server.model()
        model.call(Prompt.of("hi"))
        model.call(Prompt.of("hi", ChatOptions(model="another-model")))
        sent = [adapter.model_sent(u, b) for u, b in zip(server.urls, server.requests, strict=True)]
        assert sent == [adapter.endpoint.model_name, "another-model"]

    def test_deferred_tools_are_sent_in_full_by_an_adapter_that_does_not_defer(
        self,
        adapter: AdapterSpec,
    ) -> None:
        """Every adapter but Anthropic's never defers; Anthropic's does not with
        ``tool_search="none"`` (its default defers: ``tests/providers``)."""
        server = adapter.endpoint(adapter.final)
        settings = adapter.no_defer_settings
        archive = ToolDefinition(
            name="archive", description="Archive a ticket.", input_schema={"type": "object"}
        )
        options = ChatOptions(
            tool_callbacks=tool_callbacks([get_weather, send_email]),
            deferred_tools=["send_email", archive, "not_registered"],
        )
        server.model(**settings).call(Prompt.of("hi", options))
        body = server.requests[0]
        assert adapter.tools(body) == [WEATHER, EMAIL]  # a catalog-only tool is not sent
        assert "defer_loading" not in json.dumps(body)
        assert not any(key.startswith("toolsearch") for key in body)

    @pytest.mark.parametrize("mode", MODES)
    def test_http_errors_become_our_types_with_the_providers_message(
        self, adapter: AdapterSpec, case: ErrorCase, mode: str
    ) -> None:
        server = adapter.endpoint((case.status, case.fixture))
        expected = json.loads((server.fixtures / case.fixture).read_text())["error"]["message"]
        with pytest.raises(ProviderError) as caught:
            run(server.model(), Prompt.of("hi"), mode)
        error = caught.value
        assert type(error) is case.error
        assert error.status_code == case.status
        assert error.provider == adapter.name
        assert error.provider_message == expected
        assert expected in str(error)
        assert error.retryable is case.retryable

    @pytest.mark.parametrize(
        ("header", "value", "seconds"),
        [("retry-after", "7", 7.0), ("retry-after-ms", "1500", 1.5)],
    )
    def test_a_rate_limit_says_how_long_to_wait(
        self, adapter: AdapterSpec, header: str, value: str, seconds: float
    ) -> None:
        (case,) = [c for c in adapter.errors if c.status == 429]
        server = adapter.endpoint((429, case.fixture))
        server.reply_headers = {header: value}
        with pytest.raises(ProviderRateLimitError) as caught:
            server.model().call(Prompt.of("hi"))
        assert caught.value.retry_after == pytest.approx(seconds)
        assert caught.value.retryable

    def test_an_error_without_retry_after_says_none(self, adapter: AdapterSpec) -> None:
        (case,) = [c for c in adapter.errors if c.status == 429]
        server = adapter.endpoint((429, case.fixture))
        with pytest.raises(ProviderRateLimitError) as caught:
            server.model().call(Prompt.of("hi"))
        assert caught.value.retry_after is None

    def test_an_answer_without_usage_has_usage_none_and_the_loop_counts_it(
        self, adapter: AdapterSpec, tmp_path: Path
    ) -> None:
        from toolsearch.loop.tool_calling_advisor import (
            CALLS_WITHOUT_USAGE_KEY,
            LOOP_USAGE_KEY,
            MODEL_CALLS_KEY,
        )

        server = adapter.endpoint(adapter.final)
        without_usage(server, tmp_path, adapter.final)
        assert server.model().call(Prompt.of("hi")).usage is None  # not Usage(0, 0, 0)

        server = adapter.endpoint(adapter.tool_call, adapter.final)
        without_usage(server, tmp_path, adapter.tool_call)
        response = (
            ChatClient.create(server.model()).prompt("Weather?").tools(get_weather).call()
        ).chat_response()
        assert response is not None
        assert response.metadata[MODEL_CALLS_KEY] == 2
        assert response.metadata[CALLS_WITHOUT_USAGE_KEY] == 1
        assert response.metadata[LOOP_USAGE_KEY] == adapter.usage  # the one call that reported

    @pytest.mark.parametrize("mode", MODES)
    @pytest.mark.parametrize("failure", ["ConnectError", "ConnectTimeout"])
    def test_an_unreachable_endpoint_is_a_retryable_connection_error(
        self, adapter: AdapterSpec, failure: str, mode: str
    ) -> None:
        server = adapter.endpoint()
        server.replies.append(getattr(server.http, failure)("connection refused or timed out"))
        with pytest.raises(ProviderConnectionError) as caught:
            run(server.model(), Prompt.of("hi"), mode)
        assert caught.value.provider == adapter.name
        assert caught.value.retryable
        assert caught.value.status_code is None

    @pytest.mark.parametrize("mode", MODES)
    def test_no_credentials_is_an_authentication_error_on_first_use(
        self, adapter: AdapterSpec, mode: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        for variable in adapter.credentials:
            monkeypatch.delenv(variable, raising=False)
        model = adapter.no_key_model()  # builds fine: the SDK client is made on first use
        with pytest.raises(ProviderAuthenticationError, match=adapter.no_key_message) as caught:
            run(model, Prompt([UserMessage(content="Hi")]), mode)
        assert caught.value.provider == adapter.name
        assert not caught.value.retryable

    @pytest.mark.parametrize("mode", ["stream", "astream"])
    def test_a_stream_abandoned_early_releases_its_http_response(
        self, adapter: AdapterSpec, mode: str
    ) -> None:
        server = adapter.endpoint(adapter.stream_final)
        model = server.model()
        prompt = Prompt([UserMessage(content="Weather?")])
        if mode == "stream":
            pieces = model.stream(prompt)
            first = next(pieces)
            assert not server.bodies[0].closed
            kept = pieces  # the caller still holds the generator: only close() may release it
            kept.close()
        else:

            async def read_one() -> ChatResponse:
                chunks = model.astream(prompt)
                piece: ChatResponse = await anext(chunks)
                assert not server.bodies[0].closed
                await chunks.aclose()
                return piece

            first = asyncio.run(read_one())
        assert first.message.content == "It is sunny"
        assert server.bodies[0].closed

    def test_importing_the_adapter_imports_no_provider_sdk(self, adapter: AdapterSpec) -> None:
        sdks = sorted({adapter.sdk, *adapter.unimported})
        code = (
            "import sys\n"
            f"from {adapter.module} import {adapter.class_name}\n"
            f"print(sorted(k for k in {sdks!r} if k in sys.modules))\n"
        )
        result = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        assert result.stdout.strip() == "[]"

    def test_a_missing_sdk_names_the_extra_to_install(
        self, adapter: AdapterSpec, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        model_class = getattr(importlib.import_module(adapter.module), adapter.class_name)
        monkeypatch.setitem(sys.modules, adapter.sdk, None)
        with pytest.raises(MissingExtraError) as caught:
            model_class("some-model", api_key="k")
        assert caught.value.extra == adapter.extra
        assert caught.value.package == adapter.package
        assert f"toolsearch[{adapter.extra}]" in str(caught.value)
