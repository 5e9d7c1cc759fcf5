"""``toolsearch index ...``: the catalog command, apart from the build pipeline.

The commands (:mod:`.commands`), how they print (:mod:`.output`), the Milvus engine
(:mod:`.milvus`) and ``index learn`` (:mod:`.learn`).
"""

from toolsearch.catalog.cli.commands import index_app

__all__ = ["index_app"]
