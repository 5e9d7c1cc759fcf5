"""The code blocks of every page (README, CONTRIBUTING, docs/) run as written.

Python blocks run, each page's in order in one namespace; JSON and TOML blocks parse; any
other block (a shell command, a diff) and a Python block that needs a service, a key or
another process carries the marker ``<!-- not run: REASON -->`` on the line right above
its fence, and a reason that says which test runs it instead names a test that exists.
Some pages' examples are also checked here against what their text says they print.
"""

import json
import os
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_index_engine_example_prints_what_the_text_says(capsys):
    text = (ROOT / "docs" / "index-engine.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert blocks
    namespace: dict = {"__name__": "docs"}
    for block in blocks:
        exec(compile(block, "docs/index-engine.md", "exec"), namespace)
    assert capsys.readouterr().out.splitlines() == ["['archive']"]
    assert "prints `['archive']`" in text


def test_front_doors_example_prints_what_the_text_says(capsys):
    text = (ROOT / "docs" / "front-doors.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    printed = re.findall(r"prints\n\n```text\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) == len(printed) == 2
    for block in blocks:
        exec(compile(block, "docs/front-doors.md", "exec"), {"__name__": "docs"})
    assert capsys.readouterr().out == "".join(printed)


def test_testing_examples_pass_their_contracts_as_an_outside_package(tmp_path):
    """Each Python block of docs/testing.md is the file its first line names; in a folder of
    their own (no repository conftest), pytest runs the contracts on them and they pass."""
    import subprocess
    import sys

    text = (ROOT / "docs" / "testing.md").read_text()
    blocks = re.findall(r"```python\n# (\S+\.py)\n(.*?)```", text, flags=re.DOTALL)
    assert [name for name, _ in blocks] == [
        "my_index.py",
        "test_my_index.py",
        "my_kind.py",
        "test_my_store.py",
        "test_my_tools.py",
    ]
    for name, code in blocks:
        (tmp_path / name).write_text(code)
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(
        pytest,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    summary = done.stdout.strip().splitlines()[-1]
    assert "failed" not in summary, summary
    assert "skipped" not in summary, summary
    index_tests = re.search(r"runs the contract's (\d+) tests", text)
    assert index_tests is not None
    counted = subprocess.run(
        [*pytest, "--collect-only", "test_my_index.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert f"{index_tests.group(1)} tests collected" in counted.stdout


def test_testing_walks_the_backend_to_a_kind_typed_by_name(tmp_path):
    """docs/testing.md's package (my_index.py, my_kind.py and its pyproject.toml), installed
    with pip into a folder of its own, is then chosen by name: ``make_index``, the
    settings' ``index_type`` from the environment, and ``index build --kind mybackend``."""
    import json
    import os
    import subprocess
    import sys

    text = (ROOT / "docs" / "testing.md").read_text()
    files = dict(re.findall(r"```(?:python|toml)\n# (\S+\.(?:py|toml))\n(.*?)```", text, re.S))
    package = tmp_path / "package"
    package.mkdir()
    for name in ("my_index.py", "my_kind.py", "pyproject.toml"):
        (package / name).write_text(files[name])
    site = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index"]
    pip += ["--no-build-isolation", "--target", str(site), str(package)]
    done = subprocess.run(pip, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    paths = [str(site), str(ROOT), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    env["TOOLSEARCH_TOOL_SEARCH__INDEX_TYPE"] = "mybackend"
    code = (
        "from toolsearch.indexes import make_index\n"
        "from toolsearch.settings import load_settings, tool_search_advisor\n"
        "print(make_index('mybackend').search_type)\n"
        "print(tool_search_advisor(load_settings().tool_search).tool_index.search_type)\n"
    )
    run = dict(env=env, cwd=tmp_path, capture_output=True, text=True, check=False)
    done = subprocess.run([sys.executable, "-c", code], **run)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["word-overlap", "word-overlap"]
    source = tmp_path / "tools.jsonl"
    source.write_text(json.dumps({"name": "get_weather", "description": "Weather"}) + "\n")
    build = [sys.executable, "-m", "toolsearch.cli", "index", "build", str(source)]
    build += ["--kind", "mybackend", "--out", str(tmp_path / "mine")]
    done = subprocess.run(build, **run)
    assert done.returncode == 0, done.stdout + done.stderr
    written = (tmp_path / "mine" / "tools.jsonl").read_text()
    assert json.loads(written) == {"name": "get_weather", "description": "Weather"}


# -- every code block of every page --------------------------------------------------------

PAGES = sorted(
    [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").rglob("*.md")],
    key=lambda p: str(p),
)
"""Every page of the documentation: the README, CONTRIBUTING.md and docs/ (the site)."""

FENCE = re.compile(r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<code>.*?)^```[ \t]*$", re.S | re.M)
NOT_RUN = re.compile(r"<!-- not run: (?P<reason>[^>]+?) -->\s*\n```", re.S)
"""The opt-out marker, on the line right above a fence: ``<!-- not run: REASON -->``."""

RUN = {"python", "py"}
"""Executed, each page's blocks in order in one namespace, in a subprocess."""
PARSED = {"json": json.loads, "toml": tomllib.loads}
"""Data: must parse."""
PROSE = {"", "text"}
"""Printed output or a listing: not code."""


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    code: str
    not_run: str | None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text()
    marked = {m.end() - 3: m.group("reason") for m in NOT_RUN.finditer(text)}
    return [
        Block(
            page,
            text.count("\n", 0, m.start()) + 1,
            m.group("lang"),
            m.group("code"),
            marked.get(m.start()),
        )
        for m in FENCE.finditer(text)
    ]


def _page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


def test_every_code_block_runs_or_says_why_not() -> None:
    """A block of another language than Python, data or output (a shell command, a diff)
    carries the marker with its reason; a reason that names a test names one that exists."""
    problems = []
    for page in PAGES:
        for block in blocks(page):
            if block.not_run is not None:
                tested = re.search(r"tests/[\w/]+\.py", block.not_run)
                if tested and not (ROOT / tested.group(0)).exists():
                    problems.append(f"{block.where}: {tested.group(0)} does not exist")
            elif block.lang not in RUN | set(PARSED) | PROSE:
                problems.append(f"{block.where}: a ```{block.lang} block without a marker")
    assert problems == []


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_the_data_blocks_parse(page: Path) -> None:
    for block in blocks(page):
        if block.lang in PARSED and block.not_run is None:
            try:
                PARSED[block.lang](block.code)
            except ValueError as exc:
                pytest.fail(f"{block.where}: {exc}")


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_the_python_blocks_run(page: Path, tmp_path: Path) -> None:
    """The page's Python blocks, in order, in one namespace, in a fresh interpreter whose
    working folder is a scratch folder that sees the repository's top-level entries (a
    page names files relative to the repository; what it writes stays in the scratch)."""
    run = [b for b in blocks(page) if b.lang in RUN and b.not_run is None]
    if not run:
        return
    for entry in ROOT.iterdir():
        if not entry.name.startswith("."):
            (tmp_path / entry.name).symlink_to(entry)
    script = ["namespace = {'__name__': '__main__'}"]
    for block in run:
        script.append(f"exec(compile({block.code!r}, {block.where!r}, 'exec'), namespace)")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    for variable in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        env.pop(variable, None)  # offline: no page may reach a real API
    done = subprocess.run(
        [sys.executable, "-c", "\n".join(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
