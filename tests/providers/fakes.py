"""The three provider adapters built on their real SDKs over a fake endpoint.

Shared by the per-provider tests (``tests/providers``) and the provider-adapter contract
(``tests/contracts/test_provider_contract.py``). Each endpoint is a ``ProviderEndpoint``
(``toolsearch.testing``): it answers with the provider's fixture files
(``tests/fixtures/providers/<provider>``) in order and records every request, which SDK
client sent each request (``sides``: ``"sync"`` or ``"async"``) and each response body it
served (``bodies``), so a test can check that a stream the caller abandoned was released.

Nothing here imports an SDK at import time: an endpoint skips the test (with the extra to
install) when its SDK is missing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolsearch.testing import ProviderEndpoint

FIXTURES = Path(__file__).parents[1] / "fixtures" / "providers"


class Endpoint(ProviderEndpoint):
    """A toolsearch adapter's endpoint, serving the fixtures of ``tests/fixtures/providers``."""

    def __init__(self, *replies: str | tuple[int, str] | Exception) -> None:
        super().__init__(*replies)
        self.fixtures = FIXTURES / self.provider


class OpenAIEndpoint(Endpoint):
    provider = sdk = extra = "openai"
    base_url = "http://llm.test/v1"
    model_name = "gpt-4o-mini"

    def sync_client(self) -> Any:
        import openai

        return openai.OpenAI(
            api_key="sk-test",
            base_url=self.base_url,
            http_client=self.http.Client(transport=self.transport("sync")),
            max_retries=0,
        )

    def async_client(self) -> Any:
        import openai

        return openai.AsyncOpenAI(
            api_key="sk-test",
            base_url=self.base_url,
            http_client=self.http.AsyncClient(transport=self.transport("async")),
            max_retries=0,
        )

    def model(self, *, sync_only: bool = False, **kwargs: Any) -> Any:
        from toolsearch.models import OpenAIChatModel

        clients = {"client": self.sync_client()}
        if not sync_only:
            clients["async_client"] = self.async_client()
        return OpenAIChatModel(self.model_name, **clients, **kwargs)


class OpenAIResponsesEndpoint(OpenAIEndpoint):
    """The Responses API, strict: a request body the API would refuse (see
    ``responses_strict.py``) is answered with a 400 naming the problems, whatever fixture
    was next; ``refused`` keeps each refused body's problems."""

    provider = "openai-responses"
    model_name = "gpt-5.4-mini"

    def __init__(self, *replies: str | tuple[int, str] | Exception) -> None:
        super().__init__(*replies)
        self.fixtures = FIXTURES / self.provider
        self.refused: list[list[str]] = []

    def __call__(self, request: Any) -> Any:
        import json

        from providers.responses_strict import problems

        body = json.loads(request.content) if request.content else {}
        found = problems(body) if str(request.url).endswith("/responses") else []
        if not found:
            return super().__call__(request)
        self.refused.append(found)
        self.requests.append(body)
        self.raw.append(bytes(request.content))
        self.urls.append(str(request.url))
        self.headers.append(dict(request.headers))
        error = {"error": {"message": "; ".join(found), "type": "invalid_request_error"}}
        return self.http.Response(
            400, content=json.dumps(error).encode(), headers={"content-type": "application/json"}
        )

    def model(self, *, sync_only: bool = False, **kwargs: Any) -> Any:
        from toolsearch.models import OpenAIResponsesChatModel

        clients = {"client": self.sync_client()}
        if not sync_only:
            clients["async_client"] = self.async_client()
        return OpenAIResponsesChatModel(self.model_name, **clients, **kwargs)


class AnthropicEndpoint(Endpoint):
    provider = sdk = extra = "anthropic"
    base_url = "http://claude.test"
    model_name = "claude-sonnet-4-6"

    def model(self, *, sync_only: bool = False, **kwargs: Any) -> Any:
        import anthropic

        from toolsearch.models import AnthropicChatModel

        clients = {
            "client": anthropic.Anthropic(
                api_key="sk-ant-test",
                base_url=self.base_url,
                http_client=self.http.Client(transport=self.transport("sync")),
                max_retries=0,
            )
        }
        if not sync_only:
            clients["async_client"] = anthropic.AsyncAnthropic(
                api_key="sk-ant-test",
                base_url=self.base_url,
                http_client=self.http.AsyncClient(transport=self.transport("async")),
                max_retries=0,
            )
        return AnthropicChatModel(self.model_name, **clients, **kwargs)


class AnthropicStrictEndpoint(AnthropicEndpoint):
    """The Messages API, strict about the mid-conversation tool changes (see
    ``anthropic_strict.py``): a request the API would refuse is answered with a 400 naming
    the problems, whatever fixture was next; ``refused`` keeps each refused request's
    problems (``raw`` holds every request body's bytes, refused ones too).
    ``accepts_changes=False`` is a model or endpoint without the beta,
    ``accepts_tool_search=False`` one without tool search."""

    def __init__(
        self,
        *replies: str | tuple[int, str] | Exception,
        accepts_changes: bool = True,
        accepts_tool_search: bool = True,
    ) -> None:
        super().__init__(*replies)
        self.accepts_changes = accepts_changes
        self.accepts_tool_search = accepts_tool_search
        self.refused: list[list[str]] = []

    def __call__(self, request: Any) -> Any:
        import json

        from providers.anthropic_strict import problems

        body = json.loads(request.content) if request.content else {}
        headers = dict(request.headers)
        found = problems(
            body,
            headers,
            accepts_changes=self.accepts_changes,
            accepts_tool_search=self.accepts_tool_search,
        )
        if not found:
            return super().__call__(request)
        self.refused.append(found)
        self.requests.append(body)
        self.raw.append(bytes(request.content))
        self.urls.append(str(request.url))
        self.headers.append(headers)
        error = {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "; ".join(found)},
        }
        return self.http.Response(
            400, content=json.dumps(error).encode(), headers={"content-type": "application/json"}
        )


class GeminiEndpoint(Endpoint):
    provider = "gemini"
    sdk = "google.genai"
    extra = "gemini"
    model_name = "gemini-2.5-flash"

    def model(self, **kwargs: Any) -> Any:
        from google import genai

        from toolsearch.models import GeminiChatModel

        client = genai.Client(
            api_key="gemini-test-key",
            http_options=genai.types.HttpOptions(
                httpx_client=self.http.Client(transport=self.transport("sync")),
                httpx_async_client=self.http.AsyncClient(transport=self.transport("async")),
            ),
        )
        return GeminiChatModel(self.model_name, client=client, **kwargs)
