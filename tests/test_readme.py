"""The README's code runs as written, and the quick-start example prints its answer."""

import re
import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_readme_python_blocks_run_in_order(capsys):
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) >= 6
    namespace: dict = {"__name__": "readme"}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)
    printed = capsys.readouterr().out.splitlines()
    assert printed == [
        "Done: Alarm set for 2026-11-30T09:10:00.",  # quick start
        "['city']",  # tools
        '{"city":"Paris","unit":"celsius","tenant":"acme"}',
        "Done: Alarm set for 2026-11-30T09:10:00.",  # client with defaults
        "Done: Alarm set for 2026-11-30T09:10:00.",  # manual loop
        "['user', 'assistant']",  # memory
        "looked up {'id': 'r-1'} (saw 4 of 31 tools)",  # tool search
        "ticket_archive",  # standalone index
        "ticket_archive",  # catalog index
    ]


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
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    [block] = [b for b in blocks if "search_client" in b]
    exec(compile(block, "README.md", "exec"), {"__name__": "readme"})
    assert capsys.readouterr().out.strip() == "looked up {'id': 'r-1'} (saw 4 of 31 tools)"


def test_the_layout_names_only_folders_that_exist():
    """Issue 46: the layout listed toolsearch/bench/, which had moved to the harness."""
    text = (ROOT / "README.md").read_text()
    layout = text.split("## Layout", 1)[1].split("```", 2)[1]
    package = layout.split("docs/", 1)[0]
    named = set(re.findall(r"(?<![\w/.])([a-z_]+)/(?=[ ,;:)]|$)", package, flags=re.MULTILINE))
    named -= {"toolsearch"}
    assert named, layout
    missing = sorted(n for n in named if not (ROOT / "toolsearch" / n).is_dir())
    assert missing == [], missing
    for line in layout.splitlines():
        top = line.split(" ", 1)[0]
        if top.endswith("/"):
            assert (ROOT / top).is_dir(), top
    assert (ROOT / "benchmarks" / "harness" / "toolsearch_bench").is_dir()
