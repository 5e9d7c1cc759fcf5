"""The index kinds: one row per name an index spec can start with, and nothing else lists them.

:data:`KINDS` is the table. Each :class:`IndexKindRow` row says what the name builds (the
index class and, when the kind takes options, the function that builds it from
:class:`IndexOptions`, both as ``"module:attribute"`` imported only when a kind is built, so
``import toolsearch`` never loads numpy, FAISS, tantivy or pymilvus), the extras it needs,
whether it takes an embedder (``vector:EMBEDDER``) or a server URI (``milvus``, from
``uri=`` or the kind's environment variable), and a one-line summary.

Every place that names index kinds reads this table: :func:`toolsearch.indexes.make_index`
and :func:`~toolsearch.indexes.index_factory` (and their error messages), the settings'
``index_type``, ``toolsearch index build --kind``, the MCP proxy's ``--index`` and its
config, the benchmark's ``--index``, and the table in docs/index-engine.md (a test compares
it with this one).

Adding a backend here: its module, one row here, its row in docs/index-engine.md and its
line in the index contract suite. A backend of another package adds its row by entry point
instead (group ``toolsearch.index_kinds``, :mod:`toolsearch.plugins`): the lookups below
read those rows only when a name is not one of :data:`KINDS` or when they list the kinds,
and a broken one fails alone, with a :class:`~toolsearch.errors.PluginError`.
"""

from __future__ import annotations

import dataclasses
import importlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolsearch import plugins
from toolsearch.errors import PluginError

if TYPE_CHECKING:
    from toolsearch.indexes.embedders import Embedder
    from toolsearch.search.types import ToolIndex
    from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "KINDS",
    "IndexKindRow",
    "IndexOptions",
    "IndexWriter",
    "catalog_kind_names",
    "choices",
    "embedding_kind_names",
    "find_kind",
    "index_kind",
    "kind_names",
    "kinds",
    "server_kind_names",
    "writable_kind_names",
]

IndexWriter = Callable[["list[ToolDefinition]", Path, "IndexOptions"], None]
"""``(tools, out, options)``: writes a kind's index folder at ``out`` (``toolsearch index
build --kind NAME`` for a kind that is not a catalog kind)."""


@dataclass(frozen=True)
class IndexOptions:
    """What :func:`~toolsearch.indexes.make_index` hands a kind's builder."""

    embedder: Embedder | None = None
    """For kinds that take one: the embedder (``None``: the kind's default)."""
    bm25_min_score: float = 0.0
    """For kinds with a BM25 side: its ``min_score``."""
    uri: str | None = None
    """For kinds on a server: its URI (resolved from the kind's variable when not given)."""
    collection: str | None = None
    """For kinds on a server: the collection (``None``: the backend's default)."""


def _load(reference: str) -> Any:
    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module), attribute)


