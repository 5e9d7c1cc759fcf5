"""toolsearch: register hundreds or thousands of tools; send the model only the few it needs.

The core is a complete tool-calling loop (``@tool`` functions, ``ChatClient`` with an
ordered advisor chain, ``ToolCallingAdvisor`` and ``ToolCallingManager``, chat memory).

``import toolsearch`` loads only the version, the errors and the thread settings; every
other public name loads its module on first use (:pep:`562`), so a program that needs one
part does not pay for the others (the chat models, the loop, the search layer: ~270
modules with pydantic). The two wirings the package makes happen when the modules they
wire load, however they are imported (see ``_install`` below): OpenTelemetry tracing
attaches when the core's hook module ``toolsearch.observe`` loads, and the settings-driven
tool advisor installs when ``toolsearch.loop.client`` loads.
"""

import sys as _sys
import threading as _threading
from collections.abc import Callable as _Callable
from collections.abc import Sequence as _Sequence
from importlib.abc import Loader as _Loader
from importlib.abc import MetaPathFinder as _MetaPathFinder
from importlib.machinery import ModuleSpec as _ModuleSpec
from types import ModuleType as _ModuleType
from typing import TYPE_CHECKING, Any

# first, before anything can load torch or FAISS: OpenMP's idle threads sleep instead of
# spinning against other processes (OMP_WAIT_POLICY=PASSIVE unless set; see the module)
import toolsearch.indexes.threads  # noqa: F401  (standard library only)
from toolsearch import _moved
from toolsearch._version import __version__
from toolsearch.errors import (
    AdvisorChainError,
    ChatMemoryError,
    ChatModelError,
    DuplicateToolNameError,
    InvalidToolArgumentsError,
    MissingExtraError,
    ToolCallLimitExceededError,
    ToolDefinitionError,
    ToolExecutionError,
    ToolLoopLimitError,
    ToolsearchError,
    ToolTransportError,
)

if TYPE_CHECKING:
    from toolsearch.chat import (
        AssistantMessage,
        ChatModel,
        ChatOptions,
        ChatResponse,
        Message,
        Prompt,
        SystemMessage,
        ToolCall,
        ToolResponse,
        ToolResponseMessage,
        ToolResultText,
        ToolSearchHit,
        Usage,
        UserMessage,
    )
    from toolsearch.loop import (
        BaseAdvisor,
        ChatClient,
        ChatClientRequest,
        ChatClientResponse,
        DefaultToolExecutionExceptionProcessor,
        LimitExceededAction,
        ToolCallingAdvisor,
        ToolCallingManager,
        ToolCallLimits,
        ToolExecutionResult,
    )
    from toolsearch.memory import (
        CONVERSATION_ID,
        InMemoryChatMemoryRepository,
        MessageChatMemoryAdvisor,
        MessageWindowChatMemory,
    )
    from toolsearch.memory.sqlite import (
        SqliteChatMemoryRepository,
    )
    from toolsearch.search import (
        ToolSearchToolCallingAdvisor,
    )
    from toolsearch.search.options import (
        ToolSearchOptions,
    )
    from toolsearch.tools import (
        AugmentedArgumentEvent,
        AugmentedToolCallback,
        FunctionToolCallback,
        JsonResultConverter,
        ResultConverter,
        ToolCallback,
        ToolContext,
        ToolDefinition,
        ToolMetadata,
        ToolParam,
        augment_tools,
        tool,
        tool_callbacks,
    )

_LAZY = {
    "AssistantMessage": "toolsearch.chat",
    "AugmentedArgumentEvent": "toolsearch.tools",
    "AugmentedToolCallback": "toolsearch.tools",
    "BaseAdvisor": "toolsearch.loop",
    "CONVERSATION_ID": "toolsearch.memory",
    "ChatClient": "toolsearch.loop",
    "ChatClientRequest": "toolsearch.loop",
    "ChatClientResponse": "toolsearch.loop",
    "ChatModel": "toolsearch.chat",
    "ChatOptions": "toolsearch.chat",
    "ChatResponse": "toolsearch.chat",
    "DefaultToolExecutionExceptionProcessor": "toolsearch.loop",
    "FunctionToolCallback": "toolsearch.tools",
    "InMemoryChatMemoryRepository": "toolsearch.memory",
    "JsonResultConverter": "toolsearch.tools",
    "LimitExceededAction": "toolsearch.loop",
    "Message": "toolsearch.chat",
    "MessageChatMemoryAdvisor": "toolsearch.memory",
    "MessageWindowChatMemory": "toolsearch.memory",
    "Prompt": "toolsearch.chat",
    "ResultConverter": "toolsearch.tools",
    "SqliteChatMemoryRepository": "toolsearch.memory.sqlite",
    "SystemMessage": "toolsearch.chat",
    "ToolCall": "toolsearch.chat",
    "ToolCallLimits": "toolsearch.loop",
    "ToolCallback": "toolsearch.tools",
    "ToolCallingAdvisor": "toolsearch.loop",
    "ToolCallingManager": "toolsearch.loop",
    "ToolContext": "toolsearch.tools",
    "ToolDefinition": "toolsearch.tools",
    "ToolExecutionResult": "toolsearch.loop",
    "ToolMetadata": "toolsearch.tools",
    "ToolParam": "toolsearch.tools",
    "ToolResponse": "toolsearch.chat",
    "ToolResponseMessage": "toolsearch.chat",
    "ToolResultText": "toolsearch.chat",
    "ToolSearchHit": "toolsearch.chat",
    "ToolSearchOptions": "toolsearch.search.options",
    "ToolSearchToolCallingAdvisor": "toolsearch.search",
    "Usage": "toolsearch.chat",
    "UserMessage": "toolsearch.chat",
    "augment_tools": "toolsearch.tools",
    "tool": "toolsearch.tools",
    "tool_callbacks": "toolsearch.tools",
}
"""Public names and the module each loads from on first use."""


