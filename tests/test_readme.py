"""The README's code runs as written, and the quick-start example prints its answer; the
manual it used to carry (docs/manual.md) runs in order and prints what it printed."""

import re
import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_readme_python_blocks_run_in_order(capsys):
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) == 1  # the quick start; the manual (docs/manual.md) has the rest
    namespace: dict = {"__name__": "readme"}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)
    printed = capsys.readouterr().out.splitlines()
    assert printed == ["Done: Alarm set for 2026-11-30T09:10:00."]


def test_the_manual_python_blocks_run_in_order(capsys):
    """The README's manual moved to docs/manual.md: its blocks, in order, print what the
    README's printed before the move."""
    text = (ROOT / "docs" / "manual.md").read_text()
    blocks = re.findall(r"(<!-- not run:[^\n]*\n)?```python\n(.*?)```", text, flags=re.DOTALL)
    namespace: dict = {"__name__": "manual"}
    for marker, block in blocks:
        if not marker:
            exec(compile(block, "docs/manual.md", "exec"), namespace)
    printed = capsys.readouterr().out.splitlines()
    assert printed == [
        "Done: Alarm set for 2026-11-30T09:10:00.",  # quick start (repeated)
        "looked up {'id': 'r-1'} (saw 7 of 31 tools)",  # tool search
        "['city']",  # tools
        '{"city":"Paris","unit":"celsius","tenant":"acme"}',
        "Done: Alarm set for 2026-11-30T09:10:00.",  # client with defaults
        "Done: Alarm set for 2026-11-30T09:10:00.",  # manual loop
        "['user', 'assistant']",  # memory
        "ticket_archive",  # standalone index
        "ticket_archive",  # catalog index
    ]


def test_the_manual_repeats_the_quick_start_as_the_readme_has_it():
    readme = (ROOT / "README.md").read_text()
    manual = (ROOT / "docs" / "manual.md").read_text()
    [quick_start] = re.findall(r"```python\n.*?```", readme, flags=re.DOTALL)
    assert manual.count(quick_start) == 1


def test_the_readme_fits_on_a_few_screens():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 200


def test_quickstart_example_prints_the_answer(capsys):
    runpy.run_path(str(ROOT / "examples" / "quickstart.py"), run_name="__main__")
    assert capsys.readouterr().out.strip() == "Done: Alarm set for 2026-11-30T09:10:00."


def test_readme_commands_match_ci():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    commands = re.findall(r"```bash\n(.*?)\n```", readme, flags=re.DOTALL)
    test_command = next(c for c in commands if "pytest" in c)
    assert test_command in ci


def test_the_tool_search_example_runs_on_its_own(capsys):
    """A reader copies one block: the tool-search example needs nothing from the quick
    start above it (issue 34: it used the quick start's imports without saying so)."""
    text = (ROOT / "docs" / "manual.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    [block] = [b for b in blocks if "search_client" in b]
    exec(compile(block, "docs/manual.md", "exec"), {"__name__": "manual"})
    assert capsys.readouterr().out.strip() == "looked up {'id': 'r-1'} (saw 7 of 31 tools)"


def test_the_readme_links_name_files_that_exist():
    """README.md is not a page of the site (mkdocs checks the site's links): its own links
    to repository files are checked here."""
    text = (ROOT / "README.md").read_text()
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    local = [t.partition("#")[0] for t in targets if "://" not in t and not t.startswith("#")]
    assert local
    assert [t for t in local if not (ROOT / t).exists()] == []


def test_the_layout_names_only_folders_that_exist():
    """Issue 46: the layout listed toolsearch/bench/, which had moved to the harness. Every
    folder it names exists: top-level ones at the root, indented ones under the top-level
    folder they follow."""
    text = (ROOT / "README.md").read_text()
    layout = text.split("## Layout", 1)[1].split("```", 2)[1]
    top = None
    named = []
    for line in layout.splitlines():
        if not line.strip() or line.startswith("text"):
            continue
        if not line.startswith(" "):
            top = line.split(" ", 1)[0]
            if top.endswith("/"):
                named.append(top)
            continue
        entries = line.strip().split("  ", 1)[0]
        for entry in entries.split():
            if entry.endswith("/") and top is not None:
                named.append(top + entry)
    assert "toolsearch/integrations/" in named, named
    assert "benchmarks/harness/" in named, named
    assert [n for n in named if not (ROOT / n).is_dir()] == []
