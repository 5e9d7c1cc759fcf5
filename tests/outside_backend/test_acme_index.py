"""An index from another package passes toolsearch's index contract: this module imports
only ``toolsearch.testing``, the public toolsearch API and the package under test, as a
test suite outside this repository would (``test_outside_imports.py`` checks that)."""

from __future__ import annotations

from acme_index import keyword_index

from toolsearch.search import ToolIndex
from toolsearch.testing import ToolIndexContract


class TestAcmeKeywordIndex(ToolIndexContract):
    search_type = "acme-keyword"

    def make_index(self) -> ToolIndex:
        return keyword_index()
