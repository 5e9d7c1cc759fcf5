"""Reading tool and parameter descriptions out of docstrings (Google and Sphinx styles)."""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

__all__ = ["ParsedDocstring", "parse_docstring"]

_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Returns|Return|Yields|Raises|Examples?|Notes?|"
    r"Attributes|See Also|Warnings?)\s*:\s*$",
    re.IGNORECASE,
)
_ARG_SECTIONS = {"args", "arguments", "parameters", "params"}
_GOOGLE_ARG = re.compile(r"^\*{0,2}(?P<name>\w+)\s*(\([^)]*\))?\s*:\s*(?P<text>.*)$")
_SPHINX_PARAM = re.compile(r"^:param\s+(?:[\w\[\], |.]+\s+)?(?P<name>\w+)\s*:\s*(?P<text>.*)$")
_SPHINX_FIELD = re.compile(r"^:(returns?|rtype|raises?|type)\b")


@dataclass(frozen=True)
class ParsedDocstring:
    """The summary text of a docstring and its per-parameter descriptions."""

    description: str = ""
    params: dict[str, str] = field(default_factory=dict)


def parse_docstring(doc: str | None) -> ParsedDocstring:
    """Split a docstring into its description and ``Args:`` / ``:param:`` entries."""
    if not doc:
        return ParsedDocstring()
    lines = inspect.cleandoc(doc).splitlines()
    description: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    arg_indent: int | None = None
    for raw in lines:
        line = raw.rstrip()
        stripped = line.strip()
        header = _SECTION.match(stripped) if not raw.startswith((" ", "\t")) else None
        if header:
            section = header.group(1).lower()
            current, arg_indent = None, None
            continue
        sphinx = _SPHINX_PARAM.match(stripped)
        if sphinx:
            section, current = "sphinx", sphinx.group("name")
            params[current] = sphinx.group("text").strip()
            continue
        if _SPHINX_FIELD.match(stripped):
            section, current = "sphinx-other", None
            continue
        if section is None:
            description.append(line)
        elif section in _ARG_SECTIONS:
            if not stripped:
                continue
            indent = len(line) - len(line.lstrip())
            match = _GOOGLE_ARG.match(stripped)
            if match and (arg_indent is None or indent <= arg_indent):
                arg_indent = indent
                current = match.group("name")
                params[current] = match.group("text").strip()
            elif current is not None:
                params[current] = f"{params[current]} {stripped}".strip()
        elif section == "sphinx" and current is not None and stripped:
            params[current] = f"{params[current]} {stripped}".strip()
    text = "\n".join(description).strip()
    return ParsedDocstring(description=text, params=params)
