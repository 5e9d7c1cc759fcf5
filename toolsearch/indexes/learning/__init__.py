"""Learning from use, in parts: the memory's data model and bounds (:mod:`.model`), its
file format (:mod:`.persist`), the stores several processes share (:mod:`.store`,
:mod:`.redis_store`) and the warm set (:mod:`.warm`).

The public entry points stay :mod:`toolsearch.indexes.usage` (``UsageMemory``) and
:mod:`toolsearch.indexes.learned` (``LearnedToolIndex``).
"""

from __future__ import annotations

__all__: list[str] = []
