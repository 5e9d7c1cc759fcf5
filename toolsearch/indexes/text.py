"""The one text-preparation step every index backend uses.

A tool becomes: its category (an MCP server's name, a service...) and its name split into
words (``getWeatherForecast``, ``get_weather_forecast``
and ``github.create-issue`` give ``get weather forecast`` / ``github create issue``), the
name kept whole for exact lookup, its description, and the text of its parameters (names
split the same way, descriptions, enum values; nested objects and ``$ref``s walked).
Prepared text is cached by the tool's fingerprint, so it is computed once per process.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

from cachetools import LRUCache

from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "PREPARED_CACHE_SIZE",
    "QUERY_SEPARATORS",
    "STOP_WORDS",
    "PreparedTool",
    "prepare_tool",
    "query_terms",
    "split_name",
]

_SEPARATORS = re.compile(r"[\W_]+")
QUERY_SEPARATORS = re.compile(r"[\s,;:.!?()\[\]{}\"'`/\\|<>=+*&^%$#@~]+")
"""What a query is split into terms on: no query term holds any of these characters."""
_QUERY_SPLIT = QUERY_SEPARATORS

STOP_WORDS = frozenset(
    """a an the is are was were be been being have has had do does did will would could
    should may might must shall can need dare ought used to of in for on with at by from
    as into through during before after above below between and or but if because until
    while although this that these those what which who whom whose i me my we our you your
    he him his she her it its they them their all any both each every some no not only
    just also very too so please want like how when where there here then than about tool
    tools""".split()  # noqa: SIM905
)
"""Words a natural-language query drops (the reference's list, plus question words and
"tool"/"tools", which every request to a tool search contains)."""


_ASCII_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
"""The words of an ASCII segment by :func:`split_name`'s rules: a capital run (its last
capital starts the next word when a lower-case letter follows), a lower-case run with its
capital, a digit run."""


def split_name(name: str) -> list[str]:
    """Split a tool or parameter name into lower-case words (camelCase, snake, kebab, dots,
    digits; any script): ``getHTTPResponse2xx`` gives ``get http response 2 xx``."""
    words: list[str] = []
    for segment in _SEPARATORS.split(name):
        if segment.isascii():  # letters and digits only: the rules below, as one regex
            words.extend(_ASCII_WORDS.findall(segment))
            continue
        if segment.isalpha() and (
            segment.islower() or segment.isupper() or segment[1:].islower()
        ):  # no digit, no lower-to-upper step, no capital run before a lower: one word
            words.append(segment)
            continue
        start = 0
        for i in range(1, len(segment)):
            prev, char = segment[i - 1], segment[i]
            following = segment[i + 1] if i + 1 < len(segment) else ""
            if (
                prev.isdigit() != char.isdigit()
                or (prev.islower() and char.isupper())
                or (prev.isupper() and char.isupper() and following.islower())
            ):
                words.append(segment[start:i])
                start = i
        if segment:
            words.append(segment[start:])
    return [w.lower() for w in words if w]


def query_terms(query: str, *, min_length: int = 2) -> list[str]:
    """The distinct, lower-cased, non-stop-word terms of a natural-language query, in order.

    Terms are split on whitespace and punctuation, and identifiers in the query are split
    like names. When every term is a stop word, the terms are kept (as the reference does).
    """
    raw = [t for t in _QUERY_SPLIT.split(query) if t]
    words: list[str] = []
    for token in raw:
        words.append(token.lower())
        parts = split_name(token)  # before lower-casing, so camelCase still splits
        if len(parts) > 1:
            words.extend(parts)
    kept = [w for w in words if len(w) >= min_length and w not in STOP_WORDS]
    if not kept:
        kept = [w for w in words if w]
    return list(dict.fromkeys(kept))


@dataclass(frozen=True, slots=True)
class PreparedTool:
    """The searchable text of one tool."""

    name: str
    name_words: str
    description: str
    parameters: str
    summary: str
    category: str | None
    category_words: str = ""

    @property
    def full_text(self) -> str:
        """Everything, category and name words first: what embedders read."""
        head = f"{self.category_words} {self.name_words}".strip()
        return "\n".join(p for p in (head, self.description, self.parameters) if p)

    @property
    def embedding_views(self) -> tuple[str, str, str]:
        """The texts a tool's vector is the mean of (:mod:`toolsearch.indexes.views`).

        Everything (:attr:`full_text`); the name words and description without the
        parameters; the category and name words with the summary. A sentence-embedding
        model reads each view as one meaning: parameter lists dilute the whole text, the
        short views lose what only the parameters say, and their mean keeps both (chosen
        leave-one-catalog-out on the development catalogs:
        ``benchmarks/results/retrieval-levers.md``).
        """
        head = f"{self.category_words} {self.name_words}".strip()
        return (
            self.full_text,
            f"{self.name_words}: {self.description}".strip(),
            f"{head}: {self.summary}".strip(),
        )


def _summary(description: str, limit: int = 160) -> str:
    line = description.strip().split("\n", 1)[0].strip()
    sentence = re.split(r"(?<=[.!?])\s", line, maxsplit=1)[0]
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def _is_mapping(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(value, Mapping)``, a plain dict (what JSON gives) decided without the
    abstract class's check."""
    kind = type(value)
    return kind is dict or (kind not in _PLAIN and isinstance(value, Mapping))


