"""Carrying learning over a tool-set change: editing one tool forgets only that tool.

The memory keys learning by tool set (sub-agents with different tool sets learn apart),
and it remembers each tool's fingerprint. A tool set it has not seen yet inherits, from the
most recently changed tool sets of the same tenant, what each of its *unchanged* tools
(same name, same fingerprint) learned there: adding, removing or editing one tool keeps
every other tool's learning, and the edited tool starts afresh.
"""

from __future__ import annotations

import copy

from toolsearch.indexes.learning.model import Catalog

__all__ = ["inherit"]


def inherit(catalogs: dict[str, Catalog], key: str, catalog: Catalog) -> bool:
    """Copy into ``catalog`` (under ``key``, with its ``fingerprints`` set) what its
    unchanged tools learned in the other ``catalogs`` of its tenant; returns whether
    anything was copied."""
    prefix = key.rsplit("/", 1)[0] + "/" if "/" in key else ""
    wanted = set(catalog.fingerprints.items())
    newest_first = sorted(catalogs.items(), key=lambda kv: kv[1].changed, reverse=True)
    for other_key, other in newest_first:
        same_tenant = other_key.startswith(prefix) and ("/" in other_key) == bool(prefix)
        if other is catalog or not same_tenant:
            continue
        for name, entries in other.tools.items():
            if name in catalog.tools or (name, other.fingerprints.get(name)) not in wanted:
                continue
            catalog.tools[name] = copy.deepcopy(entries)
            if name in other.use:
                catalog.use[name] = copy.deepcopy(other.use[name])
    if not catalog.tools:
        return False
    catalog.events = max(e.event for es in catalog.tools.values() for e in es.values())
    catalog.recount()
    return True
