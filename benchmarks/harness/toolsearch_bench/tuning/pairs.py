"""Training pairs for tuning an embedder to tool search, made from a tool catalog alone.

Real requests rarely repeat a tool's wording; they describe a goal in a sentence. A tool
catalog already holds sentences like that: an operation's one-line summary ("Get a list
of symbols for which we provide real-time quotes"). :func:`training_pairs` turns each
tool into one (query, document) pair: the query is the description's first paragraph
(or, without a blank line, its first sentence); the document is the text the vector index
embeds for the tool (:func:`~toolsearch.indexes.text.prepare_tool`) with that summary
taken out, so the model must match a request to a name, the rest of the description and
the parameters, as at search time.

No queries or relevance labels are needed, so a catalog that no evaluation uses (the
OpenAPI directory, or your own specs) can teach the model the request-to-tool mapping.
Where real requests with their tools exist (your own logs, or a public data set that you
do not evaluate on), :func:`labeled_pairs` turns each (request, tool) into a pair whose
document is the tool's whole text; mixing them in teaches the model how people ask.
"""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from toolsearch.indexes.text import prepare_tool
from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "TrainingPair",
    "labeled_pairs",
    "read_pairs",
    "split_summary",
    "training_pairs",
    "write_pairs",
]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_HTTP_LINE = ("GET /", "POST /", "PUT /", "DELETE /", "PATCH /", "HEAD /", "OPTIONS /")


@dataclass(frozen=True)
class TrainingPair:
    """One request-like ``query`` and the ``document`` text of the tool it should find.

    ``group`` is the tool's category (its API or server): the sampling cap is per group.
    """

    query: str
    document: str
    group: str = ""


def split_summary(description: str) -> tuple[str, str]:
    """``(summary, rest)``: the first paragraph, else the first sentence, and the rest."""
    text = description.strip()
    if "\n\n" in text:
        summary, rest = text.split("\n\n", 1)
    else:
        parts = _SENTENCE_END.split(text, maxsplit=1)
        summary, rest = parts[0], (parts[1] if len(parts) > 1 else "")
    return summary.strip(), rest.strip()


def training_pairs(
    tools: Iterable[ToolDefinition],
    *,
    per_group: int | None = 15,
    limit: int | None = None,
    min_words: int = 3,
    max_words: int = 40,
    seed: int = 0,
) -> list[TrainingPair]:
    """Sample pairs from ``tools``, at most ``per_group`` per category, in a seeded order.

    Capping per group keeps the few huge APIs (cloud providers with thousands of
    operations) from crowding out the long tail. A summary is skipped when it is shorter
    than ``min_words`` or longer than ``max_words`` words, when it repeats an earlier one
    (case-insensitively), or when it is only an HTTP line such as ``GET /users``.
    The result depends only on the tools' order and ``seed``.
    """
    if per_group is not None and per_group < 1:
        raise ValueError(f"per_group must be at least 1 (or None for no cap), got {per_group}")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1 (or None), got {limit}")
    if not 1 <= min_words <= max_words:
        raise ValueError(f"need 1 <= min_words <= max_words, got {min_words} and {max_words}")
    rng = random.Random(seed)
    groups: dict[str, list[ToolDefinition]] = defaultdict(list)
    for tool in tools:
        groups[tool.category or ""].append(tool)
    sampled: list[ToolDefinition] = []
    for members in groups.values():
        rng.shuffle(members)
        sampled += members if per_group is None else members[:per_group]
    rng.shuffle(sampled)
    pairs: list[TrainingPair] = []
    seen: set[str] = set()
    for tool in sampled:
        pair = _pair(tool, min_words, max_words, seen)
        if pair is None:
            continue
        pairs.append(pair)
        if limit is not None and len(pairs) >= limit:
            break
    return pairs


def labeled_pairs(
    tools: Iterable[ToolDefinition],
    requests: Iterable[tuple[str, Sequence[str]]],
    *,
    group: str = "labeled",
) -> list[TrainingPair]:
    """One pair per (request, tool it needs): the request and the tool's whole text.

    ``requests`` holds ``(request text, names of the tools it needs)``. A request that
    needs two tools gives two pairs (training never uses one as the other's negative);
    a repeated (request, tool) gives one. Raises ``ValueError`` naming the request when a
    tool name is not among ``tools``, and when a request is blank.
    """
    documents = {tool.name: prepare_tool(tool).full_text for tool in tools}
    pairs: list[TrainingPair] = []
    seen: set[tuple[str, str]] = set()
    for number, (text, names) in enumerate(requests, 1):
        if not text.strip():
            raise ValueError(f"request {number} is blank")
        for name in names:
            if name not in documents:
                raise ValueError(f"request {number} ({text[:60]!r}) needs unknown tool {name!r}")
            if (text, name) not in seen:
                seen.add((text, name))
                pairs.append(TrainingPair(text, documents[name], group))
    return pairs


def _pair(
    tool: ToolDefinition, min_words: int, max_words: int, seen: set[str]
) -> TrainingPair | None:
    summary, rest = split_summary(tool.description or "")
    words = len(summary.split())
    key = summary.lower()
    if not min_words <= words <= max_words or key in seen:
        return None
    if summary.upper().startswith(_HTTP_LINE):
        return None
    seen.add(key)
    stripped = ToolDefinition(
        name=tool.name,
        description=rest,
        input_schema=tool.input_schema,
        category=tool.category,
    )
    return TrainingPair(summary, prepare_tool(stripped).full_text, tool.category or "")


def write_pairs(pairs: Iterable[TrainingPair], path: str | Path) -> int:
    """Write pairs as JSONL (``query``, ``document``, ``group``); returns how many."""
    count = 0
    with open(path, "w", encoding="utf-8") as out:
        for pair in pairs:
            out.write(json.dumps(asdict(pair), ensure_ascii=False) + "\n")
            count += 1
    return count


def read_pairs(path: str | Path) -> Iterator[TrainingPair]:
    """Read pairs written by :func:`write_pairs` (or any JSONL with ``query``/``document``)."""
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                yield TrainingPair(
                    str(record["query"]), str(record["document"]), str(record.get("group") or "")
                )
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(
                    f"{path}:{number}: not a training pair (need JSON with 'query' and "
                    f"'document'): {exc}"
                ) from exc
