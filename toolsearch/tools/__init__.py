"""Tools: definitions, the ``@tool`` decorator, function-backed callbacks, conversion,
tool-argument augmentation (:mod:`toolsearch.tools.augment`), and the tool-name rules every
source of tools follows (:mod:`toolsearch.tools.names`)."""

from toolsearch.tools.augment import AugmentedArgumentEvent, AugmentedToolCallback, augment_tools
from toolsearch.tools.callback import ToolCallback
from toolsearch.tools.collect import ensure_unique_names, tool_callbacks
from toolsearch.tools.context import ToolContext
from toolsearch.tools.converter import JsonResultConverter, ResultConverter
from toolsearch.tools.decorator import tool
from toolsearch.tools.definition import ToolAnnotations, ToolDefinition, ToolMetadata
from toolsearch.tools.function import FunctionToolCallback
from toolsearch.tools.params import ToolParam

__all__ = [
    "AugmentedArgumentEvent",
    "AugmentedToolCallback",
    "FunctionToolCallback",
    "JsonResultConverter",
    "ResultConverter",
    "ToolAnnotations",
    "ToolCallback",
    "ToolContext",
    "ToolDefinition",
    "ToolMetadata",
    "ToolParam",
    "augment_tools",
    "ensure_unique_names",
    "tool",
    "tool_callbacks",
]
