"""Which MCP servers to talk to: a small config of named stdio and streamable-HTTP servers.

One entry per server, as the reference's ``connections.<name>`` properties: a stdio server
has ``command`` (and ``args``, ``env``, ``cwd``), an HTTP server has ``url`` (and
``headers``). The same shape loads from a dict, a TOML file (``[servers.<name>]`` tables)
or a JSON file; JSON files may use the desktop-assistant key ``mcpServers`` instead of
``servers``, so an existing assistant config can be pointed at directly.

``${NAME}`` in ``env``, ``headers``, ``args`` and ``url`` is replaced by the environment
variable ``NAME`` when the config is loaded (``${NAME:-default}`` gives a default), so
tokens stay out of the file. This module does not import the ``mcp`` SDK.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from toolsearch.errors import McpConfigError

__all__ = [
    "HttpServerConfig",
    "McpConfig",
    "McpServerConfig",
    "ProxySettings",
    "ServerConfig",
    "ServersArgument",
    "StdioServerConfig",
    "as_config",
    "load_mcp_config",
    "validate_tool_names",
]

_SERVER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class _ServerBase(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout: float = Field(60.0, gt=0)
    """Seconds one tool call may take before it fails as timed out (``ToolTransportError``)."""
    connect_timeout: float = Field(30.0, gt=0)
    """Seconds to start (or reach) the server and finish the MCP handshake."""
    include_tools: tuple[str, ...] = ()
    """Glob patterns (``read_*``) of the server's tool names to expose; empty means all."""
    exclude_tools: tuple[str, ...] = ()
    """Glob patterns of tool names never to expose (wins over ``include_tools``)."""
    enabled: bool = True

    def __repr_args__(self) -> Any:
        """Names of secret-bearing fields' entries, never their values (see mcp.redact)."""
        for name, value in super().__repr_args__():
            if name == "args":
                yield name, f"<{len(value)} arguments>"
            elif name in ("env", "headers"):
                yield name, {key: "***" for key in value}
            elif name == "url":
                from toolsearch.mcp.redact import url_without_secrets

                yield name, url_without_secrets(value)
            else:
                yield name, value

    def exposes(self, tool_name: str) -> bool:
        """Whether ``include_tools`` / ``exclude_tools`` let this tool through."""
        if any(fnmatch.fnmatchcase(tool_name, p) for p in self.exclude_tools):
            return False
        return not self.include_tools or any(
            fnmatch.fnmatchcase(tool_name, p) for p in self.include_tools
        )


class StdioServerConfig(_ServerBase):
    """A server started as a subprocess and spoken to over its stdin/stdout."""

    transport: Literal["stdio"] = "stdio"
    command: str = Field(min_length=1)
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)
    """Added to a small safe default environment (PATH, HOME, ...), not to the whole one."""
    cwd: str | None = None
    max_message_bytes: int = Field(16 * 1024 * 1024, ge=1024)
    """The largest message read from the server (16 MiB): a longer answer is dropped as it
    is read and its call fails with an error saying so (see :mod:`toolsearch.mcp.stdio`)."""


class HttpServerConfig(_ServerBase):
    """A server reached over streamable HTTP at ``url`` (for example ``http://host/mcp``)."""

    transport: Literal["http"] = "http"
    url: str = Field(min_length=1)
    headers: dict[str, str] = Field(default_factory=dict)

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("url must start with http:// or https://")
        return value


McpServerConfig = Annotated[StdioServerConfig | HttpServerConfig, Field(discriminator="transport")]
"""One server: :class:`StdioServerConfig` or :class:`HttpServerConfig`."""

ServerConfig = StdioServerConfig | HttpServerConfig


