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


def _run(args: list[str], width: int = 80) -> Any:
    return CliRunner().invoke(APP, args, env={"COLUMNS": str(width)}, prog_name="toolsearch")


def test_a_missing_index_is_bad_input_and_reported_as_usage_errors_are(tmp_path):
    missing = _run(["index", "search", str(tmp_path / "none"), "weather forecast"])
    usage = _run(["index", "search"])

    assert (missing.exit_code, usage.exit_code) == (2, 2)
    for shown in (missing, usage):  # one form: an "error:" paragraph wrapped to 80 columns
        errors = [line for line in shown.output.splitlines() if line.startswith("error: ")]
        assert len(errors) == 1, shown.output
        assert "╭" not in shown.output, shown.output
        assert all(len(line) <= 80 for line in shown.output.splitlines()), shown.output
    assert "Missing argument 'PATH'" in usage.output
    assert len(missing.output.splitlines()) >= 2  # the long message was wrapped
    assert "toolsearch index build" in " ".join(missing.output.split())
    assert "Traceback" not in missing.output


def test_the_search_usage_names_its_two_arguments():
    shown = _run(["index", "search", "--help"])

    assert "index search [OPTIONS] {PATH} [QUERY]" in shown.output
    assert "{[PATH] QUERY}" not in shown.output


@pytest.mark.parametrize(
    ("path", "command"), COMMANDS[:1] + [c for c in COMMANDS if c[0] == ("mcp", "proxy")]
)
def test_flags_show_no_type_and_help_text_keeps_room_at_80_columns(path, command):
    shown = _run([*path, "--help"])

    assert "<bool>" not in shown.output
    if path == ("mcp", "proxy"):
        # the help text column: "fail when a server cannot be reached" fits on one line or
        # two, not the five a 20-column text took
        assert "--strict/--no-strict" in shown.output
        assert "fail when a server cannot be" in shown.output
