"""Search logs: what each search was asked and returned, and what the model called.

Writing (:mod:`.sink`: ``JsonlSearchLog``, ``TeeSearchLog``) and reading back
(:mod:`.reader`: each search joined with the calls that followed it). The public names
are handed on by :mod:`toolsearch.search`.
"""
