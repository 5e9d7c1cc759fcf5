"""The ``toolsearch`` command line.

``toolsearch index ...`` (``toolsearch[catalog]``) and ``toolsearch mcp ...``
(``toolsearch[mcp]``) are the library's. ``toolsearch bench`` and ``toolsearch embedder ...``
belong to the benchmark harness, a distribution of its own (``toolsearch-bench``, in the
repository's ``benchmarks/harness``): these two commands forward their arguments to it,
importing it only when they run, so the other commands never load the harness.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["main"]

_FORWARDED = {"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []}
"""A forwarding command takes every argument, ``--help`` included, as the harness's."""

HARNESS_MISSING = (
    "`toolsearch {command}` comes with the benchmark harness, which is not installed: "
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


def _harness_command(command: str) -> Any:
    """The harness's click command for ``command`` (``bench`` or ``embedder``), or exit 2
    saying how to install the harness."""
    import typer

    try:
        if command == "bench":
            from toolsearch_bench.cli import bench_app as make
        else:
            from toolsearch_bench.tuning.cli import embedder_app as make
    except ImportError as exc:
        if not (exc.name or "").startswith("toolsearch_bench"):
            raise
        typer.echo(HARNESS_MISSING.format(command=command), err=True)
        raise SystemExit(2) from None
    return typer.main.get_command(make())


def _forward(app: Any, command: str, summary: str) -> None:
    import typer

    def forward(ctx: typer.Context) -> None:
        _harness_command(command).main(
            args=list(ctx.args), prog_name=f"{ctx.find_root().info_name or 'toolsearch'} {command}"
        )

    forward.__annotations__ = {"ctx": typer.Context, "return": None}  # typer is imported here
    app.command(command, context_settings=_FORWARDED, add_help_option=False, help=summary)(forward)


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

    _forward(
        app, "bench", "Token savings, success rate, retrieval quality and latency (the harness)."
    )
    app.add_typer(index_app(), name="index")
    app.add_typer(mcp_app(), name="mcp")
    _forward(app, "embedder", "Fine-tune the embedder on your requests (the harness).")

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
