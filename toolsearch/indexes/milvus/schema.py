"""The Milvus collection of a tool catalog: its fields, what each row holds, and the
settings recorded with it.

One collection per catalog, one row per tool, keyed by the tool's fingerprint:

==============  =====================  ==================================================
field           type                   holds
==============  =====================  ==================================================
``id``          VARCHAR, primary key   the tool's fingerprint (sha256 of its definition)
``catalog``     VARCHAR                the catalog's name (a collection can be filtered)
``name``        VARCHAR                the tool's name
``category``    VARCHAR                its category, ``""`` for none
``summary``     VARCHAR                the first sentence of its description
``text``        VARCHAR, analyzed      the BM25 text (below); feeds the ``bm25`` function
``sparse``      SPARSE_FLOAT_VECTOR    the server's BM25 output (``SPARSE_INVERTED_INDEX``)
``vector``      FLOAT_VECTOR           our :class:`Embedder`'s vector (AUTOINDEX, COSINE);
                                       absent from a BM25-only collection
``definition``  JSON                   the whole tool definition
==============  =====================  ==================================================

**The BM25 text is our analysis, not the engine's.** ``text`` holds the terms our own BM25
index reads (tantivy's tokenizer, lower case, our stop words, the English stemmer;
:func:`toolsearch.indexes.lexical.analysis.field_tokens`), and queries are analyzed the same way
before they are sent, so the server's analyzer only has to split on spaces (the
``standard`` tokenizer, which Milvus Lite and a cluster both have; Lite has no stemmer).
BM25F's field weights become repetitions: each field's terms appear ``round(weight *
REPEAT)`` times, and the index's ``bm25_k1`` is ``k1 * REPEAT``, which scores exactly as
BM25F with those weights (term frequencies and lengths are all multiplied by ``REPEAT``;
``k1`` scaled alike cancels it). What still differs from :class:`Bm25ToolIndex` is the
statistics: the engine's document frequencies and average length are the collection's
(Milvus Lite's: each segment's), not the searched session's, and its scores are raw BM25,
not normalized to ``[0, 1)``.

A collection property (``toolsearch.settings``, JSON) records the settings: the embedder's
name and dimension, and the BM25 parameters, so a later process (``toolsearch index search``)
reads the collection the way it was written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from toolsearch.indexes.lexical.analysis import analyze, field_tokens
from toolsearch.indexes.milvus.client import pymilvus
from toolsearch.indexes.params import Bm25Params
from toolsearch.indexes.text import PreparedTool, clean_text
from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "FORMAT",
    "MAX_VARCHAR",
    "REPEAT",
    "SETTINGS_PROPERTY",
    "CollectionSettings",
    "bm25_query",
    "bm25_text",
    "create_collection",
    "tool_from_row",
    "tool_row",
]

FORMAT = 1
"""The layout version written into a collection's settings."""

REPEAT = 2
"""Repetitions per unit of field weight in the BM25 text (weights 3, 1, 0.5 give 6, 2, 1)."""

MAX_VARCHAR = 65_535
"""Milvus's largest VARCHAR, in bytes: longer text is cut at a word boundary."""

_MARKER = "toolsearch"

SETTINGS_PROPERTY = "toolsearch.settings"
"""The collection property that holds :class:`CollectionSettings` (Milvus Lite keeps
properties but not a collection's description)."""


@dataclass(frozen=True)
class CollectionSettings:
    """What a collection was created with (recorded in a collection property)."""

    embedder: str | None
    dimension: int | None
    bm25: Bm25Params

    @property
    def has_vectors(self) -> bool:
        return self.dimension is not None

    def to_json(self) -> str:
        return json.dumps(
            {
                _MARKER: FORMAT,
                "embedder": self.embedder,
                "dimension": self.dimension,
                "bm25": self.bm25.to_json(),
                "repeat": REPEAT,
            },
            sort_keys=True,
        )

    @classmethod
    def from_properties(cls, properties: Any, collection: str) -> CollectionSettings:
        """The settings a collection's properties record; ``ValueError`` if there are none."""
        try:
            data = json.loads(dict(properties or {})[SETTINGS_PROPERTY])
        except (KeyError, TypeError, ValueError):
            data = None
        if not isinstance(data, dict) or data.get(_MARKER) != FORMAT:
            raise ValueError(
                f"Milvus collection {collection!r} was not created by toolsearch (or by "
                "another version of it); use another collection name"
            )
        dimension = data.get("dimension")
        return cls(
            embedder=data.get("embedder"),
            dimension=int(dimension) if dimension is not None else None,
            bm25=Bm25Params.from_json(data.get("bm25")),
        )


def _repeats(params: Bm25Params) -> tuple[int, int, int]:
    return tuple(max(0, round(w * REPEAT)) for w in params.weights)  # type: ignore[return-value]


