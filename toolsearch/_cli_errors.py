"""One way for the command line to report an error, usage and runtime alike.

Every error is one ``error: <message>`` paragraph on stderr, wrapped to the terminal's width
(``COLUMNS``; 80 when it cannot be known): a usage error has click's usage line and its
``--help`` hint above it, and the same paragraph. Runtime errors are :class:`CliError`, a
``click.ClickException`` of the click Typer runs on, so both go through one printer
(:func:`use_one_error_style` puts it in place of Typer's boxed panel). The exit code says
whose fault it was: **2** for bad input (a usage error, a missing index folder, a bad source
or MCP config, a missing extra), **1** for a failure while running (a damaged or
newer-format index, a server or an embedding API that failed, a disk).

Only the command-line modules import this one (it imports typer).
"""

from __future__ import annotations

from typing import Any

import typer

__all__ = [
    "BAD_INPUT",
    "RUNTIME_FAILURE",
    "CliError",
    "error_exit",
    "exit_code_of",
    "print_error",
    "use_one_error_style",
]

BAD_INPUT = 2
"""The exit code of a usage error and of any other bad input (click's own for usage)."""
RUNTIME_FAILURE = 1
"""The exit code of a failure while running."""

# the click Typer runs on (Typer may vendor its own): the base of its BadParameter
_ClickException: Any = next(
    base for base in typer.BadParameter.__mro__ if base.__name__ == "ClickException"
)


class CliError(_ClickException):  # type: ignore[misc]
    """An error of a ``toolsearch`` command, printed as a usage error's message is
    (:func:`print_error`), exiting with ``code``."""

    def __init__(self, message: str, code: int = RUNTIME_FAILURE) -> None:
        super().__init__(message)
        self.exit_code = code

    def show(self, file: Any = None) -> None:
        print_error(self.format_message())


def exit_code_of(exc: BaseException) -> int:
    """:data:`BAD_INPUT` for an error the user's input caused (a missing index folder, a
    bad source or MCP config, a missing extra), else :data:`RUNTIME_FAILURE` (a damaged or
    newer-format index, a server or an embedding API that failed)."""
    from toolsearch.errors import (
        CatalogSourceError,
        IndexNotFoundError,
        McpConfigError,
        MissingExtraError,
    )

    bad_input = (IndexNotFoundError, CatalogSourceError, McpConfigError, MissingExtraError)
    return BAD_INPUT if isinstance(exc, bad_input) else RUNTIME_FAILURE


def error_exit(exc: BaseException | str, code: int | None = None) -> CliError:
    """The :class:`CliError` to raise for ``exc``: its message, exiting with ``code`` (by
    default :func:`exit_code_of`; for a message given as text, 1)."""
    if code is None:
        code = RUNTIME_FAILURE if isinstance(exc, str) else exit_code_of(exc)
    return CliError(str(exc), code)


def print_error(message: str) -> None:
    """``error: <message>`` on stderr, wrapped to the terminal's width at spaces (a path or
    a command in it stays whole, so it can be copied). Output that goes to no terminal (a
    pipe, a log, a test) without ``COLUMNS`` stays one line per message."""
    import sys
    import textwrap

    text = f"error: {message}"
    width = _terminal_width(sys.stderr)
    if width is not None:
        text = "\n".join(
            textwrap.fill(line, width, break_long_words=False, break_on_hyphens=False)
            for line in text.splitlines() or [""]
        )
    print(text, file=sys.stderr)


def _terminal_width(stream: Any) -> int | None:
    """``COLUMNS`` when set, else the terminal's width when ``stream`` is one, else
    ``None`` (do not wrap)."""
    import os
    import shutil

    given = os.environ.get("COLUMNS", "").strip()
    if given.isdigit() and int(given) > 0:
        return int(given)
    isatty = getattr(stream, "isatty", None)
    if isatty is not None and isatty():
        return shutil.get_terminal_size().columns
    return None


def _format_error(error: Any) -> None:
    """Typer's ``rich_format_error``, in the one style: the usage line and the ``--help``
    hint of a usage error, then :func:`print_error`."""
    if type(error).__name__ == "NoArgsIsHelpError":  # Typer prints the help instead
        return
    from rich.console import Console
    from rich.markup import escape

    ctx = getattr(error, "ctx", None)
    console = Console(stderr=True)
    if ctx is not None:
        console.print(escape(ctx.get_usage()), highlight=False, overflow="fold")
        if ctx.command.get_help_option(ctx) is not None:
            hint = f"Try '{ctx.command_path} {ctx.help_option_names[0]}' for help."
            console.print(escape(hint), highlight=False, style="dim")
    print_error(error.format_message())


def use_one_error_style() -> None:
    """Print every click error of a Typer app (usage errors, :class:`CliError`) with
    :func:`_format_error`. Idempotent; the command-line modules call it."""
    from typer import rich_utils

    rich_utils.rich_format_error = _format_error  # type: ignore[assignment]


use_one_error_style()
