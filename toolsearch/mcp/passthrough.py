"""The upstream servers' prompts and resources, forwarded by the tool-search proxy.

Tools go through the proxy's two tools; prompts and resources are few, meant for the user
(a client shows them in menus), and pass through as they are, under names and URIs that
say which server they come from:

- **Prompts.** ``prompts/list`` answers every prompt of every server that offers prompts,
  named by the rule exposed tools are named by (:func:`toolsearch.mcp.exposure.
  exposed_names` with the provider's ``prefix`` and ``separator``): by default a name
  several servers offer becomes ``<server>__<name>``, any other keeps its own.
  ``prompts/get`` finds the server and the prompt's own name for the name asked (listing
  again once when it does not know it) and passes the arguments on unchanged.
- **Resources.** ``resources/list`` and ``resources/templates/list`` answer the resources
  and templates of every server that offers resources, each URI rewritten to
  ``toolsearch://<server>/<upstream URI>`` (:func:`proxy_uri`): the upstream URI is
  appended unchanged, so the rewrite is readable, reverses exactly (``resources/read``
  strips ``toolsearch://<server>/`` and asks ``<server>`` for the rest), keeps a valid URI
  valid (the upstream scheme's ``:`` and ``//`` are allowed in a path, its query and
  fragment stay query and fragment), and turns a URI template into a template whose
  expansions are the upstream's expansions behind the same prefix. The ``uri`` of every
  content a read returns is rewritten alike.

A server that does not advertise prompts (or resources) is skipped, one whose listing
fails is skipped with a warning; neither breaks the listing of the others. Unknown prompt
names and URIs that are not the proxy's, or name no connected server, are ``-32602``
(invalid params) errors, as the SDK's servers answer an unknown resource; an upstream
server's own error reaches the client with its code, the message naming the server.

Not forwarded: resource subscriptions, list-change notifications (every list is asked of
the servers when the client asks, so it is always current), and completions.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from toolsearch.mcp import redact
from toolsearch.mcp.connection import Connection, Listing, leaf_message
from toolsearch.mcp.exposure import exposed_names

if TYPE_CHECKING:
    from mcp.shared.exceptions import MCPError
    from mcp.types import (
        GetPromptResult,
        ListPromptsResult,
        ListResourcesResult,
        ListResourceTemplatesResult,
        ReadResourceResult,
    )

    from toolsearch.mcp.client import McpToolProvider

__all__ = ["URI_PREFIX", "Passthrough", "proxy_uri", "split_proxy_uri"]

logger = logging.getLogger(__name__)

URI_PREFIX = "toolsearch://"
"""What every resource URI the proxy lists starts with, before ``<server>/``."""

_INVALID_PARAMS = -32602
_METHOD_NOT_FOUND = -32601
_INTERNAL_ERROR = -32603


def proxy_uri(server: str, uri: str) -> str:
    """An upstream resource URI (or URI template) as the proxy lists it:
    ``toolsearch://<server>/<uri>``, the upstream URI unchanged (server names are
    ``[A-Za-z0-9][A-Za-z0-9_.-]*``, a valid URI host)."""
    return f"{URI_PREFIX}{server}/{uri}"


def split_proxy_uri(uri: str, servers: Sequence[str]) -> tuple[str, str]:
    """The server and the upstream URI of a URI :func:`proxy_uri` made.

    The scheme and the server name match case-insensitively when no server has the exact
    name (both are case-insensitive in URIs, and a client may normalize them). Raises
    ``ValueError``, with the reason for the client, for any other URI."""
    if uri[: len(URI_PREFIX)].lower() != URI_PREFIX:
        raise ValueError(
            f"Unknown resource {uri!r}: the resources of this proxy have URIs "
            f"{URI_PREFIX}<server>/<uri>, as resources/list gives them"
        )
    host, slash, upstream = uri[len(URI_PREFIX) :].partition("/")
    if not slash or not upstream:
        raise ValueError(f"Invalid resource URI {uri!r}: no URI after {URI_PREFIX}<server>/")
    if host in servers:
        return host, upstream
    matches = [s for s in servers if s.lower() == host.lower()]
    if len(matches) != 1:
        known = ", ".join(servers) or "none"
        raise ValueError(
            f"Unknown resource {uri!r}: no MCP server {host!r} behind this proxy (servers: {known})"
        )
    return matches[0], upstream


MAX_ERROR_MESSAGE = 2_000
"""Characters of an error message the proxy answers with: a message quoting what a client
sent (a 1 MB URI, an upstream's echo of it) is cut, saying how long it was."""


def _error(code: int, message: str, data: Any = None) -> MCPError:
    from mcp.shared.exceptions import MCPError

    text = redact.scrub(message)
    if len(text) > MAX_ERROR_MESSAGE:
        text = f"{text[:MAX_ERROR_MESSAGE]}... ({len(text):,} characters in all)"
    return MCPError(code, text, data)


def _first_page(params: Any) -> None:
    """Every list is answered in one page: a cursor can only be a stale or foreign one."""
    if getattr(params, "cursor", None):
        raise _error(_INVALID_PARAMS, "Invalid cursor: this proxy answers every list in one page")


class Passthrough:
    """The prompts and resources of a provider's servers, answered as one server's.

    :meth:`discover` (at the proxy's start) finds which servers offer which;
    :meth:`register` adds the handlers to the proxy's low-level ``Server``; the other
    methods are what the handlers answer.
    """

    def __init__(self, provider: McpToolProvider) -> None:
        self._provider = provider
        self._prompts: dict[str, tuple[str, str]] = {}
        self.offers: dict[str, bool] | None = None
        """``{"prompts": ..., "resources": ...}``: whether any connected server offers
        them; ``None`` before :meth:`discover`."""

    async def discover(self) -> dict[str, bool]:
        """Ask every connected server whether it offers prompts and resources."""

        async def features(connection: Connection) -> tuple[bool, bool]:
            return await connection.supports("prompts"), await connection.supports("resources")

        servers = self._provider.connected_servers
        found = await asyncio.gather(
            *(self._provider.arun_on_server(s, features) for s in servers),
            return_exceptions=True,
        )
        flags: list[tuple[bool, bool]] = []
        for server, outcome in zip(servers, found, strict=True):
            if isinstance(outcome, asyncio.CancelledError):
                raise outcome
            if isinstance(outcome, BaseException):
                logger.warning(
                    "MCP server %r: its capabilities are unknown: %s", server, leaf_message(outcome)
                )
            else:
                flags.append(outcome)
        self.offers = {
            "prompts": any(prompts for prompts, _ in flags),
            "resources": any(resources for _, resources in flags),
        }
        return self.offers

    def register(self, server: Any) -> None:
        """Add the prompt and resource handlers to a low-level ``Server``, which then
        advertises those capabilities: the features some upstream server offers once
        :meth:`discover` ran, both before (the lists then answer what there is, maybe
        nothing), since a capability is announced when the client connects."""
        from mcp.types import (
            GetPromptRequestParams,
            PaginatedRequestParams,
            ReadResourceRequestParams,
        )

        offers = self.offers or {"prompts": True, "resources": True}

        async def list_prompts(ctx: Any, params: Any) -> ListPromptsResult:
            _first_page(params)
            return await self.list_prompts()

        async def get_prompt(ctx: Any, params: Any) -> GetPromptResult:
            return await self.get_prompt(params.name, params.arguments)

        async def list_resources(ctx: Any, params: Any) -> ListResourcesResult:
            _first_page(params)
            return await self.list_resources()

        async def list_templates(ctx: Any, params: Any) -> ListResourceTemplatesResult:
            _first_page(params)
            return await self.list_resource_templates()

        async def read_resource(ctx: Any, params: Any) -> ReadResourceResult:
            return await self.read_resource(params.uri)

        if offers["prompts"]:
            server.add_request_handler("prompts/list", PaginatedRequestParams, list_prompts)
            server.add_request_handler("prompts/get", GetPromptRequestParams, get_prompt)
        if offers["resources"]:
            server.add_request_handler("resources/list", PaginatedRequestParams, list_resources)
            server.add_request_handler(
                "resources/templates/list", PaginatedRequestParams, list_templates
            )
            server.add_request_handler("resources/read", ReadResourceRequestParams, read_resource)

    # -- prompts ------------------------------------------------------------------------------

    async def list_prompts(self) -> ListPromptsResult:
        """Every server's prompts, named as :func:`~toolsearch.mcp.exposure.exposed_names`
        names tools (a server's first prompt of a name wins over its later ones)."""
        from mcp.types import ListPromptsResult

        prompts: dict[tuple[str, str], Any] = {}
        for server, items in await self._each("prompts"):
            for prompt in items:
                prompts.setdefault((server, prompt.name), prompt)
        provider = self._provider
        names = exposed_names(list(prompts), provider.prefix, provider.separator, "prompt")
        self._prompts = names
        return ListPromptsResult(
            prompts=[prompts[key].model_copy(update={"name": name}) for name, key in names.items()]
        )

    async def get_prompt(self, name: str, arguments: dict[str, str] | None) -> GetPromptResult:
        """The prompt listed as ``name``, from its server, with ``arguments``."""
        from mcp.types import GetPromptResult

        found = self._prompts.get(name)
        if found is None:  # not listed yet, or listed before the servers changed
            await self.list_prompts()
            found = self._prompts.get(name)
        if found is None:
            raise _error(
                _INVALID_PARAMS,
                f"Unknown prompt {name!r}: prompts/list gives the names of this proxy's prompts",
                {"name": name},
            )
        server, own_name = found
        result = await self._request(server, lambda client: client.get_prompt(own_name, arguments))
        return GetPromptResult(description=result.description, messages=result.messages)

    # -- resources ----------------------------------------------------------------------------

    async def list_resources(self) -> ListResourcesResult:
        """Every server's resources, their URIs rewritten by :func:`proxy_uri`."""
        from mcp.types import ListResourcesResult

        resources = [
            resource.model_copy(update={"uri": proxy_uri(server, resource.uri)})
            for server, items in await self._each("resources")
            for resource in items
        ]
        return ListResourcesResult(resources=resources)

    async def list_resource_templates(self) -> ListResourceTemplatesResult:
        """Every server's resource templates, rewritten by :func:`proxy_uri`."""
        from mcp.types import ListResourceTemplatesResult

        templates = [
            template.model_copy(update={"uri_template": proxy_uri(server, template.uri_template)})
            for server, items in await self._each("resource_templates")
            for template in items
        ]
        return ListResourceTemplatesResult(resource_templates=templates)

    async def read_resource(self, uri: str) -> ReadResourceResult:
        """Read a resource listed as ``uri`` from its server; the contents' URIs are
        rewritten as the listing's are."""
        from mcp.types import ReadResourceResult

        await self._provider.aconnect()
        try:
            server, upstream = split_proxy_uri(uri, self._provider.connected_servers)
        except ValueError as exc:
            raise _error(_INVALID_PARAMS, str(exc), {"uri": uri}) from None
        result = await self._request(
            server, lambda client: client.read_resource(upstream, cache_mode="bypass")
        )
        contents = [c.model_copy(update={"uri": proxy_uri(server, c.uri)}) for c in result.contents]
        return ReadResourceResult(contents=contents)

    # -- the servers --------------------------------------------------------------------------

    async def _each(self, listing: Listing) -> list[tuple[str, list[Any]]]:
        """``(server, items)`` for every connected server that offers ``listing`` and
        answered it, in config order (the others are skipped, and logged)."""
        await self._provider.aconnect()
        servers = self._provider.connected_servers
        what = listing.replace("_", " ")

        async def listed(connection: Connection) -> list[Any] | None:
            if not await connection.supports(listing):
                return None
            return await connection.list_all(listing)

        async def one(server: str) -> list[Any] | None:
            try:
                items = await self._provider.arun_on_server(server, listed)
            except Exception as exc:
                # a server may offer resources without templates: that one is no news
                quiet = getattr(exc, "code", None) == _METHOD_NOT_FOUND
                level = logging.DEBUG if quiet else logging.WARNING
                logger.log(
                    level,
                    "MCP server %r: listing its %s failed: %s",
                    server,
                    what,
                    leaf_message(exc),
                )
                return None
            if items is None:
                logger.debug("MCP server %r offers no %s; skipped", server, what)
            return items

        found = await asyncio.gather(*(one(s) for s in servers))
        return [(s, items) for s, items in zip(servers, found, strict=True) if items is not None]

    async def _request(self, server: str, send: Callable[[Any], Awaitable[Any]]) -> Any:
        """``await send(client)`` on ``server``'s session; its failures as MCP errors: the
        server's own error keeps its code, a lost server or a timeout is an internal one."""
        from mcp.shared.exceptions import MCPError

        try:
            return await self._provider.arun_on_server(
                server, lambda connection: connection.request(send)
            )
        except MCPError as exc:
            message = f"MCP server {server!r}: {exc.error.message}"
            raise _error(exc.error.code, message, exc.error.data) from exc
        except TimeoutError as exc:
            raise _error(_INTERNAL_ERROR, f"MCP server {server!r} timed out") from exc
        except Exception as exc:
            message = f"MCP server {server!r} failed: {leaf_message(exc)}"
            raise _error(_INTERNAL_ERROR, message) from exc