@dataclass(frozen=True)
class IndexKindRow:
    """One index kind: the name, what it builds, what it needs."""

    name: str
    """The spec's name (``"bm25"``); with an embedder also ``NAME:EMBEDDER``."""
    index: str
    """The index class, ``"module:attribute"``: what ``index_factory(name)`` gives."""
    extras: tuple[str, ...]
    """The extras to install (``("bm25", "vector")`` is ``toolsearch[bm25,vector]``)."""
    summary: str
    """One line for docs and help texts."""
    embedder: bool = False
    """Whether it takes an embedder (``vector:static``, ``embedder=``)."""
    uri_variable: str | None = None
    """For a kind on a server: the environment variable its URI comes from when ``uri=``
    (or the setting ``uri``) is not given; ``None``: an in-process index."""
    build: str | None = None
    """``"module:attribute"`` of a function ``(IndexOptions) -> ToolIndex``; ``None``: the
    class, called without arguments (the kind takes no options)."""
    catalog: bool = False
    """Whether the catalog pipeline (:mod:`toolsearch.catalog`) writes it as an index folder
    for ``toolsearch index build --kind``: toolsearch's own kinds only."""
    writer: str | None = None
    """``"module:attribute"`` of an :data:`IndexWriter`: how ``toolsearch index build --kind``
    writes a kind the catalog pipeline does not (a backend of another package with a
    format of its own); ``None``: none."""

    @property
    def needs_uri(self) -> bool:
        return self.uri_variable is not None

    @property
    def install(self) -> str:
        """``toolsearch[bm25,vector]``, or ``""`` for a kind of the core install."""
        return f"toolsearch[{','.join(self.extras)}]" if self.extras else ""

    @property
    def spec_forms(self) -> tuple[str, ...]:
        """How a spec names it: ``("hybrid", "hybrid:EMBEDDER")``."""
        return (self.name, f"{self.name}:EMBEDDER") if self.embedder else (self.name,)

    def index_class(self) -> Callable[..., ToolIndex]:
        """The index class (imported now)."""
        value: Callable[..., ToolIndex] = _load(self.index)
        return value

    def uri_of(self, options: IndexOptions) -> str:
        """The server URI: ``options.uri``, else the kind's variable; ``ValueError`` saying
        what to set when neither is."""
        variable = self.uri_variable
        uri = options.uri or (os.environ.get(variable, "").strip() if variable else "")
        if not uri:
            raise ValueError(
                f"index {self.name!r} needs a server: pass uri= (in the settings: "
                f"tool_search.uri) or set {variable}; it needs {self.install}"
            )
        return uri

    def make(self, options: IndexOptions | None = None) -> ToolIndex:
        """Build the index (its extras' imports happen now)."""
        options = options or IndexOptions()
        if self.needs_uri:
            options = dataclasses.replace(options, uri=self.uri_of(options))
        if self.build is None:
            return self.index_class()()
        builder: Callable[[IndexOptions], ToolIndex] = _load(self.build)
        return builder(options)

    def write(
        self, tools: list[ToolDefinition], out: Path, options: IndexOptions | None = None
    ) -> None:
        """Write this kind's index of ``tools`` at ``out`` with its :attr:`writer`;
        ``ValueError`` for a kind without one."""
        if self.writer is None:
            raise ValueError(f"index {self.name!r} has no writer: it cannot be built to a folder")
        writer: IndexWriter = _load(self.writer)
        writer(tools, out, options or IndexOptions())


_log = logging.getLogger(__name__)


# -- the builders of the kinds that take options -------------------------------------------


def build_bm25(options: IndexOptions) -> ToolIndex:
    from toolsearch.indexes.lexical.bm25 import Bm25ToolIndex

    return Bm25ToolIndex(min_score=options.bm25_min_score)


def build_vector(options: IndexOptions) -> ToolIndex:
    from toolsearch.indexes.vector import VectorToolIndex

    return VectorToolIndex(embedder=options.embedder)


def build_hybrid(options: IndexOptions) -> ToolIndex:
    from toolsearch.indexes.hybrid import HybridToolIndex
    from toolsearch.indexes.lexical.bm25 import Bm25ToolIndex
    from toolsearch.indexes.vector import VectorToolIndex

    return HybridToolIndex(
        bm25=Bm25ToolIndex(min_score=options.bm25_min_score),
        vector=VectorToolIndex(embedder=options.embedder),
    )


MILVUS_TOKEN_VARIABLE = "MILVUS_TOKEN"
"""A Milvus cluster's token (or Zilliz Cloud API key) for the ``milvus`` kind: from the
environment only, never from a spec or a settings file."""


def build_milvus(options: IndexOptions) -> ToolIndex:
    """A hybrid :class:`~toolsearch.indexes.MilvusToolIndex` at ``options.uri``."""
    from toolsearch.indexes.milvus import MilvusToolIndex

    if options.bm25_min_score:
        raise ValueError(
            "index 'milvus' scores raw BM25 in the server: bm25_min_score is not supported"
        )
    settings: dict[str, Any] = {"mode": "hybrid", "embedder": options.embedder}
    if options.collection:
        settings["collection"] = options.collection
    token = os.environ.get(MILVUS_TOKEN_VARIABLE, "").strip()
    if token:
        settings["token"] = token
    assert options.uri is not None  # IndexKindRow.make resolved it
    return MilvusToolIndex(options.uri, **settings)


# -- the table ----------------------------------------------------------------------------

_HERE = __name__