_PLAIN = frozenset({type(None), str, list, int, float, bool})
"""JSON's other types: not mappings, known without the abstract class's check."""


def _walk_parameters(
    schema: Any, root: Mapping[str, Any], seen: set[str], depth: int = 0
) -> list[str]:
    """The parameter text of a schema, in document order: names split into words,
    descriptions and titles below the top, string enum values; local ``$ref`` followed
    once per path, eight levels at most. Gathered into one list (no generator per level,
    no call for an absent child): the walk is a large part of a catalog build."""
    out: list[str] = []
    if _is_mapping(schema):
        _collect(schema, root, seen, depth, out)
    return out


def _collect(
    schema: Mapping[str, Any], root: Mapping[str, Any], seen: set[str], depth: int, out: list[str]
) -> None:
    if depth > 8:
        return
    get = schema.get
    ref = get("$ref")
    if isinstance(ref, str) and ref.startswith("#/") and ref not in seen:
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part, {}) if _is_mapping(target) else {}
        if _is_mapping(target):
            _collect(target, root, seen | {ref}, depth + 1, out)
    if depth > 0:
        for key in ("description", "title"):
            value = get(key)
            if isinstance(value, str):
                out.append(value)
    for value in get("enum", ()) or ():
        if isinstance(value, str):
            out.append(value)
    properties = get("properties")
    if _is_mapping(properties):
        for name, sub in properties.items():
            out.append(" ".join(split_name(str(name))))
            if _is_mapping(sub):
                _collect(sub, root, seen, depth + 1, out)
    for key in ("items", "additionalProperties"):
        sub = get(key)
        if _is_mapping(sub):
            _collect(sub, root, seen, depth + 1, out)
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in get(key, ()) or ():
            if _is_mapping(sub):
                _collect(sub, root, seen, depth + 1, out)


_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` as every engine can encode it: lone surrogates (a JSON ``"\\ud800"``
    escape in a catalog file, or a Python string) become U+FFFD, the replacement character,
    which no word, term or pattern confuses with anything else. Tantivy, RE2 and tokenizers
    take UTF-8 only; this is applied once, where tool text and queries enter the engine."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def _prepare(tool: ToolDefinition) -> PreparedTool:
    schema = tool.input_schema
    parameters = " ".join(t for t in _walk_parameters(schema, schema, set()) if t)
    description = clean_text(tool.description or "")
    category = clean_text(tool.category) if tool.category else None
    return PreparedTool(
        name=tool.name,
        name_words=" ".join(split_name(clean_text(tool.name))),
        description=description,
        parameters=clean_text(parameters),
        summary=_summary(description),
        category=category,
        category_words=" ".join(split_name(category)) if category else "",
    )


PREPARED_CACHE_SIZE = 200_000
"""Tools whose prepared text the process keeps (least recently used go first): about a
kilobyte each, so at most a few hundred MB for catalogs this large, which are better
built into artifacts (``toolsearch index build``) than registered tool by tool."""

_CACHE: LRUCache[str, PreparedTool] = LRUCache(PREPARED_CACHE_SIZE)
_CACHE_LOCK = threading.Lock()


def prepare_tool(tool: ToolDefinition) -> PreparedTool:
    """The prepared text of ``tool``, computed once per process per fingerprint."""
    key = tool.fingerprint
    with _CACHE_LOCK:
        found = _CACHE.get(key)
    if found is not None:
        return found
    prepared = _prepare(tool)
    with _CACHE_LOCK:
        _CACHE[key] = prepared
    return prepared
