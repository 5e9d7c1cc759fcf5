"""Every exception toolsearch raises, in one hierarchy.

Catch :class:`ToolsearchError` to handle anything the library raises on purpose::

    ToolsearchError
    ├── ToolDefinitionError            a tool is defined wrongly (raised at registration)
    │   └── DuplicateToolNameError     two tools with one name in one request
    ├── ToolExecutionError             a tool ran and failed (``cause`` is the original error)
    │   └── ToolTransportError         the tool could not be reached or did not answer in time
    ├── InvalidToolArgumentsError      a model's arguments are not JSON or do not fit the schema
    ├── ToolCallLimitExceededError     a per-tool or total call limit was hit (action THROW)
    ├── ToolLoopLimitError             the tool loop ran more iterations than allowed
    ├── AdvisorChainError              the advisor chain is invalid (e.g. two tool advisors)
    ├── ChatModelError                 a chat model failed to answer
    │   └── ProviderError              a provider's API failed (``provider``, ``status_code``,
    │       │                              ``retryable``: 5xx too; ``retry_after``)
    │       ├── ProviderAuthenticationError  bad or missing credentials (401/403)
    │       ├── ProviderRateLimitError       rate limited or over quota (429); retryable
    │       └── ProviderConnectionError      the endpoint could not be reached or timed out
    ├── ChatMemoryError                a chat memory store failed
    ├── SessionStoreError              the shared session store (Redis) failed (retried)
    ├── ToolIndexError                 a tool index cannot answer (``code`` says why)
    │   ├── InvalidPatternError        a model-written regex does not parse (invalid_pattern)
    │   ├── PatternTooLongError        a model-written regex is over 200 characters
    │   └── IndexUnavailableError      an external engine (Milvus) is unreachable (retried)
    │       └── EmbeddingApiError      an embedding API failed (retried; ``provider``,
    │                                      ``url``, ``status_code``, ``retryable``)
    ├── CatalogError                   a large-catalog source or index artifact is unusable
    │   ├── CatalogSourceError         a catalog input file is malformed (names file and record)
    │   └── CatalogIndexError          a built index cannot be loaded (``path``)
    │       ├── IndexNotFoundError     no index at that path
    │       ├── ManifestMismatchError  built by another format version or embedder: rebuild
    │       └── IndexCorruptedError    a checksum or file does not match the manifest: rebuild
    ├── PluginError                    an installed extension (entry point) cannot be loaded
    ├── McpError                       talking to an MCP server failed
    │   ├── McpConfigError             an MCP server configuration is invalid
    │   ├── McpConnectionError         an MCP server could not be started or reached
    │   └── McpToolError               an MCP tool answered with an error result (``isError``)
    └── MissingExtraError              an optional dependency is not installed (also ImportError)

Errors a *model* makes (unknown tool names, malformed arguments) are not raised: the loop
turns them into tool results the model can read, so a model's mistake never kills a loop.

**The tool-call contract**, the same for every ``ToolCallback`` (``@tool`` functions,
``FunctionToolCallback.from_schema`` / ``from_input_type`` tools, MCP tools): ``call`` and
``acall`` return the tool's result text and nothing else (a failure is never returned as
text that looks like a result), and raise

- :class:`InvalidToolArgumentsError` when the arguments are not a JSON object or do not fit
  the input schema, checked before the tool runs (the model can fix them);
- :class:`ToolExecutionError` when the tool ran and failed: ``cause`` is a function's own
  exception, or an :class:`McpToolError` carrying an MCP tool's ``isError`` text;
- :class:`ToolTransportError`, a ``ToolExecutionError``, when the tool could not be run at
  all: its MCP server could not be started or reached, the connection dropped, the call
  timed out, the provider was closed (``cause`` says which).

``ToolCallingManager`` turns each into the ``ToolResponse`` text the model reads: argument
errors with a hint to fix them, execution errors through its
``ToolExecutionExceptionProcessor`` (by default ``"<cause type>: <cause message>"``, e.g.
``"ValueError: city not found"`` or ``"McpToolError: the disk is full"``), so the loop goes
on, unless the processor is configured to raise (``always_throw``, ``rethrow``). A
third-party callback that raises anything else is treated as a ``ToolExecutionError``.
"""

from __future__ import annotations

__all__ = [
    "UsageMemoryError",
    "AdvisorChainError",
    "CatalogError",
    "CatalogIndexError",
    "CatalogSourceError",
    "ChatMemoryError",
    "ChatModelError",
    "DuplicateToolNameError",
    "EmbeddingApiError",
    "IndexCorruptedError",
    "IndexNotFoundError",
    "IndexUnavailableError",
    "InvalidPatternError",
    "InvalidToolArgumentsError",
    "ManifestMismatchError",
    "McpConfigError",
    "McpConnectionError",
    "McpError",
    "McpProxyNotStartedError",
    "McpToolError",
    "MissingExtraError",
    "PatternTooLongError",
    "PluginError",
    "ProviderAuthenticationError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderRateLimitError",
    "SessionStoreError",
    "ToolCallLimitExceededError",
    "ToolDefinitionError",
    "ToolExecutionError",
    "ToolIndexError",
    "ToolLoopLimitError",
    "ToolTransportError",
    "ToolsearchError",
]


