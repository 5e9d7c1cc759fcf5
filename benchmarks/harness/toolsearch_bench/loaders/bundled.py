"""The catalogs the toolsearch project writes itself and ships with the package.

``acme`` (the default, and the dataset ``toolsearch bench`` runs on when nothing else is
installed)
    The tools of a fictional company, Acme Corp: 158 tools across 16 services (CRM,
    billing, payments, support, HR, calendar, email, chat, files and docs, code hosting
    and CI, cloud, monitoring, analytics, inventory, shipping, marketing), with
    ``category`` = the service. Names follow the mixed conventions of real tool servers,
    each service keeping its own: dotted (``crm.deals.create``, ``insights.runReport``),
    camelCase (``getInvoice``, ``postMessage``), snake_case (``refund_payment``,
    ``create_ticket``), kebab-case (``create-event``, ``list-shipments``), PascalCase
    (``SubmitTimeOffRequest``), and product-prefixed (``codehub_create_pull_request``,
    ``drive_share_file``, ``Inventory_GetStockLevel``). Input schemas are JSON Schema
    objects with described properties, enums, formats, defaults, nested objects and arrays
    of objects.

    421 natural requests with gold tools in the order they would be used: 262 need one
    tool, 159 need two to four, often across services ("Refund order 8812 and email the
    customer that the money is on its way"). They were written by hand, in the words a user
    would use rather than the tools' (PTO for a leave request, "bill" for an invoice), with
    IDs, names, dates and the occasional typo. Every tool is gold at least once. The set is
    deliberately hard in places: near-duplicate tools across services (an email, a chat
    message, a direct message and a marketing campaign all "send"; tickets, issues and
    incidents are all "opened") must be told apart. ``metadata`` is ``{"kind": "single" |
    "multi", "services": [categories of the gold tools]}``.

    Licence: Apache-2.0, like toolsearch itself; the ``datasets/acme/README.md`` beside the
    files says more.

Where the files are found
    First inside the installed harness, ``toolsearch_bench/_datasets/<name>/`` (its wheel
    carries them there), else in a source checkout, ``datasets/<name>/`` at the repository's
    root. Each place holds ``tools.jsonl`` and ``queries.jsonl`` in the JSONL form
    of :mod:`toolsearch_bench.data`. A name found in neither place raises
    ``FileNotFoundError`` naming both; a gold tool missing from the catalog raises
    ``ValueError`` (the bundled files never have one).
"""

from __future__ import annotations

import contextlib
import importlib.resources
import re
from pathlib import Path

import toolsearch_bench
from toolsearch_bench.data import Catalog, QuerySet

__all__ = ["BUNDLED_DATASETS", "load_bundled"]

BUNDLED_DATASETS = ("acme",)
"""The names :func:`load_bundled` accepts out of the box."""

_FILES = ("tools.jsonl", "queries.jsonl")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


def load_bundled(name: str = "acme") -> tuple[Catalog, QuerySet]:
    """The bundled catalog ``name`` and its query set, gold names checked against it."""
    if not _NAME.match(name):
        raise ValueError(f"not a bundled dataset name: {name!r}")
    with contextlib.ExitStack() as stack:
        folder = _find(name, stack)
        catalog = Catalog.from_jsonl(folder / "tools.jsonl", name=name)
        queries = QuerySet.from_jsonl(folder / "queries.jsonl", name=name)
    queries.validate_against(catalog)
    return catalog, queries


def _find(name: str, stack: contextlib.ExitStack) -> Path:
    installed = importlib.resources.files("toolsearch_bench") / "_datasets" / name
    if all(installed.joinpath(f).is_file() for f in _FILES):
        # a real folder in a normal install; extracted to a temporary one from a zip
        return stack.enter_context(importlib.resources.as_file(installed))
    checkout = Path(toolsearch_bench.__file__).resolve().parents[3] / "datasets" / name
    if all((checkout / f).is_file() for f in _FILES):
        return checkout
    raise FileNotFoundError(
        f"bundled dataset {name!r} not found: looked for {' and '.join(_FILES)} in the "
        f"installed package ({installed}) and in the source checkout ({checkout}); "
        f"bundled datasets: {', '.join(BUNDLED_DATASETS)}"
    )
