"""A built BM25 catalog ranks exactly as it did before the store and build changes.

``tests/fixtures/catalog/bm25_rankings.json`` holds the rankings (names, scores to 1e-9,
totals) of a 600-tool generated catalog as the build before issue 49 produced them (its
definitions stored as plain JSON): whole-catalog searches, category searches and a session
over a subset, and the definitions read back. Regenerate it only for a deliberate change in
ranking: ``python tests/catalog/test_build_rankings.py > tests/fixtures/catalog/
bm25_rankings.json``.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "catalog" / "bm25_rankings.json"

WORDS = (  # noqa: SIM905
    "get list create delete update user users account accounts repository repositories "
    "issue issues pull request weather forecast payment payments invoice invoices order "
    "orders search item items status message messages channel slack kubernetes pod pods "
    "playlist listing target budget customer customers address id ids ssh key keys city "
    "refund calendar event events attendee file files upload download folder share token"
).split()

QUERIES = [
    "list the users of an account",
    "get weather forecast for a city",
    "refund a payment",
    "create calendar event with attendees",
    "upload files to a folder",
    "kubernetes pods status",
    "ssh keys",
    "search issues in a repository",
    "delete",
    "the a of",
    "getUserAccount",
    "orders_list_7",
    "invoice customer address token download share",
]


def records() -> list[dict[str, Any]]:
    rng = random.Random(49)
    tools = []
    for i in range(600):
        words = rng.sample(WORDS, 3)
        name = f"{words[0]}_{words[1]}_{i}" if i % 2 else f"{words[0]}{words[1].title()}{i}"
        description = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 30)))
        properties = {
            rng.choice(WORDS): {"type": "string", "description": " ".join(rng.sample(WORDS, 4))}
            for _ in range(rng.randint(0, 4))
        }
        tools.append(
            {
                "name": name,
                "description": description.capitalize() + ".",
                "input_schema": {"type": "object", "properties": properties},
                "category": f"service {i % 12}",
            }
        )
    return tools


def rankings(folder: Path) -> dict[str, Any]:
    from toolsearch.catalog.index import CatalogIndex
    from toolsearch.search.types import ToolSearchRequest

    source = folder / "tools.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in records()) + "\n", encoding="utf-8")
    index = CatalogIndex.build([str(source)], out=str(folder / "index"), kind="bm25")

    def hits(response: Any) -> dict[str, Any]:
        return {
            "names": [r.tool_name for r in response.tool_references],
            "scores": [round(float(r.relevance_score or 0.0), 9) for r in response.tool_references],
            "total": response.total_matches,
        }

    out: dict[str, Any] = {"catalog": {}, "category": {}, "session": {}}
    for query in QUERIES:
        out["catalog"][query] = hits(index.search_catalog(query, 10))
        out["category"][query] = hits(index.search_catalog(query, 5, category="service 3"))
    store = index._store
    subset = [store.definition(i) for i in range(0, 600, 4)]
    index.index_tools("s", subset)
    for query in QUERIES:
        out["session"][query] = hits(index.search(ToolSearchRequest("s", query, 7)))
    out["definitions"] = [store.definition(i).to_dict() for i in (0, 1, 299, 599)]
    return out


def test_built_catalog_ranks_as_before(tmp_path: Path) -> None:
    expected = json.loads(GOLDEN.read_text(encoding="utf-8"))
    found = json.loads(json.dumps(rankings(tmp_path)))  # tuples as lists, like the file
    assert found == expected


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        json.dump(rankings(Path(scratch)), sys.stdout, indent=1, sort_keys=True)
        print()
