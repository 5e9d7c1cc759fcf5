"""The ``toolsearch`` command line.

``toolsearch index ...`` (``toolsearch[catalog]``) and ``toolsearch mcp ...``
(``toolsearch[mcp]``) are the library's. Every other command comes from an installed
distribution that registers it by entry point (group ``toolsearch.cli``,
:mod:`toolsearch.plugins`): ``toolsearch bench`` and ``toolsearch embedder ...`` are the
benchmark harness's (``toolsearch-bench``, in the repository's ``benchmarks/harness``, whose
``pyproject.toml`` registers them). Such a command forwards its arguments to the command
the entry point makes, importing it only when it runs (or when ``toolsearch --help`` lists
its summary), so the library's own commands never load it and the library imports nothing
of the harness.
"""

from __future__ import annotations

import sys
from typing import Any

from toolsearch._cli_errors import error_exit

__all__ = ["main"]

_FORWARDED = {"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []}
"""A forwarding command takes every argument, ``--help`` included, as the harness's."""

ELSEWHERE = {
    "bench": "the benchmark harness",
    "embedder": "the benchmark harness",
}
"""Commands that come from a distribution of their own: what ``toolsearch NAME`` says when
none is installed (names only: nothing here is imported)."""

NOT_INSTALLED = (
    "`toolsearch {command}` comes with {what}, which is not installed: "
    "from a toolsearch checkout, pip install -e benchmarks/harness"
)


def _fit_help_options() -> None:
    """Keep every option name whole in ``--help``, at 80 columns too.

    Typer's rich help lays each panel out as one table with default columns: when the
    help text is wider than the terminal, rich narrows the widest columns together, the
    option names' included, and cuts them (``--search-tool-n…``). Typer exposes no
    setting for those columns (``rich_utils`` builds the table without declaring any),
    so its ``Table`` becomes one that declares them when the first row arrives: the
    name columns never wrap, the type column wraps at 14 columns and the help text
    takes the rest (a word too long for it folds instead of ending in ``…``). Tables
    that declare their own columns (the commands panel) are unchanged."""
    from rich.columns import Columns
    from rich.table import Table
    from rich.text import Text
    from typer import rich_utils

    if getattr(rich_utils.Table, "fits_option_names", False):  # type: ignore[attr-defined]
        return

    class OptionsTable(Table):
        fits_option_names = True

        def add_row(self, *renderables: Any, **options: Any) -> None:
            merging = not self.columns or getattr(self, "names_merged", False)
            if len(renderables) >= 6 and merging:  # not a table with columns of its own
                renderables = _one_name_column(renderables)
                self.names_merged = True
            if not self.columns and len(renderables) >= 3:
                for _ in renderables[:-2]:  # required mark, names
                    self.add_column(no_wrap=True)
                self.add_column(overflow="fold", max_width=14)  # <int range> [1<=x<=10]
                self.add_column(overflow="fold")
            if renderables and isinstance(renderables[-1], Columns):
                for item in renderables[-1].renderables:
                    if isinstance(item, Text):
                        item.overflow = "fold"
            super().add_row(*renderables, **options)

    def _one_name_column(renderables: tuple[Any, ...]) -> tuple[Any, ...]:
        """Typer's row ``[required], long, short, negative long, negative short, type,
        help`` as ``[required], names, type, help``: ``--strict/--no-strict`` and
        ``--config, -c`` share one column, so four name columns do not squeeze the help
        text into 20 columns at 80; a flag shows no ``<bool>`` type (it takes no value)."""
        *lead, long, short, negative, negative_short, kind, help_text = renderables
        names = Text()
        for part, joint in ((long, ""), (negative, "/"), (short, ", "), (negative_short, ", ")):
            text = part if isinstance(part, Text) else Text(str(part))
            if text.plain:
                if names.plain:
                    names.append(joint)
                names.append_text(text)
        if isinstance(kind, Text) and kind.plain.strip() == "<bool>":
            kind = Text("")
        return (*lead, names, kind, help_text)

    rich_utils.Table = OptionsTable  # type: ignore[attr-defined]


def _plugin_command(plugin: Any) -> Any:
    """The click command an entry point of ``toolsearch.cli`` makes (a ``typer.Typer``, a
    click command, or a function without arguments returning either);
    :class:`~toolsearch.errors.PluginError` when it cannot be made."""
    import typer

    from toolsearch.errors import PluginError

    def is_command(value: Any) -> bool:  # click's, or the copy of click typer carries
        return callable(getattr(value, "main", None)) and hasattr(value, "get_short_help_str")

    made = plugin.load()
    try:
        if callable(made) and not isinstance(made, typer.Typer) and not is_command(made):
            made = made()
        if isinstance(made, typer.Typer):
            made = typer.main.get_command(made)
    except Exception as exc:  # someone else's code: its failure is the plugin's
        raise PluginError(
            plugin.distribution, plugin.group, plugin.name, f"{type(exc).__name__}: {exc}"
        ) from exc
    if not is_command(made):
        raise PluginError(
            plugin.distribution,
            plugin.group,
            plugin.name,
            f"it makes a {type(made).__name__}, not a typer.Typer or click command",
        )
    return made


def _forward(app: Any, plugin: Any) -> None:
    """``toolsearch NAME``: the plugin's command, made when it runs; ``--help`` lists its
    summary (made then too)."""
    import typer
    from typer.core import TyperCommand

    from toolsearch.errors import PluginError

    def summary() -> str:
        try:
            command = _plugin_command(plugin)
        except PluginError as exc:
            return f"(cannot be loaded: {exc.problem})"
        return str(command.get_short_help_str(limit=90))

    class PluginCommand(TyperCommand):
        @property
        def short_help(self) -> str:
            return summary()

        @short_help.setter
        def short_help(self, value: str | None) -> None:
            del value  # the plugin's own summary, read when listed

    def forward(ctx: typer.Context) -> None:
        try:
            command = _plugin_command(plugin)
        except PluginError as exc:
            raise error_exit(exc) from None
        prog = f"{ctx.find_root().info_name or 'toolsearch'} {plugin.name}"
        command.main(args=list(ctx.args), prog_name=prog)

    forward.__annotations__ = {"ctx": typer.Context, "return": None}  # typer is imported here
    app.command(plugin.name, cls=PluginCommand, context_settings=_FORWARDED, add_help_option=False)(
        forward
    )


def _not_installed(app: Any, command: str, what: str) -> None:
    import typer

    def missing(ctx: typer.Context) -> None:
        del ctx
        typer.echo(NOT_INSTALLED.format(command=command, what=what), err=True)
        raise SystemExit(2)

    missing.__annotations__ = {"ctx": typer.Context, "return": None}
    summary = f"Not installed: comes with {what}."
    app.command(command, context_settings=_FORWARDED, add_help_option=False, help=summary)(missing)


def _add_plugin_commands(app: Any, builtin: set[str]) -> None:
    """A command per entry point of ``toolsearch.cli`` (a built-in name is never replaced),
    and the hint for each of :data:`ELSEWHERE` that none provides."""
    import logging

    from toolsearch import plugins

    found = set()
    for plugin in plugins.plugins(plugins.CLI_GROUP):
        if plugin.name in builtin:
            logging.getLogger(__name__).warning(
                "%s is ignored: %r is a built-in command", plugin.origin, plugin.name
            )
            continue
        _forward(app, plugin)
        found.add(plugin.name)
    for command, what in ELSEWHERE.items():
        if command not in found:
            _not_installed(app, command, what)


def _app() -> Any:
    import typer

    from toolsearch._cli_errors import use_one_error_style

    _fit_help_options()
    use_one_error_style()
    app = typer.Typer(add_completion=False, help="toolsearch: tool search for LLM tool calling.")

    @app.callback()
    def root() -> None:
        """toolsearch command line."""

    from toolsearch.catalog.cli import index_app
    from toolsearch.mcp.cli import mcp_app

    app.add_typer(index_app(), name="index")
    app.add_typer(mcp_app(), name="mcp")
    _add_plugin_commands(app, {"index", "mcp"})

    return app


def main() -> None:
    try:
        app = _app()
    except ImportError as exc:
        print(
            f"toolsearch's command line needs typer and rich ({exc.name} is missing); "
            "install the extra of the command you want: pip install 'toolsearch[catalog]' "
            "(toolsearch index) or 'toolsearch[mcp]' (toolsearch mcp)",
            file=sys.stderr,
        )
        raise SystemExit(2) from None
    app()


if __name__ == "__main__":
    main()
