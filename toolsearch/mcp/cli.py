"""``toolsearch mcp ...``: the tool-search MCP proxy, and listing or dumping servers' tools.

``toolsearch mcp proxy --config servers.toml`` serves the proxy over stdio (what desktop
assistants and IDEs start); ``--transport http --port 8000`` serves streamable HTTP at
``http://127.0.0.1:8000/mcp``. Over stdio, stdout carries only MCP messages: everything
else goes to stderr.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

__all__ = ["mcp_app"]

_PREFIXES = ("auto", "always", "never")


def mcp_app() -> Any:
    import typer

    from toolsearch.indexes import kinds

    app = typer.Typer(help="MCP: serve many MCP servers behind one tool-search proxy.")

    ConfigOption = Annotated[
        Path,
        typer.Option("--config", "-c", help="MCP servers config (TOML, or JSON with mcpServers)"),
    ]

    @app.callback()
    def root() -> None:
        """MCP integration."""

    @app.command()
    def proxy(
        config: ConfigOption,
        index: Annotated[
            str | None,
            typer.Option(
                help=f"{kinds.choices()}; KIND:EMBEDDER for "
                f"{', '.join(kinds.embedding_kind_names())}; milvus reads MILVUS_URI "
                "[config: bm25]"
            ),
        ] = None,
        max_results: Annotated[
            int | None, typer.Option(min=1, max=10, help="default tools per search [5]")
        ] = None,
        prefix: Annotated[
            str | None, typer.Option(help="server-name prefixes: auto, always, never [auto]")
        ] = None,
        transport: Annotated[str, typer.Option(help="stdio or http")] = "stdio",
        host: Annotated[str, typer.Option(help="HTTP host")] = "127.0.0.1",
        port: Annotated[int, typer.Option(help="HTTP port")] = 8000,
        path: Annotated[str, typer.Option(help="HTTP endpoint path")] = "/mcp",
        search_tool_name: Annotated[
            str | None, typer.Option(help="name of the search tool [search_tools]")
        ] = None,
        call_tool_name: Annotated[
            str | None, typer.Option(help="name of the call tool [call_tool]")
        ] = None,
        auth_token_env: Annotated[
            str | None,
            typer.Option(
                help="HTTP only: require 'Authorization: Bearer <token>', the token read "
                "from this environment variable"
            ),
        ] = None,
        strict: Annotated[
            bool | None,
            typer.Option("--strict/--no-strict", help="fail when a server cannot be reached [no]"),
        ] = None,
        verbose: Annotated[bool, typer.Option("--verbose", "-v", help="log to stderr")] = False,
    ) -> None:
        """Serve every configured server's tools behind search_tools and call_tool."""
        import anyio

        from toolsearch.mcp.client import McpToolProvider
        from toolsearch.mcp.config import validate_tool_names
        from toolsearch.mcp.proxy import McpSearchProxy

        if transport not in ("stdio", "http"):
            raise typer.BadParameter("transport must be stdio or http", param_hint="--transport")
        _logging(verbose)
        loaded = _load(config)
        settings = loaded.proxy
        chosen_index = _index_spec(index or settings.index)
        chosen_prefix = _choice(prefix or settings.prefix, _PREFIXES, "--prefix")
        fail = settings.strict if strict is None else strict
        search_name = search_tool_name or settings.search_tool_name
        call_name = call_tool_name or settings.call_tool_name
        try:
            validate_tool_names(search_name, call_name)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--search-tool-name") from None
        token = _auth_token(auth_token_env or settings.auth_token_env, transport)
        with _user_errors("proxy"):
            provider = McpToolProvider(
                loaded,
                prefix=chosen_prefix,  # type: ignore[arg-type]
                on_connect_error="raise" if fail else "skip",
            )
            try:
                search_proxy = McpSearchProxy(
                    provider,
                    index=chosen_index,
                    max_results=max_results or settings.max_results,
                    name=settings.name,
                    search_tool_name=search_name,
                    call_tool_name=call_name,
                )
                anyio.run(
                    lambda: search_proxy.serve(
                        transport=transport,  # type: ignore[arg-type]
                        host=host,
                        port=port,
                        path=path,
                        auth_token=token,
                    )
                )
            except KeyboardInterrupt:  # pragma: no cover - interactive stop
                pass
            finally:
                provider.close()

    @app.command("list")
    def list_tools(
        config: ConfigOption,
        prefix: Annotated[str, typer.Option(help="auto, always or never")] = "auto",
        as_json: Annotated[bool, typer.Option("--json", help="one JSON object per tool")] = False,
    ) -> None:
        """Connect to every configured server and list the tools it exposes."""
        import json

        from toolsearch.mcp.client import McpToolProvider

        _logging(False)
        loaded = _load(config)
        chosen_prefix = _choice(prefix, _PREFIXES, "--prefix")
        with (
            _user_errors("list"),
            McpToolProvider(
                loaded,
                prefix=chosen_prefix,  # type: ignore[arg-type]
                on_connect_error="skip",
            ) as provider,
        ):
            callbacks = provider.tool_callbacks()
            for callback in callbacks:
                definition = callback.definition
                if as_json:
                    typer.echo(json.dumps({**definition.to_dict(), "server": callback.server}))
                else:
                    summary = definition.description.strip().splitlines()[0:1]
                    typer.echo(f"{definition.name}\t{callback.server}\t{''.join(summary)[:80]}")
            _report_failures(provider)
            typer.echo(f"{len(callbacks)} tools", err=True)

    @app.command()
    def dump(
        config: ConfigOption,
        out: Annotated[Path, typer.Option("--out", "-o", help="catalog JSONL to write")],
        prefix: Annotated[str, typer.Option(help="auto, always or never")] = "auto",
    ) -> None:
        """Write every configured server's tools to a catalog JSONL file (one tool a line)."""
        from toolsearch.mcp.client import McpToolProvider
        from toolsearch.mcp.dump import write_catalog

        _logging(False)
        loaded = _load(config)
        chosen_prefix = _choice(prefix, _PREFIXES, "--prefix")
        with (
            _user_errors("dump"),
            McpToolProvider(
                loaded,
                prefix=chosen_prefix,  # type: ignore[arg-type]
                on_connect_error="skip",
            ) as provider,
        ):
            count = write_catalog(provider.tool_definitions(), out)
            _report_failures(provider)
        typer.echo(f"wrote {count} tools to {out}", err=True)

    return app


