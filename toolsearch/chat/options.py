"""Model settings plus the tools and tool context of one request."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from toolsearch.tools.collect import ensure_unique_names

if TYPE_CHECKING:
    from toolsearch.tools.callback import ToolCallback
    from toolsearch.tools.definition import ToolDefinition

__all__ = ["ChatOptions", "ToolChange"]

_SETTINGS = ("model", "temperature", "max_tokens", "top_p", "stop")


@dataclass(frozen=True)
class ToolChange:
    """A change to the tools the model holds, made in the middle of a conversation.

    ``kind`` is ``"add"`` or ``"remove"``; ``names`` are the tools' own names;
    ``after_message`` is how many of the prompt's messages came before the change (0: before
    the first). Adapters that can carry a change without moving the cached prefix
    (Anthropic's ``mid-conversation-tool-changes`` beta: a system-role message of
    ``tool_addition`` / ``tool_removal`` blocks over tools declared with ``defer_loading``)
    render it at that position, or at the first later one the API accepts (Anthropic:
    right before the next assistant turn, or at the end); every other adapter ignores it,
    since the request's tool list already holds the tools the model may call.

    A request keeps every change of its conversation so far (each is rendered again at its
    place, so the history stays a prefix), and declares every tool a change names: in
    ``tool_callbacks`` while the model may call it, else as a ``ToolDefinition`` in
    ``deferred_tools`` (a removed tool).
    """

    kind: Literal["add", "remove"]
    names: tuple[str, ...]
    after_message: int

    def __post_init__(self) -> None:
        if self.kind not in ("add", "remove"):
            raise ValueError(f"ToolChange kind must be 'add' or 'remove', not {self.kind!r}")
        if self.after_message < 0:
            raise ValueError("ToolChange.after_message must be 0 or more")
        object.__setattr__(self, "names", tuple(self.names))


@dataclass(frozen=True)
class ChatOptions:
    """Options of one chat request.

    Model settings (``model``, ``temperature``...) and ``extra`` (passed through to the
    provider as is); ``tool_callbacks`` the tools sent with the request; ``tool_names``
    names resolved through a ``ToolCallbackResolver``; ``tool_context`` data for tools,
    never shown to the model; ``internal_tool_execution_enabled=False`` asks the loop to
    return tool calls to the caller instead of running them.

    ``deferred_tools`` are tools to offer *deferred* from the first request, for providers
    that load a tool's definition only where a tool reference names it (Anthropic's
    ``defer_loading``): names of tools in ``tool_callbacks``, and/or
    ``ToolDefinition`` objects for tools the request does not
    carry (sent deferred after the others). Adapters without deferred loading ignore it.

    ``native_tool_search=True`` asks for the provider's own tool search over the deferred
    tools (Anthropic's server-side BM25 search, the Responses API's hosted ``tool_search``);
    adapters without one ignore it (their ``native_tool_search`` attribute is ``None``).

    ``tool_changes`` are the mid-conversation additions and removals of the request's
    tools, in order (:class:`ToolChange`), for adapters that keep the cached prefix across
    them; the others ignore them.
    """

    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    stop: tuple[str, ...] | None = None
    tool_callbacks: Sequence[ToolCallback] = ()
    tool_names: Sequence[str] = ()
    tool_context: Mapping[str, Any] = field(default_factory=dict)
    internal_tool_execution_enabled: bool | None = None
    deferred_tools: Sequence[ToolDefinition | str] = ()
    native_tool_search: bool | None = None
    tool_changes: Sequence[ToolChange] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tool_callbacks", tuple(self.tool_callbacks))
        object.__setattr__(self, "tool_names", tuple(self.tool_names))
        object.__setattr__(self, "deferred_tools", tuple(self.deferred_tools))
        object.__setattr__(self, "tool_changes", tuple(self.tool_changes))
        object.__setattr__(self, "tool_context", dict(self.tool_context))
        object.__setattr__(self, "extra", dict(self.extra))
        if self.stop is not None:
            object.__setattr__(self, "stop", tuple(self.stop))
        ensure_unique_names(self.tool_callbacks)

    def replace(self, **changes: Any) -> ChatOptions:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    def merged_with(self, override: ChatOptions | None) -> ChatOptions:
        """These options as defaults under ``override``.

        Settings set in ``override`` win; its tool callbacks and tool names **replace** these
        when it has any, and so do its deferred tools; tool context and ``extra`` merge key
        by key, ``override`` winning.
        """
        if override is None:
            return self
        changes: dict[str, Any] = {
            name: getattr(override, name)
            for name in _SETTINGS
            if getattr(override, name) is not None
        }
        if override.internal_tool_execution_enabled is not None:
            changes["internal_tool_execution_enabled"] = override.internal_tool_execution_enabled
        if override.tool_callbacks or override.tool_names:
            changes["tool_callbacks"] = override.tool_callbacks
            changes["tool_names"] = override.tool_names
        if override.deferred_tools:
            changes["deferred_tools"] = override.deferred_tools
        if override.tool_changes:
            changes["tool_changes"] = override.tool_changes
        if override.native_tool_search is not None:
            changes["native_tool_search"] = override.native_tool_search
        changes["tool_context"] = {**self.tool_context, **override.tool_context}
        changes["extra"] = {**self.extra, **override.extra}
        return dataclasses.replace(self, **changes)

    def model_settings(self) -> dict[str, Any]:
        """The provider-facing settings that are set, plus ``extra``."""
        settings = {n: getattr(self, n) for n in _SETTINGS if getattr(self, n) is not None}
        return {**settings, **self.extra}
