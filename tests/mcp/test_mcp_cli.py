"""``toolsearch mcp ...`` user errors: one clear line and a non-zero exit, never a traceback.

None of these cases reaches a server, so no MCP server is started."""

from __future__ import annotations

from pathlib import Path

import pytest

typer_testing = pytest.importorskip("typer.testing", reason="typer (toolsearch[catalog])")

from toolsearch.indexes.specs import INDEX_KINDS  # noqa: E402
from toolsearch.mcp.cli import mcp_app  # noqa: E402


def run(*args: str) -> tuple[int, str]:
    result = typer_testing.CliRunner().invoke(mcp_app(), list(args))
    # a user error ends in SystemExit (typer's usage error or Exit), never another exception
    assert isinstance(result.exception, SystemExit | None), result.exception
    assert "Traceback" not in result.output
    # rich draws usage errors in a box: drop its borders to read the message whole
    text = result.output.replace("│", " ").replace("╭", " ").replace("╰", " ")
    return result.exit_code, " ".join(text.split())


@pytest.fixture
def ghost(tmp_path: Path) -> Path:
    config = tmp_path / "servers.toml"
    config.write_text('[servers.ghost]\ncommand = "/nonexistent/mcp-server"\n')
    return config


@pytest.mark.parametrize("command", ["proxy", "list"])
def test_a_missing_config_file_is_named(command: str, tmp_path: Path) -> None:
    code, output = run(command, "--config", str(tmp_path / "nope.toml"))
    assert code == 2
    assert "no such MCP config file" in output


def test_invalid_toml_is_reported_as_such(tmp_path: Path) -> None:
    config = tmp_path / "servers.toml"
    config.write_text("servers = [\n")
    code, output = run("proxy", "--config", str(config))
    assert code == 2
    assert "not valid TOML" in output


def test_an_unknown_index_kind_in_the_config_or_on_the_command_line(tmp_path: Path) -> None:
    config = tmp_path / "servers.toml"
    config.write_text('[servers.a]\ncommand = "x"\n[proxy]\nindex = "nope"\n')
    code, output = run("proxy", "--config", str(config))
    assert code == 2
    assert "proxy.index" in output
    config.write_text('[servers.a]\ncommand = "x"\n')
    code, output = run("proxy", "--config", str(config), "--index", "nope")
    assert code == 2
    assert f"unknown index 'nope'; choose from {', '.join(INDEX_KINDS)}" in output


@pytest.mark.parametrize("command", [("list",), ("dump", "--out", "catalog.jsonl"), ("proxy",)])
def test_an_unknown_prefix_mode_is_a_usage_error(command: tuple[str, ...], ghost: Path) -> None:
    code, output = run(*command, "--config", str(ghost), "--prefix", "bogus")
    assert code == 2
    assert "'bogus' is not one of auto, always, never" in output


def test_strict_proxy_with_an_unreachable_server_exits_with_one_line(ghost: Path) -> None:
    pytest.importorskip("mcp")
    code, output = run("proxy", "--config", str(ghost), "--strict")
    assert code == 1
    assert "toolsearch mcp proxy: MCP server 'ghost' could not be started" in output


def test_a_dump_that_cannot_be_written_exits_with_one_line(ghost: Path, tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, output = run("dump", "--config", str(ghost), "--out", str(blocker / "catalog.jsonl"))
    assert code == 1
    assert "toolsearch mcp dump:" in output


@pytest.mark.parametrize("command", ["list", "dump"])
def test_when_every_server_failed_nothing_is_listed_and_the_exit_is_1(
    command: str, ghost: Path, tmp_path: Path
) -> None:
    """``mcp list`` exited 0 with no tool when every server failed (issue 34)."""
    pytest.importorskip("mcp")
    extra = ["--out", str(tmp_path / "catalog.jsonl")] if command == "dump" else []
    code, output = run(command, "--config", str(ghost), *extra)
    assert code == 1
    assert "left out ghost" in output
    assert "no server could be reached" in output
