"""One way for the command line to report a user error: one escaped line, an exit code."""

from __future__ import annotations

from typing import Any

__all__ = ["error_exit"]


def error_exit(exc: BaseException, code: int = 1) -> Any:
    """Print ``error: <exc>`` on stderr and return the ``typer.Exit(code)`` to raise."""
    import typer
    from rich.console import Console
    from rich.markup import escape

    # escaped: "pip install 'toolsearch[vector]'" is not rich markup
    Console(stderr=True).print(
        f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True
    )
    return typer.Exit(code)
