"""The working set: what a session's model holds, and how it changes.

- :mod:`.policy`: what to load before the first model call (every tool, or the warm
  ones and the pre-retrieved hits), by one cost model, and the session's change list.
- :mod:`.change_anchor`: where each tool change sits in the conversation, so every later
  request repeats it at the same place and the cached prefix holds.
- :mod:`.warm`: the warm-set seam (``WarmSetSource``, ``WarmTool``, ``StaticWarmSet``).
- :mod:`.unloading`: which discovered tools to drop (idle turns, a cap).
"""

from __future__ import annotations

from toolsearch.search.working_set.policy import (
    ChangeTracker,
    WorkingSetPlan,
    change_costs_more,
    plan_working_set,
)

__all__ = ["ChangeTracker", "WorkingSetPlan", "change_costs_more", "plan_working_set"]
