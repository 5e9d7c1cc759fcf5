"""Old import paths of modules that moved into family folders, kept working for a while.

``import toolsearch.search.redis_store`` still works: a finder on ``sys.meta_path`` (put
there by ``import toolsearch``) answers each old dotted name of :data:`MOVED` with the
module at its new place, the same module object, and a :class:`DeprecationWarning` that
names the new path. Nothing is imported until an old name is asked for. The table is the
one list of the moves; CHANGELOG.md lists the same pairs.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import sys
import warnings
from collections.abc import Sequence
from types import FrameType, ModuleType

__all__ = ["MOVED", "install"]

MOVED: dict[str, str] = {
    # the embedders family: toolsearch/indexes/embedders/
    "toolsearch.indexes.api_embedders": "toolsearch.indexes.embedders.api",
    "toolsearch.indexes.api_names": "toolsearch.indexes.embedders.api_names",
    "toolsearch.indexes.embedder_specs": "toolsearch.indexes.embedders.specs",
    "toolsearch.indexes.embedding_cache": "toolsearch.indexes.embedders.cache",
    "toolsearch.indexes.onnx_embedder": "toolsearch.indexes.embedders.onnx",
    # the Milvus family: toolsearch/indexes/milvus/
    "toolsearch.indexes.milvus_client": "toolsearch.indexes.milvus.client",
    "toolsearch.indexes.milvus_ranker": "toolsearch.indexes.milvus.ranker",
    "toolsearch.indexes.milvus_schema": "toolsearch.indexes.milvus.schema",
    "toolsearch.indexes.milvus_writes": "toolsearch.indexes.milvus.writes",
    # keyword and pattern search: toolsearch/indexes/lexical/
    "toolsearch.indexes.analysis": "toolsearch.indexes.lexical.analysis",
    "toolsearch.indexes.bm25": "toolsearch.indexes.lexical.bm25",
    "toolsearch.indexes.bm25_scoring": "toolsearch.indexes.lexical.bm25_scoring",
    "toolsearch.indexes.regex": "toolsearch.indexes.lexical.regex",
    "toolsearch.indexes.regex_prefilter": "toolsearch.indexes.lexical.regex_prefilter",
    # session stores: toolsearch/stores/
    "toolsearch.search.eviction": "toolsearch.stores.eviction",
    "toolsearch.search.redis_store": "toolsearch.stores.redis_store",
    "toolsearch.search.store": "toolsearch.stores.session_store",
    # search logs: toolsearch/search/logs/
    "toolsearch.search.search_log": "toolsearch.search.logs.sink",
    "toolsearch.search.search_log_reader": "toolsearch.search.logs.reader",
    # the tools the model is given: toolsearch/search/builtin_tools/
    "toolsearch.search.call_tool": "toolsearch.search.builtin_tools.call_tool",
    "toolsearch.search.results": "toolsearch.search.builtin_tools.results",
    "toolsearch.search.search_tool": "toolsearch.search.builtin_tools.search_tool",
    # the `toolsearch index` command: toolsearch/catalog/cli/
    "toolsearch.catalog.cli_output": "toolsearch.catalog.cli.output",
    "toolsearch.catalog.learn_cli": "toolsearch.catalog.cli.learn",
    "toolsearch.catalog.milvus_cli": "toolsearch.catalog.cli.milvus",
    # the Anthropic adapter: toolsearch/models/anthropic/
    "toolsearch.models.anthropic_changes": "toolsearch.models.anthropic.changes",
    "toolsearch.models.anthropic_deferral": "toolsearch.models.anthropic.deferral",
    "toolsearch.models.anthropic_errors": "toolsearch.models.anthropic.errors",
    "toolsearch.models.anthropic_response": "toolsearch.models.anthropic.response",
    # the working set: toolsearch/search/working_set/
    "toolsearch.search.change_anchor": "toolsearch.search.working_set.change_anchor",
    "toolsearch.search.unloading": "toolsearch.search.working_set.unloading",
    "toolsearch.search.warm": "toolsearch.search.working_set.warm",
    # learning from use: toolsearch/indexes/learning/
    "toolsearch.indexes.usage": "toolsearch.indexes.learning.memory",
    "toolsearch.indexes.learned": "toolsearch.indexes.learning.learned",
    # where the fine-tuned embedder lives: toolsearch/indexes/embedders/
    "toolsearch.indexes.tuned": "toolsearch.indexes.embedders.tuned",
}
"""Old dotted module name -> new one. ``toolsearch.indexes.embedders``,
``toolsearch.indexes.milvus`` and ``toolsearch.catalog.cli`` are packages now, under the
same names, and hand on the public names the modules had: they need no row."""


_OURS = (
    os.path.abspath(__file__),
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "__init__.py"),
)


def _importer_level() -> int:
    """The ``stacklevel`` that points a warning at the ``import`` line that asked.

    :mod:`warnings` skips the import system's frames itself; this counts ours (this
    module's and the package finder's in ``toolsearch/__init__.py``) above the caller.
    """
    level = 2  # 1 is the warner itself; 2 the first frame outside the import system
    frame: FrameType | None = sys._getframe(2)  # the frame that called the warner
    while frame is not None:
        name = frame.f_code.co_filename
        if "importlib" in name and "_bootstrap" in name:
            frame = frame.f_back
            continue
        if os.path.abspath(name) not in _OURS:
            break
        level += 1
        frame = frame.f_back
    return level


class _MovedModuleLoader(importlib.abc.Loader):
    """Loads an old name as the module at its new place (the same object)."""

    def __init__(self, new_name: str) -> None:
        self._new_name = new_name
        self._new_spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(
            f"{spec.name} moved to {self._new_name}; import it from there "
            "(the old path goes away in a later release)",
            DeprecationWarning,
            stacklevel=_importer_level(),
        )
        module = importlib.import_module(self._new_name)
        self._new_spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # the import system stamped the old name's spec on the module: put its own back
        if self._new_spec is not None:
            module.__spec__ = self._new_spec


class _MovedFinder(importlib.abc.MetaPathFinder):
    """Finds the old names of :data:`MOVED`, and nothing else."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        new_name = MOVED.get(fullname)
        if new_name is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _MovedModuleLoader(new_name))


def install() -> None:
    """Put the finder on ``sys.meta_path`` once (``import toolsearch`` calls this)."""
    if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
        sys.meta_path.append(_MovedFinder())
