"""Reading tool and parameter descriptions out of docstrings (Google, NumPy and Sphinx styles).

A small parser of its own rather than ``docstring_parser``: descriptions enter a tool's
fingerprint (index caches, session keys), so they must not change with whether an optional
package is installed, and the core stays free of dependencies. Sections it knows are kept
out of the tool description; parameter entries fill the parameters' descriptions.
"""

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
_NUMPY_ARG_SECTIONS = {
    "parameters",
    "params",
    "arguments",
    "args",
    "other parameters",
    "keyword arguments",
}
_NUMPY_SECTIONS = _NUMPY_ARG_SECTIONS | {
    "returns",
    "return",
    "yields",
    "receives",
    "raises",
    "warns",
    "warnings",
    "see also",
    "notes",
    "references",
    "examples",
    "example",
    "attributes",
    "methods",
}
_UNDERLINE = re.compile(r"^-{3,}$")
_NUMPY_ARG = re.compile(r"^(?P<names>\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?::.*)?$")


@dataclass(frozen=True)
class ParsedDocstring:
    """The summary text of a docstring and its per-parameter descriptions."""

    description: str = ""
    params: dict[str, str] = field(default_factory=dict)


def parse_docstring(doc: str | None) -> ParsedDocstring:
    """Split a docstring into its description and its parameter entries: Google
    (``Args:``), NumPy (``Parameters`` over a ``----------`` line) and Sphinx
    (``:param x:``). Other sections (returns, raises, examples, notes...) are left out."""
    if not doc:
        return ParsedDocstring()
    lines = inspect.cleandoc(doc).splitlines()
    description: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: list[str] = []  # the NumPy entry being read (``x, y : int`` names two)
    google: str | None = None  # the Google or Sphinx entry being read
    arg_indent: int | None = None
    skip = False
    for number, raw in enumerate(lines):
        if skip:  # a NumPy section's underline
            skip = False
            continue
        line = raw.rstrip()
        stripped = line.strip()
        following = lines[number + 1].strip() if number + 1 < len(lines) else ""
        if (
            not raw.startswith((" ", "\t"))
            and stripped.lower() in _NUMPY_SECTIONS
            and _UNDERLINE.match(following)
        ):
            section = "numpy-args" if stripped.lower() in _NUMPY_ARG_SECTIONS else "numpy-other"
            current, skip = [], True
            continue
        if section == "numpy-args":
            if not stripped:
                continue
            indented = raw.startswith((" ", "\t"))
            entry = _NUMPY_ARG.match(stripped) if not indented else None
            if entry:
                current = [n.strip().lstrip("*") for n in entry.group("names").split(",")]
                for name in current:
                    params[name] = ""
            elif current:
                for name in current:
                    params[name] = f"{params[name]} {stripped}".strip()
            continue
        if section == "numpy-other":
            continue
        header = _SECTION.match(stripped) if not raw.startswith((" ", "\t")) else None
        if header:
            section = header.group(1).lower()
            google, arg_indent = None, None
            continue
        sphinx = _SPHINX_PARAM.match(stripped)
        if sphinx:
            section, google = "sphinx", sphinx.group("name")
            params[google] = sphinx.group("text").strip()
            continue
        if _SPHINX_FIELD.match(stripped):
            section, google = "sphinx-other", None
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
                google = match.group("name")
                params[google] = match.group("text").strip()
            elif google is not None:
                params[google] = f"{params[google]} {stripped}".strip()
        elif section == "sphinx" and google is not None and stripped:
            params[google] = f"{params[google]} {stripped}".strip()
    text = "\n".join(description).strip()
    return ParsedDocstring(description=text, params={k: v for k, v in params.items() if v})
