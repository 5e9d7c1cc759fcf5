"""The index names the benchmark knows: toolsearch's index specs, plus the peers.

Every name in a record rebuilds its index here (the memory measurement's child process
does so): the specs of :mod:`toolsearch.indexes.specs` (``bm25``, ``hybrid:tuned``...) and
the peer methods of :mod:`toolsearch_bench.peers` under :data:`PEERS`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from toolsearch.indexes.specs import index_factory as _spec_factory
from toolsearch_bench import peers

if TYPE_CHECKING:
    from toolsearch.search.types import ToolIndex

__all__ = ["PEERS", "index_factory", "peer_factories"]

PEERS: tuple[str, ...] = ("peer: reference regex", "peer: token overlap", "peer: bm25s")
"""The names of the peer methods, as they appear in records."""


def peer_factories() -> dict[str, Callable[[], ToolIndex]]:
    """Each peer's name and class (not built: ``peer: bm25s`` needs ``bm25s``)."""
    return {
        PEERS[0]: peers.ReferenceRegexIndex,
        PEERS[1]: peers.TokenOverlapIndex,
        PEERS[2]: peers.Bm25sIndex,
    }


def index_factory(name: str) -> Callable[[], ToolIndex]:
    """The factory behind an index or peer name (``"bm25"``, ``"peer: token overlap"``...),
    without building anything; ``ValueError`` for an unknown name.

    The kinds are those of :data:`toolsearch.indexes.kinds.KINDS`; those that take an
    embedder take it after a colon, in the names :func:`toolsearch.indexes.load_embedder`
    knows: ``hybrid:tuned``, ``vector:static``, ``hybrid:/path/to/model``. Without one they
    use the packaged MiniLM. ``milvus`` reads its server's URI from ``MILVUS_URI``.
    """
    return _spec_factory(name, extra=peer_factories())
