"""The tools the search core gives the model: the search tool (:mod:`.search_tool`), the
call tool of ``injection="results"`` (:mod:`.call_tool`) and how a search's result reads
(:mod:`.results`). The public names are handed on by :mod:`toolsearch.search`.
"""
