"""Tool-name rules shared by every source of tools (catalog files, OpenAPI specs, MCP servers).

Providers accept tool names matching ``^[a-zA-Z0-9_-]{1,64}$`` (:data:`TOOL_NAME_PATTERN`).
Names from elsewhere are brought into that shape by two rules, so one tool gets one name
whether it comes from a live MCP session, a ``tools/list`` dump or a built catalog:

* :func:`sanitize_name`: every run of other characters becomes ``_``;
* :func:`fit_name`: a name over 64 characters keeps its head and ends in ``_`` plus 8 hex
  digits of the sha256 of the whole name (deterministic, and two long names that share a
  head stay distinct).

A tool whose name clashes with another source's is renamed
``<prefix><CLASH_SEPARATOR><name>`` (:func:`qualified_name`), the prefix being the
server's (or API's) name reduced by :func:`server_prefix`.
"""

from __future__ import annotations

import hashlib
import re

__all__ = [
    "CLASH_SEPARATOR",
    "MAX_NAME_LENGTH",
    "TOOL_NAME_PATTERN",
    "fit_name",
    "qualified_name",
    "sanitize_name",
    "server_prefix",
    "short_hash",
]

MAX_NAME_LENGTH = 64
TOOL_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

CLASH_SEPARATOR = "__"
"""Between the server/API name and the tool name of a renamed tool: ``github__search``."""

_PREFIX_LENGTH = 24
_INVALID_RUN = re.compile(r"[^a-zA-Z0-9_-]+")
_UNDERSCORES = re.compile(r"_{2,}")


def short_hash(text: str, length: int = 8) -> str:
    """The first ``length`` hex digits of the sha256 of ``text``: stable across runs."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


def sanitize_name(text: str) -> str:
    """``text`` with every run of characters outside ``[a-zA-Z0-9_-]`` turned into ``_``.

    Repeated and edge underscores are dropped; the result may be empty or too long (see
    :func:`fit_name`).
    """
    name = _INVALID_RUN.sub("_", text)
    return _UNDERSCORES.sub("_", name).strip("_")


def fit_name(name: str, suffix: str = "") -> str:
    """``name + suffix`` cut to 64 characters, deterministically.

    Over-long names keep their head and end in ``_`` + 8 hex digits of the sha256 of the
    whole uncut name, so two long names that share a head stay distinct.
    """
    whole = name + suffix
    if len(whole) <= MAX_NAME_LENGTH:
        return whole
    tail = "_" + short_hash(whole)
    head = whole[: MAX_NAME_LENGTH - len(tail)].rstrip("_-")
    return head + tail


def server_prefix(server: str) -> str:
    """The prefix a clashing tool of ``server`` gets (before :data:`CLASH_SEPARATOR`):
    the name sanitized, at most 24 characters, ``"server"`` when nothing is left."""
    name = sanitize_name(server) or "server"
    return name[:_PREFIX_LENGTH].rstrip("_-")


def qualified_name(prefix: str, name: str, separator: str = CLASH_SEPARATOR) -> str:
    """``<prefix><separator><name>`` cut by :func:`fit_name`; ``prefix`` is already reduced
    (by :func:`server_prefix`, or an API name)."""
    return fit_name(f"{prefix}{separator}{name}")
