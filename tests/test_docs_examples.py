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
