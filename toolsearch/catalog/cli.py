"""``toolsearch index ...``: build, search and inspect catalog indexes."""

from __future__ import annotations

from typing import Any

__all__ = ["index_app"]


def index_app() -> Any:
    import typer

    app = typer.Typer(help="Build, search and inspect offline catalog indexes.")

    @app.callback()
    def root() -> None:
        """Offline catalog indexes."""

    return app
