"""Chat models: offline scripted models, and provider adapters behind extras.

The adapters are the rows of :data:`toolsearch.models.providers.PROVIDERS`
(``OpenAIChatModel``, ``OpenAIResponsesChatModel``, ``AnthropicChatModel``,
``GeminiChatModel``); they load lazily: importing ``toolsearch.models`` never imports a
provider SDK. Constructing one imports its SDK and raises
:class:`~toolsearch.errors.MissingExtraError` (naming the extra) when it is missing.
``ProviderChatModel`` is the base class an adapter of your own subclasses.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from toolsearch.models.function import FunctionChatModel, ScriptFunction
from toolsearch.models.providers import PROVIDERS as _PROVIDERS
from toolsearch.models.test import TestChatModel

if TYPE_CHECKING:
    from toolsearch.models._provider import ProviderChatModel
    from toolsearch.models.anthropic import AnthropicChatModel
    from toolsearch.models.gemini import GeminiChatModel
    from toolsearch.models.openai import OpenAIChatModel
    from toolsearch.models.openai_responses import OpenAIResponsesChatModel

__all__ = [
    "AnthropicChatModel",
    "FunctionChatModel",
    "GeminiChatModel",
    "OpenAIChatModel",
    "OpenAIResponsesChatModel",
    "ProviderChatModel",
    "ScriptFunction",
    "TestChatModel",
]

_LAZY = {
    "ProviderChatModel": "toolsearch.models._provider",
    **{row.adapter_name: row.adapter.partition(":")[0] for row in _PROVIDERS},
}
"""Lazy names: the base class, and every adapter of the providers table."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolsearch.models' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
