"""Chat models: offline scripted models here; provider adapters arrive as extras."""

from toolsearch.models.function import FunctionChatModel, ScriptFunction
from toolsearch.models.test import TestChatModel

__all__ = ["FunctionChatModel", "ScriptFunction", "TestChatModel"]