KINDS: tuple[IndexKindRow, ...] = (
    IndexKindRow(
        "regex",
        "toolsearch.indexes.lexical.regex:RegexToolIndex",
        (),
        "words or a pattern over names and descriptions (patterns with toolsearch[regex])",
    ),
    IndexKindRow(
        "bm25",
        "toolsearch.indexes.lexical.bm25:Bm25ToolIndex",
        ("bm25",),
        "BM25F over name, description and parameters (tantivy's analysis, stemmed)",
        build=f"{_HERE}:build_bm25",
        catalog=True,
    ),
    IndexKindRow(
        "vector",
        "toolsearch.indexes.vector:VectorToolIndex",
        ("vector",),
        "cosine over an embedder's vectors (FAISS; the packaged MiniLM by default)",
        embedder=True,
        build=f"{_HERE}:build_vector",
        catalog=True,
    ),
    IndexKindRow(
        "hybrid",
        "toolsearch.indexes.hybrid:HybridToolIndex",
        ("bm25", "vector"),
        "BM25 and vectors fused by reciprocal rank",
        embedder=True,
        build=f"{_HERE}:build_hybrid",
        catalog=True,
    ),
    IndexKindRow(
        "milvus",
        "toolsearch.indexes.milvus:MilvusToolIndex",
        ("milvus", "bm25", "vector"),
        "a Milvus collection shared by every process: BM25 and vectors fused by the engine",
        embedder=True,
        uri_variable="MILVUS_URI",
        build=f"{_HERE}:build_milvus",
    ),
)
"""Every index kind, in the order error messages and docs list them."""

_BY_NAME = {kind.name: kind for kind in KINDS}


def _plugin_row(plugin: plugins.Plugin) -> IndexKindRow:
    row = plugins.load_row(plugin, IndexKindRow, lambda kind: kind.name)
    if row.catalog:  # the catalog pipeline writes toolsearch's own formats only
        raise PluginError(
            plugin.distribution,
            plugin.group,
            plugin.name,
            "catalog=True is for toolsearch's own kinds: give the row a writer instead",
        )
    return row


def kinds() -> tuple[IndexKindRow, ...]:
    """Every kind: :data:`KINDS`, then the rows installed packages register (their
    modules imported now; a broken one is left out, with a warning)."""
    extra = []
    for plugin in plugins.plugins(plugins.INDEX_KINDS_GROUP):
        if plugin.name in _BY_NAME:
            continue  # a plugin never replaces a built-in kind
        try:
            extra.append(_plugin_row(plugin))
        except PluginError as exc:
            plugins.warn_broken(exc)
    return (*KINDS, *extra)


def kind_names() -> tuple[str, ...]:
    """Every kind's name, in table order (installed packages' kinds last)."""
    return tuple(kind.name for kind in kinds())


def embedding_kind_names() -> tuple[str, ...]:
    """The kinds that take an embedder."""
    return tuple(kind.name for kind in kinds() if kind.embedder)


def server_kind_names() -> tuple[str, ...]:
    """The kinds on a server (they take ``uri=`` and ``collection=``)."""
    return tuple(kind.name for kind in kinds() if kind.needs_uri)


def catalog_kind_names() -> tuple[str, ...]:
    """The kinds the catalog pipeline writes (toolsearch's own)."""
    return tuple(kind.name for kind in KINDS if kind.catalog)


def writable_kind_names() -> tuple[str, ...]:
    """The kinds ``toolsearch index build --kind`` writes: the catalog kinds, then the
    kinds with a :attr:`~IndexKindRow.writer`."""
    return (*catalog_kind_names(), *(k.name for k in kinds() if not k.catalog and k.writer))


def choices(names: tuple[str, ...] | None = None) -> str:
    """``"regex, bm25, vector, hybrid or milvus"`` for help texts and messages."""
    listed = list(kind_names() if names is None else names)
    return listed[0] if len(listed) == 1 else f"{', '.join(listed[:-1])} or {listed[-1]}"


def find_kind(name: str) -> IndexKindRow | None:
    """The row of ``name``, or ``None``: a built-in row, else the row an installed package
    registers under that name (imported now; :class:`~toolsearch.errors.PluginError` when
    it cannot be loaded)."""
    row = _BY_NAME.get(name)
    if row is not None:
        return row
    plugin = plugins.find_plugin(plugins.INDEX_KINDS_GROUP, name)
    return None if plugin is None else _plugin_row(plugin)


def index_kind(name: str) -> IndexKindRow:
    """The row of ``name``; ``ValueError`` listing the kinds, :class:`~toolsearch.errors.
    PluginError` for an installed kind that cannot be loaded."""
    row = find_kind(name)
    if row is None:
        raise ValueError(f"unknown index kind {name!r}; choose from {', '.join(kind_names())}")
    return row