def validate_tool_names(search_tool_name: str, call_tool_name: str) -> None:
    """Raise ``ValueError`` unless both are valid MCP tool names (1 to 128 of ``A-Z a-z
    0-9 _ - .``) and differ."""
    for option, value in (
        ("search_tool_name", search_tool_name),
        ("call_tool_name", call_tool_name),
    ):
        if not isinstance(value, str) or not _TOOL_NAME.match(value):
            raise ValueError(
                f"{option} {value!r} must be 1 to 128 letters, digits, '_', '-' or '.'"
            )
    if search_tool_name == call_tool_name:
        raise ValueError(f"search_tool_name and call_tool_name are both {search_tool_name!r}")


class ProxySettings(BaseModel):
    """``[proxy]``: defaults of ``toolsearch mcp proxy`` (command-line options win)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    search_tool_name: str = "search_tools"
    call_tool_name: str = "call_tool"
    auth_token_env: str | None = None
    """The environment variable holding the bearer token the HTTP transport requires."""

    index: str = "bm25"
    """An index spec: a kind of :data:`toolsearch.indexes.kinds.KINDS`, with an embedder
    after a colon where the kind takes one (``hybrid:static``)."""
    max_results: int = Field(default=5, ge=1, le=10)
    prefix: Literal["auto", "always", "never"] = "auto"
    name: str = "toolsearch-proxy"
    strict: bool = False
    """Fail at start-up when a server cannot be reached (otherwise it is left out)."""

    @field_validator("index")
    @classmethod
    def _index_kind(cls, value: str) -> str:
        from toolsearch.indexes import kinds

        kinds.index_kind(value.partition(":")[0])  # ValueError listing the kinds
        return value

    @model_validator(mode="after")
    def _tool_names(self) -> ProxySettings:
        validate_tool_names(self.search_tool_name, self.call_tool_name)
        if self.auth_token_env is not None and not _ENV_NAME.match(self.auth_token_env):
            raise ValueError(f"auth_token_env {self.auth_token_env!r} is not a variable name")
        return self


class McpConfig(BaseModel):
    """Named MCP servers, in the order given, plus optional proxy settings."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    servers: dict[str, McpServerConfig] = Field(default_factory=dict)
    proxy: ProxySettings = Field(default_factory=ProxySettings)

    @field_validator("servers")
    @classmethod
    def _names(cls, servers: dict[str, Any]) -> dict[str, Any]:
        for name in servers:
            if not _SERVER_NAME.match(name):
                raise ValueError(
                    f"server name {name!r} must start with a letter or digit and use only "
                    "letters, digits, '_', '-' and '.'"
                )
        return servers

    @property
    def enabled_servers(self) -> dict[str, ServerConfig]:
        return {name: s for name, s in self.servers.items() if s.enabled}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "config") -> McpConfig:
        """Validate a plain mapping (``servers`` or ``mcpServers``; ``${VAR}`` expanded)."""
        return _parse(data, source)

    @classmethod
    def from_file(cls, path: str | Path) -> McpConfig:
        """Load a ``.toml`` or ``.json`` file."""
        return load_mcp_config(path)


def load_mcp_config(source: str | Path | Mapping[str, Any] | McpConfig) -> McpConfig:
    """An :class:`McpConfig` from a file path (TOML or JSON), a mapping, or a config.

    Raises :class:`~toolsearch.errors.McpConfigError` naming the file, server and field
    when something is wrong.
    """
    if isinstance(source, McpConfig):
        return source
    if isinstance(source, Mapping):
        return _parse(source, "config")
    path = Path(source)
    if not path.is_file():
        raise McpConfigError(f"{path}: no such MCP config file")
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            import tomllib

            data = tomllib.loads(text)
    except (ValueError, json.JSONDecodeError) as exc:
        kind = "JSON" if path.suffix.lower() == ".json" else "TOML"
        raise McpConfigError(f"{path}: not valid {kind}: {exc}") from None
    if not isinstance(data, Mapping):
        raise McpConfigError(f"{path}: the config must be a table/object")
    return _parse(data, str(path))


ServersArgument = McpConfig | Mapping[str, ServerConfig] | Mapping[str, Any] | str | Path
"""What ``McpToolProvider(servers)`` accepts (see :func:`as_config`)."""


