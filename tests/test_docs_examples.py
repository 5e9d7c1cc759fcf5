"""The Python examples in docs/ run as written and print what the text says."""

import re
from pathlib import Path

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
    [block] = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    [printed] = re.findall(r"prints\n\n```text\n(.*?)```", text, flags=re.DOTALL)
    exec(compile(block, "docs/front-doors.md", "exec"), {"__name__": "docs"})
    assert capsys.readouterr().out == printed


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