def _cut(text: str, limit: int = MAX_VARCHAR, *, word_boundary: bool = True) -> str:
    """``text`` within ``limit`` UTF-8 bytes, cut before a partial word (or, without
    ``word_boundary``, before a partial character only)."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    head = data[:limit].decode("utf-8", errors="ignore")
    if not word_boundary:
        return head
    space = head.rfind(" ")
    return head[:space] if space > 0 else head


def bm25_text(fingerprint: str, prepared: PreparedTool, params: Bm25Params) -> str:
    """The analyzed, field-weighted text the server's BM25 function reads for one tool."""
    terms: list[str] = []
    for repeat, counts in zip(_repeats(params), field_tokens(fingerprint, prepared), strict=True):
        for term, count in counts.items():
            terms.extend([term] * (count * repeat))
    return _cut(" ".join(terms))


def bm25_query(query: str) -> str:
    """A query's distinct analyzed terms, space-separated (``""`` when none is left)."""
    return _cut(" ".join(dict.fromkeys(analyze(query))))


def _storable(value: Any) -> Any:
    """``value`` (a definition's JSON) with every string, keys included, as UTF-8 can
    encode it (:func:`~toolsearch.indexes.text.clean_text`): Milvus stores UTF-8 only."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(str(k)): _storable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_storable(v) for v in value]
    return value


def tool_row(
    tool: ToolDefinition,
    prepared: PreparedTool,
    vector: Any,
    *,
    catalog: str,
    params: Bm25Params,
) -> dict[str, Any]:
    """One collection row; ``vector`` is ``None`` for a BM25-only collection.

    Text is stored as Milvus can hold it: lone surrogates as U+FFFD, and the ``name`` field
    cut to :data:`MAX_VARCHAR` bytes (sessions find their tools by fingerprint and name
    them as they were given, so only a whole-collection search shows the stored form). A
    row the server still refuses (a definition over its JSON limit) is reported by
    :meth:`~toolsearch.indexes.milvus.ranker.MilvusRanker.upsert_tools`, not fatal."""
    row: dict[str, Any] = {
        "id": tool.fingerprint,
        "catalog": _cut(clean_text(catalog)),
        "name": _cut(clean_text(tool.name), word_boundary=False),
        "category": _cut(clean_text(tool.category or "")),
        "summary": _cut(prepared.summary),
        "text": bm25_text(tool.fingerprint, prepared, params),
        "definition": _storable(
            {
                "name": tool.name,
                "description": tool.description,
                "input_schema": dict(tool.input_schema),
                "category": tool.category,
            }
        ),
    }
    if vector is not None:
        row["vector"] = [float(x) for x in vector]
    return row


def tool_from_row(row: dict[str, Any]) -> ToolDefinition:
    """The tool definition a row stores."""
    definition = row.get("definition") or {}
    return ToolDefinition(
        name=str(definition.get("name") or row["name"]),
        description=str(definition.get("description") or ""),
        input_schema=definition.get("input_schema") or {"type": "object", "properties": {}},
        category=definition.get("category"),
    )


def create_collection(client: Any, name: str, settings: CollectionSettings) -> None:
    """Create the collection ``name`` with the fields above and its indexes (loaded)."""
    module = pymilvus()
    DataType, Function, FunctionType = module.DataType, module.Function, module.FunctionType
    schema = client.create_schema(
        auto_id=False, enable_dynamic_field=False, description="toolsearch tool catalog"
    )
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=128)
    for text_field in ("catalog", "name", "category", "summary"):
        schema.add_field(text_field, DataType.VARCHAR, max_length=MAX_VARCHAR)
    schema.add_field(
        "text",
        DataType.VARCHAR,
        max_length=MAX_VARCHAR,
        enable_analyzer=True,
        analyzer_params={"tokenizer": "standard"},
    )
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    if settings.dimension is not None:
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=settings.dimension)
    schema.add_field("definition", DataType.JSON)
    schema.add_function(
        Function(
            name="bm25",
            function_type=FunctionType.BM25,
            input_field_names=["text"],
            output_field_names=["sparse"],
        )
    )
    indexes = client.prepare_index_params()
    indexes.add_index(
        "sparse",
        index_type="SPARSE_INVERTED_INDEX",
        metric_type="BM25",
        # the classic wire form, a JSON "params" entry, which servers parse and Milvus Lite
        # reads (it ignores the flattened keys pymilvus 3 sends for a plain params dict)
        params={"params": {"bm25_k1": settings.bm25.k1 * REPEAT, "bm25_b": settings.bm25.b}},
    )
    if settings.dimension is not None:
        indexes.add_index("vector", index_type="AUTOINDEX", metric_type="COSINE")
    client.create_collection(
        name, schema=schema, properties={SETTINGS_PROPERTY: settings.to_json()}
    )
    # an empty collection's indexes are built at once: skip pymilvus's polling (0.5 s each)
    client.create_index(name, indexes, sync=False)
    client.load_collection(name)
