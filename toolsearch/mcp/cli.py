"""``toolsearch mcp ...``: the tool-search MCP proxy."""

from __future__ import annotations

from typing import Any

__all__ = ["mcp_app"]


def mcp_app() -> Any:
    import typer

    app = typer.Typer(help="MCP: serve many MCP servers behind one tool-search proxy.")

    @app.callback()
    def root() -> None:
        """MCP integration."""

    return app