def _auth_token(variable: str | None, transport: str) -> str | None:
    """The bearer token from ``variable`` (``None`` without one); a usage error when it is
    unset or empty, or when the transport is not HTTP."""
    import os

    import typer

    if variable is None:
        return None
    if transport != "http":
        raise typer.BadParameter(
            "a bearer token needs --transport http", param_hint="--auth-token-env"
        )
    token = os.environ.get(variable, "").strip()
    if not token:
        raise typer.BadParameter(
            f"environment variable {variable} is unset or empty", param_hint="--auth-token-env"
        )
    return token


def _choice(value: str, allowed: tuple[str, ...], option: str) -> str:
    import typer

    if value not in allowed:
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(allowed)}", param_hint=option)
    return value


def _index_spec(spec: str) -> str:
    """``spec`` when it names an index (:mod:`toolsearch.indexes.kinds`), else a usage
    error listing the kinds (or naming the variable a server's URI comes from); nothing is
    built or loaded."""
    import typer

    from toolsearch.errors import PluginError
    from toolsearch.indexes import kinds, specs

    try:
        specs.index_factory(spec)
        kind = kinds.index_kind(spec.partition(":")[0])
        if kind.needs_uri:
            kind.uri_of(kinds.IndexOptions())  # from its variable: say now when unset
    except (ValueError, PluginError) as exc:  # PluginError: an installed kind that is broken
        raise typer.BadParameter(str(exc), param_hint="--index") from None
    return spec


@contextmanager
def _user_errors(command: str) -> Iterator[None]:
    """Our errors (an unreachable server with --strict, a missing extra for the index, a
    file that cannot be written) in the command line's one error form (a panel wrapped to
    the terminal, as usage errors are), not a traceback: exit 2 for bad input (a missing
    extra, a bad config), 1 for a failure while running."""
    from toolsearch._cli_errors import error_exit, exit_code_of
    from toolsearch.errors import ToolsearchError

    try:
        yield
    except (ToolsearchError, OSError) as exc:
        raise error_exit(f"toolsearch mcp {command}: {exc}", exit_code_of(exc)) from None


def _report_failures(provider: Any) -> None:
    """Name every server that was left out; when every configured server failed, nothing
    was listed: exit 1 (a usable list with some servers missing still exits 0)."""
    import typer

    for server, problem in provider.failures.items():
        typer.echo(f"left out {server}: {problem}", err=True)
    if provider.failures and not provider.connected_servers:
        from toolsearch._cli_errors import error_exit

        raise error_exit("no server could be reached: nothing was listed")


def _load(config: Path) -> Any:
    import typer

    from toolsearch.errors import McpConfigError
    from toolsearch.mcp.config import load_mcp_config

    try:
        return load_mcp_config(config)
    except McpConfigError as exc:
        raise typer.BadParameter(str(exc), param_hint="--config") from None


def _logging(verbose: bool) -> None:
    import logging
    import sys

    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        stream=sys.stderr,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
