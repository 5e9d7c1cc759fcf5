"""An even sample of a converted catalog (one JSON record per line), shared by
``scale_bench.py`` and ``scale_peers.py`` so that each size is the same tools for both."""

from __future__ import annotations

from pathlib import Path


def write_sample(catalog: Path, total: int, size: int, target: Path) -> None:
    """``size`` records spread evenly over the catalog (streamed; every API represented)."""
    step = total / size
    wanted = {int(i * step) for i in range(size)}
    with open(catalog, encoding="utf-8") as source, open(target, "w", encoding="utf-8") as out:
        for number, line in enumerate(source):
            if number in wanted:
                out.write(line)
