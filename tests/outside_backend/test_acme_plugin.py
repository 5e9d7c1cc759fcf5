"""An index kind from an installed outside package is chosen by name everywhere a name is
typed: ``acme_index`` (this folder, with its own ``pyproject.toml`` registering the
``acme`` kind under the entry point group ``toolsearch.index_kinds``) is installed into a
temporary folder with pip, never into the test environment, and every check runs in a
subprocess whose ``PYTHONPATH`` holds that folder: ``make_index("acme")``, the settings'
``index_type``, ``toolsearch index build --kind acme``, ``toolsearch mcp proxy --index
acme``. A broken plugin fails alone with a ``PluginError`` naming its distribution."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DEMO = ROOT / "tests" / "mcp_servers" / "demo_server.py"

TOOLS = [
    {"name": "send_invoice", "description": "Email an invoice to a customer", "input_schema": {}},
    {"name": "get_weather", "description": "The weather forecast for a city", "input_schema": {}},
    {"name": "cancel_order", "description": "Cancel a customer's order", "input_schema": {}},
]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the installed ``acme-index`` distribution (its entry point included)
    and a broken one whose entry point names a module that does not exist."""
    pytest.importorskip("hatchling", reason="installing the example builds it with hatchling")
    target = tmp_path_factory.mktemp("site")
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index"]
    pip += ["--no-build-isolation", "--target", str(target), str(HERE)]
    done = subprocess.run(pip, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    broken = target / "broken_backend-1.0.dist-info"
    broken.mkdir()
    (broken / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-backend\nVersion: 1.0\n")
    (broken / "entry_points.txt").write_text(
        "[toolsearch.index_kinds]\nbroken = no_such_module.kind:KIND\n"
    )
    return target


def _env(site: Path) -> dict[str, str]:
    paths = [str(site), str(ROOT), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}


def _python(site: Path, code: str, cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=_env(site),
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_example_is_not_installed_in_the_test_environment() -> None:
    from importlib.metadata import PackageNotFoundError, distribution

    with pytest.raises(PackageNotFoundError):
        distribution("acme-index")


def test_make_index_and_the_settings_build_the_installed_kind_by_name(
    site: Path, tmp_path: Path
) -> None:
    out = _python(
        site,
        f"""
        from toolsearch.indexes import make_index
        from toolsearch.indexes.kinds import kind_names
        from toolsearch.search import ToolSearchRequest
        from toolsearch.settings import ToolSearchSettings, tool_search_advisor
        from toolsearch.tools import ToolDefinition

        tools = [ToolDefinition(**t) for t in {TOOLS!r}]
        print("kinds", *kind_names())
        index = make_index("acme")
        index.index_tools("s", tools)
        found = index.search(ToolSearchRequest("s", "email the invoice"))
        print("make_index", type(index).__name__, found.tool_names[0], index.search_type)
        advisor = tool_search_advisor(ToolSearchSettings(index_type="acme"))
        print("settings", advisor.tool_index.search_type)
        """,
        tmp_path,
    )
    lines = out.splitlines()
    assert lines[0].split()[1:] == ["regex", "bm25", "vector", "hybrid", "milvus", "acme"]
    assert lines[1] == "make_index SessionIndex send_invoice acme-keyword"
    assert lines[2] == "settings acme-keyword"


def test_index_build_writes_the_installed_kind(site: Path, tmp_path: Path) -> None:
    source = tmp_path / "tools.jsonl"
    source.write_text("".join(json.dumps(t) + "\n" for t in TOOLS))
    command = [sys.executable, "-m", "toolsearch.cli", "index", "build", str(source)]
    command += ["--kind", "acme", "--out", str(tmp_path / "acme-index")]
    done = subprocess.run(
        command, env=_env(site), cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == f"built {tmp_path / 'acme-index'}: 3 tools, acme"
    out = _python(
        site,
        f"""
        from acme_index.kind import load_index
        from toolsearch.search import ToolSearchRequest

        index = load_index({str(tmp_path / "acme-index")!r}, "s")
        print(index.search(ToolSearchRequest("s", "weather in a city")).tool_names[0])
        """,
        tmp_path,
    )
    assert out.strip() == "get_weather"


def test_index_build_lists_the_installed_kind_when_asked_for_an_unknown_one(
    site: Path, tmp_path: Path
) -> None:
    source = tmp_path / "tools.jsonl"
    source.write_text(json.dumps(TOOLS[0]) + "\n")
    command = [sys.executable, "-m", "toolsearch.cli", "index", "build", str(source)]
    command += ["--kind", "nope", "--out", str(tmp_path / "x")]
    done = subprocess.run(
        command, env=_env(site), cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert "bm25, vector, hybrid, acme" in " ".join(done.stderr.split())


def test_the_mcp_proxy_serves_the_installed_kind(site: Path, tmp_path: Path) -> None:
    pytest.importorskip("mcp", reason="the proxy needs toolsearch[mcp]")
    config = tmp_path / "servers.toml"
    config.write_text(
        f"[servers.alpha]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(DEMO))}, '--name', 'alpha']\n"
    )
    out = _python(
        site,
        f"""
        import asyncio, json, os, sys
        from mcp import Client, StdioServerParameters

        proxy = StdioServerParameters(
            command=sys.executable,
            args=["-m", "toolsearch.cli", "mcp", "proxy", "--config", {str(config)!r},
                  "--index", "acme"],
            env=dict(os.environ),
        )

        async def run():
            async with Client(proxy, read_timeout_seconds=60) as client:
                found = await client.call_tool("search_tools", {{"query": "add two integers"}})
                return found.content[0].text

        print(asyncio.run(asyncio.wait_for(run(), 120)))
        """,
        tmp_path,
    )
    found = json.loads(out)
    # one server: names unprefixed; acme matches every tool sharing a word with the query
    assert found["tools"][0]["name"] == "add"
    assert found["total_matches"] == 3


def test_a_broken_plugin_fails_alone_naming_its_distribution(site: Path, tmp_path: Path) -> None:
    out = _python(
        site,
        """
        from toolsearch.errors import PluginError
        from toolsearch.indexes import make_index
        from toolsearch.indexes.kinds import kind_names

        try:
            make_index("broken")
        except PluginError as exc:
            print(exc.distribution, exc.name, "|", exc)
        print(type(make_index("regex")).__name__, *kind_names())
        """,
        tmp_path,
    )
    first, second = out.splitlines()
    assert first.startswith("broken-backend broken | ")
    assert "no_such_module" in first
    assert second == "RegexToolIndex regex bm25 vector hybrid milvus acme"


def test_the_command_line_names_a_broken_plugin_in_one_line(site: Path, tmp_path: Path) -> None:
    """No traceback: ``--index broken`` is a usage error (2), ``--kind broken`` a failure of
    something installed (1); both name the distribution."""
    config = tmp_path / "servers.toml"
    config.write_text('[servers.alpha]\ncommand = "true"\n')
    source = tmp_path / "tools.jsonl"
    source.write_text(json.dumps(TOOLS[0]) + "\n")
    cli = [sys.executable, "-m", "toolsearch.cli"]
    for command, code in (
        (["mcp", "proxy", "--config", str(config), "--index", "broken"], 2),
        (["index", "build", str(source), "--kind", "broken", "--out", str(tmp_path / "x")], 1),
    ):
        done = subprocess.run(
            [*cli, *command],
            env=_env(site),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
            stdin=subprocess.DEVNULL,
            timeout=120,
        )
        said = " ".join(done.stderr.split())
        assert done.returncode == code, said
        assert "Traceback" not in said
        assert "'broken-backend'" in said
