"""A lever's variants by kind of catalog, chosen leave-one-catalog-out, against today's default.

    python benchmarks/dev_levers.py views --json /tmp/views.json
    python benchmarks/levers_by_kind.py /tmp/views.json --default "full + nd + ws"

Reads what ``dev_levers.py --json`` wrote (R@5 per variant and development set) and prints,
in markdown: each variant's macro R@5 per kind (:data:`benchmarks.dev_sets.KINDS`, primary
kind), the leave-one-catalog-out choice for every set (the variant with the best mean over
the other sets' *kind macros*, so the four rest-api sets do not outvote the one multi-tool
set), those choices' macro per kind against today's default, and the rule issue 36 sets:
a new default ships only if, chosen leave one catalog out, it loses less than one point
against today's default on every kind. ``--prefix`` keeps the variants of one family
(``"hybrid: "``) when a lever scores several index families.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from benchmarks.dev_sets import kind_of


def kind_macro(row: dict[str, float], sets: list[str]) -> dict[str, float]:
    """Mean R@5 per primary kind over ``sets``."""
    by_kind: dict[str, list[float]] = defaultdict(list)
    for name in sets:
        by_kind[kind_of(name)].append(row[name])
    return {kind: sum(values) / len(values) for kind, values in sorted(by_kind.items())}


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", type=Path, help="a dev_levers.py --json file")
    parser.add_argument("--default", required=True, help="today's default variant")
    parser.add_argument("--prefix", default="", help="only variants starting with this")
    args = parser.parse_args()
    data = json.loads(args.json.read_text())
    table: dict[str, dict[str, float]] = {
        variant: row for variant, row in data["table"].items() if variant.startswith(args.prefix)
    }
    if args.default not in table:
        raise SystemExit(f"no variant {args.default!r}; the variants: {', '.join(table)}")
    sets = sorted({name for row in table.values() for name in row})
    kinds = sorted({kind_of(name) for name in sets})
    macros = {variant: kind_macro(row, sets) for variant, row in table.items()}
    print(f"## {data.get('title', args.json.stem)}: R@5 by kind\n")
    print("| variant | " + " | ".join(kinds) + " | mean over kinds |")
    print("|---" * (len(kinds) + 2) + "|")
    for variant, macro in macros.items():
        mark = " (today)" if variant == args.default else ""
        cells = " | ".join(f"{macro[k]:.1f}" for k in kinds)
        print(f"| {variant}{mark} | {cells} | {_mean(list(macro.values())):.1f} |")
    print("\n| left out | chosen on the others (by kind) | R@5 chosen | R@5 today |")
    print("|---|---|---|---|")
    loco: dict[str, float] = {}
    for held in sets:
        others = [name for name in sets if name != held]
        best = max(table, key=lambda v: _mean(list(kind_macro(table[v], others).values())))
        loco[held] = table[best][held]
        print(f"| {held} | {best} | {loco[held]:.1f} | {table[args.default][held]:.1f} |")
    chosen_by_kind = kind_macro(loco, sets)
    today_by_kind = macros[args.default]
    print("\n| kind | leave-one-out choices | today | change |")
    print("|---|---|---|---|")
    for kind in kinds:
        change = chosen_by_kind[kind] - today_by_kind[kind]
        print(
            f"| {kind} | {chosen_by_kind[kind]:.1f} | {today_by_kind[kind]:.1f} | {change:+.1f} |"
        )
    overall = max(macros, key=lambda v: _mean(list(macros[v].values())))
    worst = min(kinds, key=lambda k: chosen_by_kind[k] - today_by_kind[k])
    loss = chosen_by_kind[worst] - today_by_kind[worst]
    if overall == args.default:
        verdict = "Today's default is also the choice on all sets: it stays."
    elif loss <= -1.0:
        verdict = (
            f"Chosen leave one catalog out, the choices lose {loss:+.1f} on {worst}: "
            f"{overall!r} (the choice on all sets) does not ship."
        )
    else:
        verdict = (
            f"The leave-one-out choices lose less than a point on every kind (worst "
            f"{worst}, {loss:+.1f}): {overall!r} may ship."
        )
    print(f"\nChosen on all sets: {overall!r}. {verdict}")


if __name__ == "__main__":
    main()
