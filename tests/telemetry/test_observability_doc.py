"""docs/observability.md: its Python examples run as written (in a fresh process, since
they set the global tracer provider) and print what the page shows."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "observability.md"


def normalized(lines: list[str]) -> list[str]:
    """Durations vary from run to run (a slow run's longer duration shifts the padding
    before it, so the padding goes too); so would session hashes, were they shown."""
    out = []
    for line in lines:
        line = re.sub(r"\s*\d+\.\d\d ms", " X ms", line)
        line = re.sub(r"id_hash=[0-9a-f]{16}", "id_hash=H", line)
        out.append(line.rstrip())
    return out


def test_examples_print_what_the_page_shows(tmp_path):
    text = DOC.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) >= 4
    script = tmp_path / "observability_example.py"
    script.write_text("\n".join(blocks))
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert out.returncode == 0, out.stderr
    printed = normalized(out.stdout.splitlines())
    shown = re.findall(r"```text\n(.*?)```", text, flags=re.DOTALL)
    tree = normalized(shown[0].strip().splitlines())
    assert tree[0].startswith("invoke_agent chat_client")
    start = printed.index(tree[0])
    assert printed[start : start + len(tree)] == tree
    augmentation = shown[-1].strip().splitlines()
    assert printed[-len(augmentation) :] == augmentation
    assert '"name": "retrieval Bm25ToolIndex"' in out.stdout  # the console exporter's JSON
    assert '"gen_ai.conversation.id": "user-42"' in out.stdout


def test_the_page_keeps_the_search_logs_heading():
    assert "\n## Search logs\n" in DOC.read_text()