# -- wiring ---------------------------------------------------------------------------
# ``import toolsearch`` is lazy (see the package docstring), yet two things must happen
# whenever the parts they concern are used, however those parts were imported
# (``from toolsearch import ChatClient`` or ``from toolsearch.loop.client import
# ChatClient``):
#
# * OpenTelemetry tracing attaches to the core's hooks
#   (:func:`toolsearch.telemetry.observer.instrument`) once ``toolsearch.observe``, the
#   module every emitting part imports, has loaded;
# * ``ChatClientBuilder.build()`` gets the settings-driven tool advisor
#   (``TOOLSEARCH_TOOL_SEARCH__ENABLED``) once ``toolsearch.loop.client`` has loaded; the
#   loop layer never imports the search layer or the settings itself.
#
# ``_install`` puts one finder at the front of ``sys.meta_path``. It lets the other
# finders find every ``toolsearch.*`` module and counts, per thread, the package modules
# whose code is running; a wiring runs when that count falls back to zero, so the import
# that loaded its module has finished entirely (the telemetry imports chat modules that may
# still be half-initialized while ``toolsearch.observe`` loads, so it cannot run earlier).


def _advisor_from_settings() -> Any:
    from toolsearch.settings import configured_advisor  # read when a client is built

    return configured_advisor()


def _wire_telemetry(_module: _ModuleType) -> None:
    from toolsearch.telemetry.observer import instrument

    instrument()


def _wire_client(module: _ModuleType) -> None:
    module.set_auto_tool_advisor_provider(_advisor_from_settings)


_ACTIONS: dict[str, _Callable[[_ModuleType], None]] = {
    "toolsearch.observe": _wire_telemetry,
    "toolsearch.loop.client": _wire_client,
}

_LOCAL = _threading.local()


def _finished(name: str) -> None:
    """A package module's code has run: wire it (later, if an import is still running)."""
    pending: list[str] = _LOCAL.__dict__.setdefault("pending", [])
    if name in _ACTIONS:
        pending.append(name)
    if getattr(_LOCAL, "depth", 0) == 0:
        while pending:
            done = pending.pop(0)
            module = _sys.modules.get(done)
            if module is not None:
                _ACTIONS[done](module)


class _Counted(_Loader):
    """The found loader, counting the package modules whose code is running."""

    def __init__(self, inner: _Loader) -> None:
        self._inner = inner

    def create_module(self, spec: _ModuleSpec) -> _ModuleType | None:
        return self._inner.create_module(spec)

    def exec_module(self, module: _ModuleType) -> None:
        _LOCAL.depth = getattr(_LOCAL, "depth", 0) + 1
        try:
            self._inner.exec_module(module)
        finally:
            _LOCAL.depth -= 1
        _finished(module.__name__)

    def __getattr__(self, name: str) -> Any:  # get_source, get_filename...: the inner's
        return getattr(self._inner, name)


class _PackageFinder(_MetaPathFinder):
    def find_spec(
        self, fullname: str, path: _Sequence[str] | None, target: _ModuleType | None = None
    ) -> _ModuleSpec | None:
        if not fullname.startswith("toolsearch."):
            return None
        for finder in _sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Counted(spec.loader)
                return spec
        return None


_FINDER = _PackageFinder()


def _install() -> None:
    """Wire the modules loaded already; wire the others when they load (idempotent)."""
    if _FINDER not in _sys.meta_path:
        _sys.meta_path.insert(0, _FINDER)
    for name, action in _ACTIONS.items():
        module = _sys.modules.get(name)
        if module is not None:
            action(module)


_install()
_moved.install()  # old paths of modules that moved into family folders (a table, no imports)

__all__ = [
    "CONVERSATION_ID",
    "AdvisorChainError",
    "AssistantMessage",
    "AugmentedArgumentEvent",
    "AugmentedToolCallback",
    "BaseAdvisor",
    "ChatClient",
    "ChatClientRequest",
    "ChatClientResponse",
    "ChatMemoryError",
    "ChatModel",
    "ChatModelError",
    "ChatOptions",
    "ChatResponse",
    "DefaultToolExecutionExceptionProcessor",
    "DuplicateToolNameError",
    "FunctionToolCallback",
    "InMemoryChatMemoryRepository",
    "InvalidToolArgumentsError",
    "JsonResultConverter",
    "LimitExceededAction",
    "Message",
    "MessageChatMemoryAdvisor",
    "MessageWindowChatMemory",
    "MissingExtraError",
    "Prompt",
    "ResultConverter",
    "SqliteChatMemoryRepository",
    "SystemMessage",
    "ToolCall",
    "ToolCallLimitExceededError",
    "ToolCallLimits",
    "ToolCallback",
    "ToolCallingAdvisor",
    "ToolCallingManager",
    "ToolContext",
    "ToolDefinition",
    "ToolDefinitionError",
    "ToolExecutionError",
    "ToolExecutionResult",
    "ToolLoopLimitError",
    "ToolMetadata",
    "ToolParam",
    "ToolResponse",
    "ToolResponseMessage",
    "ToolResultText",
    "ToolSearchHit",
    "ToolSearchOptions",
    "ToolSearchToolCallingAdvisor",
    "ToolTransportError",
    "ToolsearchError",
    "Usage",
    "UserMessage",
    "__version__",
    "augment_tools",
    "tool",
    "tool_callbacks",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
