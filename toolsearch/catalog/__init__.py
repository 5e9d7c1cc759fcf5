"""Offline-built catalog indexes for large tool catalogs (``toolsearch[catalog]``)."""

__all__: list[str] = []