class ToolsearchError(Exception):
    """Base class of every error toolsearch raises on purpose."""


class ToolDefinitionError(ToolsearchError):
    """A tool definition is invalid. The message names the tool."""

    def __init__(self, tool_name: str, problem: str) -> None:
        self.tool_name = tool_name
        self.problem = problem
        super().__init__(f"tool {tool_name!r}: {problem}")


class DuplicateToolNameError(ToolDefinitionError):
    """Two tools with the same name were given in one request."""

    def __init__(self, tool_name: str) -> None:
        super().__init__(
            tool_name,
            "more than one tool has this name in the same request; tool names must be unique",
        )


class ToolExecutionError(ToolsearchError):
    """A tool ran and failed. ``cause`` (also ``__cause__``) is the original error: the
    function's exception, or an :class:`McpToolError` with an MCP tool's error text."""

    def __init__(self, tool_name: str, cause: BaseException) -> None:
        self.tool_name = tool_name
        self.cause = cause
        message = str(cause) or type(cause).__name__
        super().__init__(f"tool {tool_name!r} failed: {message}")
        self.__cause__ = cause


class ToolTransportError(ToolExecutionError):
    """A tool could not be run at all: its server could not be started or reached, the
    connection dropped, the call timed out, or its provider is closed. ``cause`` says which
    (an :class:`McpConnectionError`, a :class:`TimeoutError`, an :class:`McpError`)."""


class InvalidToolArgumentsError(ToolsearchError):
    """The arguments a model sent are not valid JSON or do not fit the tool's schema.

    Tools raise it; the loop always turns it into an error result for the model.
    """

    def __init__(self, tool_name: str, problem: str) -> None:
        self.tool_name = tool_name
        self.problem = problem
        super().__init__(f"invalid arguments for tool {tool_name!r}: {problem}")


class ToolCallLimitExceededError(ToolsearchError):
    """A tool was called more often than its limit allows since the last user message."""

    def __init__(self, tool_name: str | None, limit: int, *, total: bool = False) -> None:
        self.tool_name = tool_name
        self.limit = limit
        self.total = total
        if total:
            text = f"total tool call limit of {limit} calls since the last user message exceeded"
        else:
            text = (
                f"tool {tool_name!r} exceeded its limit of {limit} calls "
                "since the last user message"
            )
        super().__init__(text)


class ToolLoopLimitError(ToolsearchError):
    """The tool-calling loop ran more model calls than ``max_iterations`` allows."""

    def __init__(self, max_iterations: int) -> None:
        self.max_iterations = max_iterations
        super().__init__(
            f"the tool-calling loop stopped after {max_iterations} model calls "
            "without a final answer"
        )


class AdvisorChainError(ToolsearchError):
    """The advisor chain cannot be built as given."""


class ChatModelError(ToolsearchError):
    """A chat model failed to produce a response."""


class ChatMemoryError(ToolsearchError):
    """A chat memory repository failed to read or write."""


class ToolIndexError(ToolsearchError):
    """A tool index could not answer a search. ``code`` is a stable, machine-readable reason
    that the tool-search advisor returns to the model as the search tool's result."""

    code = "index_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)

    def to_tool_result(self) -> dict[str, str]:
        return {"error": self.code, "message": str(self)}


class InvalidPatternError(ToolIndexError):
    """A model-written regular expression could not be parsed."""

    code = "invalid_pattern"


class PatternTooLongError(ToolIndexError):
    """A model-written regular expression is longer than the allowed maximum."""

    code = "pattern_too_long"


class IndexUnavailableError(ToolIndexError):
    """An external search engine (a Milvus server) could not be reached or failed, after the
    index's retry policy gave up. The search tool returns it to the model as an error result,
    so a conversation goes on without the search instead of failing."""

    code = "index_unavailable"


class EmbeddingApiError(IndexUnavailableError):
    """An embedding API (OpenAI-compatible ``/embeddings``, Gemini) failed, after the
    embedder's retries for failures that may pass, or answered with unusable vectors.

    The message names the provider, the endpoint and the model, never the API key.
    ``status_code`` is the HTTP status (``None`` when the endpoint could not be reached or
    the answer was unusable); ``retryable`` says whether the same request may succeed later
    (rate limits, 5xx, timeouts). It surfaces where the embedding happens: registering a
    session's tools, or a build, fails with it; a search (the query's embedding) hands it
    to the model as an ``index_unavailable`` tool result, like a Milvus outage.
    """

    def __init__(
        self,
        provider: str,
        url: str,
        message: str,
        *,
        status_code: int | None = None,
        retryable: bool = False,
    ) -> None:
        self.provider = provider
        self.url = url
        self.status_code = status_code
        self.retryable = retryable
        super().__init__(message)


