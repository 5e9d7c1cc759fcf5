"""The Python blocks of docs/integrations/ run as written and print what the page says.

Each page's ```python blocks run in order in one namespace; a ```text block right after a
python block is what that block prints.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "integrations"
BLOCK = re.compile(r"```(python|text)\n(.*?)```", flags=re.DOTALL)

PAGES = {
    "pydantic-ai.md": ("pydantic_ai",),
    "langgraph.md": ("langchain_core", "langgraph", "langgraph_bigtool"),
    "langchain.md": ("langchain",),
    "openai-agents.md": ("agents",),
    "sdk-loops.md": ("openai", "anthropic", "google.genai"),
}


def test_every_page_is_tested() -> None:
    assert sorted(p.name for p in DOCS.glob("*.md")) == sorted(PAGES)


@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_page_runs_and_prints_what_it_says(
    page: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # the pages name files relative to the repository
    for module in PAGES[page]:
        pytest.importorskip(module, reason=f"{module} is not installed")
    blocks = BLOCK.findall((DOCS / page).read_text())
    assert any(kind == "python" for kind, _ in blocks)
    namespace: dict[str, object] = {"__name__": "docs"}
    ran = 0
    for i, (kind, code) in enumerate(blocks):
        if kind != "python":
            continue
        exec(compile(code, f"docs/integrations/{page} block {i}", "exec"), namespace)
        out = capsys.readouterr().out
        ran += 1
        following = blocks[i + 1] if i + 1 < len(blocks) else None
        if following is not None and following[0] == "text":
            assert out.splitlines() == following[1].splitlines(), f"block {i} of {page}"
    assert ran
