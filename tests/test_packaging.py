"""The library ships without the benchmark harness: its wheel holds no harness, loader or
tuning code, its source imports nothing of the harness, importing it or running its own
commands loads none of the harness, the harness's two commands come from the harness's
own entry points, and they say how to install it when it is absent."""

from __future__ import annotations

import ast
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_the_wheel_holds_the_library_only(tmp_path: Path) -> None:
    pytest.importorskip("hatchling", reason="building the wheel needs hatchling ([test])")
    subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(tmp_path)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    [wheel] = tmp_path.glob("toolsearch-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    packages = {name.split("/")[0] for name in names if "/" in name}
    assert packages == {"toolsearch", wheel.name.split("-py3")[0] + ".dist-info"}
    assert "toolsearch/search/advisor.py" in names
    assert "toolsearch/testing/index_contract.py" in names  # the suites ship ([testing])
    harness = [n for n in names if any(p in n for p in ("bench", "tuning", "loaders", "_datasets"))]
    assert harness == []


def test_importing_the_library_and_its_own_commands_load_no_harness() -> None:
    code = (
        "import sys\n"
        "import toolsearch\n"
        "harness = lambda: sorted(m for m in sys.modules if m.startswith('toolsearch_bench'))\n"
        "print('import', harness())\n"
        "from typer.testing import CliRunner\n"
        "from toolsearch.cli import _app\n"
        "for command in (['index', '--help'], ['mcp', '--help']):\n"
        "    assert CliRunner().invoke(_app(), command).exit_code == 0\n"
        "print('cli', harness())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split("\n")[:2] == ["import []", "cli []"]


def test_the_library_source_imports_nothing_of_the_harness() -> None:
    """Not one import statement (at any depth, lazy ones included) of ``toolsearch/`` names
    the harness: its commands come by entry point (``toolsearch.plugins``)."""
    found = []
    for path in sorted((ROOT / "toolsearch").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                modules = [node.module or ""]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                modules = [node.value]  # a "module:attribute" for importlib
            else:
                continue
            found += [f"{path.name}: {m}" for m in modules if m.startswith("toolsearch_bench")]
    assert found == []


def test_the_harness_registers_its_commands_by_entry_point() -> None:
    import tomllib

    harness = tomllib.loads((ROOT / "benchmarks" / "harness" / "pyproject.toml").read_text())
    commands = harness["project"]["entry-points"]["toolsearch.cli"]
    assert commands == {
        "bench": "toolsearch_bench.cli:bench_app",
        "embedder": "toolsearch_bench.tuning.cli:embedder_app",
    }


@pytest.mark.parametrize("command", ["bench", "embedder"])
def test_a_harness_command_without_the_harness_says_how_to_install_it(
    command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from toolsearch import plugins
    from toolsearch.cli import _app

    found = plugins.plugins
    # as if the harness were not installed: no distribution registers the two commands
    monkeypatch.setattr(
        plugins, "plugins", lambda group: () if group == plugins.CLI_GROUP else found(group)
    )
    shown = CliRunner().invoke(_app(), [command, "--help"])
    assert shown.exit_code == 2
    assert f"`toolsearch {command}` comes with the benchmark harness" in shown.output
    assert "pip install -e benchmarks/harness" in shown.output


def test_a_harness_command_forwards_its_arguments() -> None:
    pytest.importorskip("toolsearch_bench", reason="the harness is not installed")
    from typer.testing import CliRunner

    from toolsearch.cli import _app

    shown = CliRunner().invoke(_app(), ["bench", "--no-such-option"], prog_name="toolsearch")
    assert shown.exit_code == 2
    assert "No such option: --no-such-option" in shown.output
    assert "toolsearch bench" in shown.output
