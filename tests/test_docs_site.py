"""The documentation site builds with ``mkdocs build --strict``: every page of docs/ is in
the nav, every link between pages and every anchor resolves, every link to a repository
file names one that exists (docs/hooks/repo_links.py), and the API reference renders from
the docstrings (mkdocstrings). MkDocs comes with the ``test`` extra (its ``docs`` extra), so
this runs in the test command; it is not skipped when MkDocs is missing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-6000:]
    assert (tmp_path / "index.html").exists()
    reference = (tmp_path / "reference" / "plugins" / "index.html").read_text()
    assert "find_plugin" in reference  # rendered from the docstrings


def test_a_link_to_a_missing_repository_file_fails_the_build(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        import repo_links
    finally:
        sys.path.remove(str(ROOT / "docs" / "hooks"))
    docs = ROOT / "docs"
    page = "[a record](../benchmarks/results/no-such-file.md) [ok](../pyproject.toml#x)\n"
    import logging

    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logger = logging.getLogger("mkdocs.hooks.repo_links")
    logger.addHandler(handler)
    try:
        out = repo_links._rewrite(page, "benchmark.md", docs, "https://example.invalid/ts")
    finally:
        logger.removeHandler(handler)
    assert [r.levelname for r in records] == ["WARNING"]
    assert "no-such-file.md" in records[0].getMessage()
    assert "](https://example.invalid/ts/blob/main/pyproject.toml#x)" in out
    code = "```\n[x](../nope.md)\n```\n"
    assert repo_links._rewrite(code, "benchmark.md", docs, "u") == code  # code is left as is
