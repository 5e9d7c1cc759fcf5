"""MkDocs hook: a docs page's link to a repository file outside ``docs/`` (a benchmark
record, an example, a deploy file) points at that file in the repository, and a link to a
file that does not exist fails the strict build.

MkDocs checks links between pages of ``docs/`` itself; a relative link that climbs out of
``docs/`` (``../benchmarks/results/retrieval.md``) is one it cannot follow. This hook
resolves each such link against the repository: when the file exists, the link becomes
``{repo_url}/blob/main/PATH`` (anchor kept); when it does not, a warning names the page
and the link, and ``mkdocs build --strict`` stops.
"""

from __future__ import annotations

import logging
import posixpath
import re
from pathlib import Path
from typing import Any

_log = logging.getLogger("mkdocs.hooks.repo_links")

_LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", flags=re.DOTALL | re.MULTILINE)


def _rewrite(markdown: str, page_uri: str, docs: Path, repo_url: str) -> str:
    root = docs.parent

    def replace(match: re.Match[str]) -> str:
        target = match.group("target")
        if "://" in target or target.startswith(("#", "/", "mailto:")):
            return match.group(0)
        path, _, anchor = target.partition("#")
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(page_uri), path))
        if not joined.startswith("../"):
            return match.group(0)  # a page of docs/: MkDocs checks it
        relative = posixpath.normpath(posixpath.join("docs", joined))
        if not (root / relative).exists():
            _log.warning("Doc file '%s' links to '%s': no such repository file", page_uri, target)
            return match.group(0)
        url = f"{repo_url.rstrip('/')}/blob/main/{relative}" + (f"#{anchor}" if anchor else "")
        return f"]({url})"

    pieces = []
    last = 0
    for fence in _FENCE.finditer(markdown):  # code blocks are left as written
        pieces.append(_LINK.sub(replace, markdown[last : fence.start()]))
        pieces.append(fence.group(0))
        last = fence.end()
    pieces.append(_LINK.sub(replace, markdown[last:]))
    return "".join(pieces)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    del files
    docs = Path(config["docs_dir"])
    return _rewrite(markdown, page.file.src_uri, docs, config["repo_url"] or "")
