"""Lexical search: words and patterns, no model.

:mod:`.bm25` (``Bm25ToolIndex``, BM25F over name, description and parameters) scored by
:mod:`.bm25_scoring` over words from :mod:`.analysis`; :mod:`.regex` (``RegexToolIndex``)
with its word-index prefilter :mod:`.regex_prefilter`. Import the indexes from
:mod:`toolsearch.indexes`.
"""
