"""``--help`` of every ``toolsearch`` command at 80 columns: option names whole, no line
wider than the terminal, no help text cut short with ``…``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("typer", reason="the command line needs typer")

import typer
from typer.testing import CliRunner

from toolsearch.cli import _app


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command and group under ``command`` (typer vendors click: duck-typed)."""
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _commands(sub, (*path, name))


APP = _app()
# `bench` and `embedder` forward to the harness: their options are the harness's commands'
from toolsearch_bench.cli import bench_app  # noqa: E402
from toolsearch_bench.tuning.cli import embedder_app  # noqa: E402

HARNESS = {
    ("bench",): typer.main.get_command(bench_app()),
    ("embedder",): typer.main.get_command(embedder_app()),
}
COMMANDS = [
    (path, command)
    for path, command in _commands(typer.main.get_command(APP))
    if path not in HARNESS
]
for prefix, harness_command in HARNESS.items():
    COMMANDS += [((*prefix, *path), command) for path, command in _commands(harness_command)]


def test_the_walk_finds_the_subcommands():
    paths = {" ".join(path) for path, _ in COMMANDS}
    assert {"bench", "index build", "index search", "index info", "mcp proxy"} <= paths
    assert "embedder finetune" in paths


@pytest.mark.parametrize("width", [80, 100])
@pytest.mark.parametrize(
    ("path", "command"), COMMANDS, ids=[" ".join(path) or "toolsearch" for path, _ in COMMANDS]
)
def test_help_keeps_every_option_name_whole(path, command, width):
    shown = CliRunner().invoke(
        APP, [*path, "--help"], env={"COLUMNS": str(width)}, prog_name="toolsearch"
    )
    assert shown.exit_code == 0, shown.output
    names = [
        name
        for param in command.params
        for name in (*param.opts, *param.secondary_opts)
        if name.startswith("--")
    ]
    for name in names:  # whole: not followed by more of a name, nor by "…"
        assert re.search(re.escape(name) + r"(?![\w-]|…)", shown.output), (name, shown.output)
    wide = [line for line in shown.output.splitlines() if len(line) > width]
    assert not wide, "\n".join(wide)
    assert "…" not in shown.output, shown.output
