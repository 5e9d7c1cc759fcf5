"""The provider adapters: one row per adapter, and nothing else lists them.

:data:`PROVIDERS` is the table. Each :class:`ProviderRow` names the adapter (its class as
``"module:attribute"``, imported only when asked for, so importing ``toolsearch.models``
imports no SDK), the extra and SDK it needs, and the rules the rest of toolsearch keys on
per provider: the tool names its API accepts (a :class:`~toolsearch.models.wire_names.
NameRule`), how it renders a bare tool list (what :meth:`toolsearch.integrations.
LoopSession.tools` sends), how it keeps discovered tools out of the cached prompt prefix,
its own server-side tool search (the advisor's ``search="native"``), the API-key variables
it reads and its ``gen_ai.provider.name``.

What reads it: ``toolsearch.models`` (the lazy adapter names), the SDK-loop integration,
the live benchmark's ``PROVIDER:MODEL``, and the table in docs/providers.md (a test compares
them, and checks each row against its adapter's own attributes).

An adapter of your own subclasses :class:`~toolsearch.models.ProviderChatModel`; a row here
makes it known by name, and so does a row your package registers by entry point (group
``toolsearch.providers``, :mod:`toolsearch.plugins`): :func:`provider` reads those only
for a name that is not in :data:`PROVIDERS`, :func:`provider_names` when it lists them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolsearch import plugins
from toolsearch.models.wire_names import ANTHROPIC_NAMES, GEMINI_NAMES, OPENAI_NAMES, NameRule

if TYPE_CHECKING:
    from toolsearch.models.wire_names import WireNames
    from toolsearch.tools.definition import ToolDefinition

__all__ = ["PROVIDERS", "ProviderRow", "ToolList", "provider", "provider_names"]

ToolList = Callable[["Sequence[ToolDefinition]", "WireNames | None"], list[dict[str, Any]]]
"""Renders tool definitions as the provider's ``tools`` list, under their wire names."""


def _load(reference: str) -> Any:
    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module), attribute)


@dataclass(frozen=True)
class ProviderRow:
    """One provider adapter and the rules toolsearch keys on for it."""

    name: str
    """The adapter's ``provider`` (``"openai-responses"``): ``PROVIDER:MODEL`` specs, the
    SDK loop's ``provider=``, search-result name rules."""
    adapter: str
    """The adapter class, ``"module:attribute"``."""
    extra: str
    """The extra that installs its SDK (``toolsearch[openai]``)."""
    sdk: str
    """The SDK's distribution (``google-genai``)."""
    api: str
    """The API it speaks, one line."""
    names: NameRule
    """The tool names its API accepts (:mod:`toolsearch.models.wire_names`)."""
    tool_list: str
    """``"module:attribute"`` of its :data:`ToolList`."""
    api_key_variables: tuple[str, ...]
    """The environment variables its SDK reads the API key from (any one is enough)."""
    otel_name: str
    """``gen_ai.provider.name`` in its spans and metrics."""
    deferral: str | None = None
    """How discovered tools reach the model without changing the cached prefix (the
    adapter's ``tool_search`` default); ``None``: they join the ``tools`` list."""
    native_search: str | None = None
    """Its own tool search (the adapter's ``native_tool_search``, for the advisor's
    ``search="native"``); ``None``: it has none."""

    @property
    def adapter_name(self) -> str:
        return self.adapter.partition(":")[2]

    def adapter_class(self) -> type[Any]:
        """The adapter class (its module imported now; its SDK only when constructed)."""
        cls: type[Any] = _load(self.adapter)
        return cls

    def render_tools(
        self, tools: Sequence[ToolDefinition], names: WireNames | None = None
    ) -> list[dict[str, Any]]:
        """``tools`` as this provider's ``tools`` list (:attr:`tool_list`)."""
        render: ToolList = _load(self.tool_list)
        return render(tools, names)


PROVIDERS: tuple[ProviderRow, ...] = (
    ProviderRow(
        "openai",
        "toolsearch.models.openai:OpenAIChatModel",
        "openai",
        "openai",
        "chat completions (`/chat/completions`), and any OpenAI-compatible server",
        OPENAI_NAMES,
        "toolsearch.models.openai:openai_tools",
        ("OPENAI_API_KEY",),
        "openai",
    ),
    ProviderRow(
        "openai-responses",
        "toolsearch.models.openai_responses:OpenAIResponsesChatModel",
        "openai",
        "openai",
        "Responses (`/responses`)",
        OPENAI_NAMES,
        "toolsearch.models.openai_responses:responses_tools",
        ("OPENAI_API_KEY",),
        "openai-responses",
        deferral="client",
        native_search="hosted",
    ),
    ProviderRow(
        "anthropic",
        "toolsearch.models.anthropic:AnthropicChatModel",
        "anthropic",
        "anthropic",
        "Messages (`/v1/messages`)",
        ANTHROPIC_NAMES,
        "toolsearch.models.anthropic:anthropic_tools",
        ("ANTHROPIC_API_KEY",),
        "anthropic",
        deferral="defer_loading",
        native_search="bm25",
    ),
    ProviderRow(
        "gemini",
        "toolsearch.models.gemini:GeminiChatModel",
        "gemini",
        "google-genai",
        "Gemini API / Vertex AI (`generateContent`)",
        GEMINI_NAMES,
        "toolsearch.models.gemini:gemini_tools",
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        "gcp.gemini",
    ),
)
"""Every provider adapter, in the order docs and messages list them."""

_BY_NAME = {row.name: row for row in PROVIDERS}


def _plugin_rows() -> tuple[ProviderRow, ...]:
    return plugins.load_rows(
        plugins.PROVIDERS_GROUP, ProviderRow, lambda row: row.name, frozenset(_BY_NAME)
    )


def provider_names() -> tuple[str, ...]:
    """Every provider's name, in table order (installed packages' providers last)."""
    return (*_BY_NAME, *(row.name for row in _plugin_rows()))


def provider(name: str) -> ProviderRow:
    """The row of ``name`` (an installed package's row imported now); ``ValueError``
    listing the providers, :class:`~toolsearch.errors.PluginError` for an installed
    provider that cannot be loaded."""
    row = _BY_NAME.get(name)
    if row is not None:
        return row
    plugin = plugins.find_plugin(plugins.PROVIDERS_GROUP, name)
    if plugin is None:
        raise ValueError(f"unknown provider {name!r}: use one of {', '.join(provider_names())}")
    return plugins.load_row(plugin, ProviderRow, lambda row: row.name)