class SessionStoreError(ToolsearchError):
    """The shared session store (Redis) failed after its retries. A request cannot know which
    tools its conversation discovered, so it fails rather than silently forgetting them."""


class ProviderError(ChatModelError):
    """A provider's API failed. The message carries the provider's own message.

    ``retryable`` says whether sending the same request again may succeed: true for rate
    limits, unreachable endpoints and timeouts, server errors (5xx, Anthropic's 529
    overloaded) and 408/409, even when the SDK already retried (its retries are few and
    quick). ``retry_after`` is the wait in seconds the provider asked for (a
    ``Retry-After`` header, Google's ``RetryInfo``), or ``None``.
    """

    retryable = False

    def __init__(
        self,
        provider: str,
        message: str,
        *,
        status_code: int | None = None,
        retryable: bool | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.provider = provider
        self.status_code = status_code
        self.provider_message = message
        self.retry_after = retry_after
        if retryable is not None:
            self.retryable = retryable
        status = f" (HTTP {status_code})" if status_code is not None else ""
        super().__init__(f"{provider}{status}: {message}")


class ProviderAuthenticationError(ProviderError):
    """The provider rejected the credentials (HTTP 401 or 403)."""


class ProviderRateLimitError(ProviderError):
    """The provider rate-limited the request or the account is over quota (HTTP 429);
    ``retry_after`` is how long it asked to wait, when it said."""

    retryable = True


class ProviderConnectionError(ProviderError):
    """The provider's endpoint could not be reached, or the request timed out."""

    retryable = True


class CatalogError(ToolsearchError):
    """A large-catalog source file or a built catalog index cannot be used."""


class CatalogSourceError(CatalogError):
    """A catalog input (JSONL, MCP ``tools/list`` dump, OpenAPI spec) is malformed.

    The message names the file and, where known, the record or operation."""

    def __init__(self, source: str, problem: str) -> None:
        self.source = source
        self.problem = problem
        super().__init__(f"{source}: {problem}")


class CatalogIndexError(CatalogError):
    """A built catalog index at ``path`` cannot be loaded; the message says how to fix it."""

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"catalog index {path}: {problem}")


class IndexNotFoundError(CatalogIndexError):
    """There is no catalog index (no ``manifest.json``) at the given path."""


class ManifestMismatchError(CatalogIndexError):
    """The index was built with another format version or embedder than this process uses."""


class IndexCorruptedError(CatalogIndexError):
    """An artifact is missing or its checksum differs from the manifest."""


class PluginError(ToolsearchError):
    """An extension another distribution registers by entry point (an index kind, a provider,
    a command: :mod:`toolsearch.plugins`) cannot be used; the message names the
    distribution and the entry point, and the original error is the ``__cause__``."""

    def __init__(self, distribution: str, group: str, name: str, problem: str) -> None:
        self.distribution = distribution
        self.group = group
        self.name = name
        self.problem = problem
        source = f"distribution {distribution!r}" if distribution else "an unknown distribution"
        super().__init__(
            f"the plugin {name!r} (entry point of group {group!r} in {source}) cannot be "
            f"used: {problem}"
        )


class McpError(ToolsearchError):
    """Talking to an MCP server failed."""


class McpConfigError(McpError):
    """An MCP server configuration is invalid (the message names the server and field)."""


class McpConnectionError(McpError):
    """An MCP server could not be started or reached; the message names the server."""


class McpProxyNotStartedError(McpError):
    """The MCP search proxy was asked to search before ``await proxy.start()`` connected
    its servers and indexed their tools."""


class McpToolError(McpError):
    """An MCP server's tool answered with an error result (``isError``); the message is the
    tool's own text. MCP tools raise it as the ``cause`` of a :class:`ToolExecutionError`."""


class MissingExtraError(ToolsearchError, ImportError):
    """An optional dependency is missing; the message names the extra to install."""

    def __init__(self, feature: str, extra: str, package: str) -> None:
        self.feature = feature
        self.extra = extra
        self.package = package
        super().__init__(
            f"{feature} needs the optional package {package!r}; "
            f"install it with: pip install 'toolsearch[{extra}]'"
        )


class UsageMemoryError(ToolsearchError, ValueError):
    """A usage memory file (:class:`~toolsearch.indexes.learning.memory.UsageMemory`) that cannot be
    read: not JSON, not a usage memory, a newer version, or malformed; the message names
    the file."""
