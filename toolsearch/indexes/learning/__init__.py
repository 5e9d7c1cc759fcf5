"""Learning from use, in parts: the memory's data model and bounds (:mod:`.model`), its
file format (:mod:`.persist`), the stores several processes share (:mod:`.store`,
:mod:`.redis_store`) and the warm set (:mod:`.warm`).

The public entry points: :mod:`.memory` (``UsageMemory``) and
:mod:`.learned` (``LearnedToolIndex``), both re-exported by :mod:`toolsearch.indexes`.
"""

from __future__ import annotations

__all__: list[str] = []
