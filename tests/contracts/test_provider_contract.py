"""The provider-adapter contract (``toolsearch.testing.ProviderContract``) over the OpenAI
(Chat Completions and Responses), Anthropic and Gemini chat models.

Each adapter runs on its real SDK over a fake endpoint (``tests/providers/fakes.py``) that
serves the provider's fixtures and records what was sent; ``provider_adapters.py`` says
what each one's fixtures and wire format are. An adapter whose SDK is missing skips with
the extra to install.

What only one provider does (its exact wire format, OpenAI-compatible servers, Anthropic's
thinking blocks, prompt caching and ``defer_loading``, Gemini's thought signatures and
local call ids...) is tested in ``tests/providers/test_provider_<name>.py``.
"""

from __future__ import annotations

from provider_adapters import ANTHROPIC, GEMINI, OPENAI, RESPONSES

from toolsearch.testing import ProviderContract


class TestOpenAI(ProviderContract):
    spec = OPENAI


class TestAnthropic(ProviderContract):
    spec = ANTHROPIC


class TestGemini(ProviderContract):
    spec = GEMINI


class TestOpenAIResponses(ProviderContract):
    spec = RESPONSES