def as_config(servers: ServersArgument) -> McpConfig:
    """An :class:`McpConfig` from a config, a file path, a mapping in the config's shape
    (``{"servers": {...}}``) or a mapping of server name to server config (or dict)."""
    if isinstance(servers, McpConfig | str | Path):
        return load_mcp_config(servers)
    if not isinstance(servers, Mapping):
        raise McpConfigError(
            "servers must be an McpConfig, a config file path or a mapping of server name "
            f"to server config, not {type(servers).__name__}"
        )
    if "servers" in servers or "mcpServers" in servers:
        return load_mcp_config(servers)
    entries: dict[str, Any] = {}
    for name, entry in servers.items():
        if isinstance(entry, StdioServerConfig | HttpServerConfig):
            entries[name] = entry.model_dump()
        else:
            entries[name] = entry
    return load_mcp_config({"servers": entries})


def _parse(data: Mapping[str, Any], source: str) -> McpConfig:
    raw = dict(data)
    if "mcpServers" in raw:
        if "servers" in raw:
            raise McpConfigError(f"{source}: give either 'servers' or 'mcpServers', not both")
        raw["servers"] = raw.pop("mcpServers")
    servers = raw.get("servers") or {}
    if not isinstance(servers, Mapping):
        raise McpConfigError(f"{source}: 'servers' must be a table of named servers")
    raw["servers"] = {
        name: _normalize_server(str(name), entry, source) for name, entry in servers.items()
    }
    try:
        return McpConfig.model_validate(raw)
    except ValidationError as exc:
        raise McpConfigError(f"{source}: {_describe(exc)}") from None


def _normalize_server(name: str, entry: Any, source: str) -> dict[str, Any]:
    if not isinstance(entry, Mapping):
        raise McpConfigError(f"{source}: server {name!r} must be a table")
    server = dict(entry)
    # desktop-assistant files say "type": "stdio" | "http" | "streamable-http" | "sse"
    kind = server.pop("type", None)
    if "transport" not in server:
        if kind in ("http", "streamable-http", "streamable_http", "streamableHttp"):
            server["transport"] = "http"
        elif kind == "sse":
            raise McpConfigError(
                f"{source}: server {name!r}: the SSE transport is not supported; "
                "use the server's streamable HTTP endpoint"
            )
        elif "command" in server and "url" in server:
            raise McpConfigError(
                f"{source}: server {name!r} has both 'command' and 'url'; give one"
            )
        elif "url" in server:
            server["transport"] = "http"
        elif "command" in server:
            server["transport"] = "stdio"
        else:
            raise McpConfigError(
                f"{source}: server {name!r} needs 'command' (stdio) or 'url' (streamable HTTP)"
            )
    elif server["transport"] in ("streamable-http", "streamable_http"):
        server["transport"] = "http"
    try:
        expanded: dict[str, Any] = _expand(server)
        return expanded
    except KeyError as exc:
        raise McpConfigError(
            f"{source}: server {name!r} uses the environment variable {exc.args[0]!r}, "
            "which is not set (write ${NAME:-default} for a default)"
        ) from None


def _expand(value: Any) -> Any:
    if isinstance(value, str):
        return _VARIABLE.sub(_substitute, value)
    if isinstance(value, list | tuple):
        return [_expand(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _expand(v) for k, v in value.items()}
    return value


def _substitute(match: re.Match[str]) -> str:
    name, default = match.group(1), match.group(2)
    found = os.environ.get(name)
    if found is not None:
        return found
    if default is not None:
        return default
    raise KeyError(name)


def _describe(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        location = [str(p) for p in error["loc"]]
        if len(location) >= 2 and location[0] == "servers":
            # drop the discriminator tag pydantic inserts after the server name
            rest = [p for p in location[2:] if p not in ("stdio", "http")]
            where = f"server {location[1]!r}" + (f" field {'.'.join(rest)!r}" if rest else "")
        else:
            where = ".".join(location) or "config"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)
