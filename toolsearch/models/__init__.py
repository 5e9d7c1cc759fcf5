"""Chat models: offline scripted models, and provider adapters behind extras.

``OpenAIChatModel``, ``OpenAIResponsesChatModel``, ``AnthropicChatModel`` and
``GeminiChatModel`` load lazily: importing
``toolsearch.models`` never imports a provider SDK. Constructing one imports its SDK and
raises :class:`~toolsearch.errors.MissingExtraError` (naming the extra) when it is missing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from toolsearch.models.function import FunctionChatModel, ScriptFunction
from toolsearch.models.test import TestChatModel

if TYPE_CHECKING:
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
    "ScriptFunction",
    "TestChatModel",
]

_LAZY = {
    "OpenAIChatModel": "toolsearch.models.openai",
    "OpenAIResponsesChatModel": "toolsearch.models.openai_responses",
    "AnthropicChatModel": "toolsearch.models.anthropic",
    "GeminiChatModel": "toolsearch.models.gemini",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolsearch.models' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
