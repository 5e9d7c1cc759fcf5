"""Settings: every tool-search option from the environment (``TOOLSEARCH_...``) or a TOML file.

The "auto-configuration" path: with ``TOOLSEARCH_TOOL_SEARCH__ENABLED=true``,
``ChatClient.builder(model)`` (and ``ChatClient.create``) use a
``ToolSearchToolCallingAdvisor`` built from these settings instead of the plain
``ToolCallingAdvisor``. An explicitly registered tool advisor always wins. The loop layer
does not import this module: the package (``import toolsearch``) installs
:func:`configured_advisor` as the builder's auto tool advisor provider
(:func:`toolsearch.loop.client.set_auto_tool_advisor_provider`).

Sources, highest priority first: keyword arguments, environment variables
(``TOOLSEARCH_TOOL_SEARCH__MAX_RESULTS=8``), then the TOML file named by
``TOOLSEARCH_CONFIG_FILE`` (default ``toolsearch.toml`` in the working directory, if it
exists), with a ``[tool_search]`` table.

:class:`ToolSearchSettings` is a view of :class:`~toolsearch.search.options.ToolSearchOptions`
(it subclasses it): the advisor's options, their defaults and bounds are declared there
once; only the settings-only fields (``enabled``, the index and eviction choices) are
declared here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from toolsearch.search.advisor import ToolSearchToolCallingAdvisor
from toolsearch.search.eviction import (
    CompositeEvictionStrategy,
    EvictionStrategy,
    LruEvictionStrategy,
    TtlEvictionStrategy,
)
from toolsearch.search.options import ToolSearchOptions

__all__ = [
    "ToolSearchSettings",
    "ToolsearchSettings",
    "configured_advisor",
    "load_settings",
    "tool_search_advisor",
]

CONFIG_FILE_VARIABLE = "TOOLSEARCH_CONFIG_FILE"
DEFAULT_CONFIG_FILE = "toolsearch.toml"


class ToolSearchSettings(ToolSearchOptions):
    """``[tool_search]`` / ``TOOLSEARCH_TOOL_SEARCH__*``: the tool-search advisor's options
    (every :class:`ToolSearchOptions` field) and how to build its index and eviction."""

    model_config = ConfigDict(extra="ignore")  # unknown keys are ignored, as they always were

    enabled: bool = False
    """Use the tool-search advisor instead of the plain tool-calling advisor."""
    index_type: Literal["regex", "bm25", "vector", "hybrid"] = "bm25"
    lru_max_sessions: int = Field(default=1000, ge=1)
    ttl_seconds: float | None = Field(default=None, gt=0)
    """Setting it makes eviction a composite of LRU and TTL."""
    bm25_min_score: float = Field(default=0.0, ge=0.0, le=1.0)
    embedder: str | None = None
    """For ``vector`` and ``hybrid``: ``minilm`` (the default), ``static``, ``tuned`` (made by
    ``toolsearch embedder finetune``), a sentence-transformers model folder, or an API
    embedder: ``openai:MODEL`` / ``gemini:MODEL``, optionally ``?dimensions=N&base_url=URL``
    (default URL: ``OPENAI_BASE_URL`` / ``GOOGLE_GEMINI_BASE_URL``; docs/embedders.md)."""
    reranker: str | None = None
    """The folder of a cross-encoder (:class:`~toolsearch.indexes.CrossEncoderReranker`):
    it re-orders the index's top 20 hits for each search (any ``index_type``)."""
    search_log: Path | None = None
    """A JSONL file to append every search and the tools the model then called to
    (:class:`~toolsearch.search.search_log.JsonlSearchLog`), for ``toolsearch bench
    --replay`` and ``toolsearch embedder finetune --search-log``. It holds the search
    queries, which are user content. Off by default."""

    @property
    def options(self) -> ToolSearchOptions:
        """The advisor's options in these settings (every ``ToolSearchOptions`` field)."""
        return ToolSearchOptions(
            **{name: getattr(self, name) for name in ToolSearchOptions.model_fields}
        )

    @model_validator(mode="after")
    def _embedder_needs_vectors(self) -> ToolSearchSettings:
        if self.embedder and self.index_type not in ("vector", "hybrid"):
            raise ValueError(
                f"embedder={self.embedder!r} applies to index_type 'vector' or 'hybrid', "
                f"not {self.index_type!r}"
            )
        return self


class ToolsearchSettings(BaseSettings):
    """All toolsearch settings."""

    model_config = SettingsConfigDict(
        env_prefix="TOOLSEARCH_", env_nested_delimiter="__", extra="ignore"
    )

    tool_search: ToolSearchSettings = Field(default_factory=ToolSearchSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        path = Path(os.environ.get(CONFIG_FILE_VARIABLE, DEFAULT_CONFIG_FILE))
        sources = [init_settings, env_settings]
        if path.is_file():
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=path))
        return tuple(sources)


def load_settings(**overrides: Any) -> ToolsearchSettings:
    """Read the settings now (environment and TOML file); ``overrides`` win."""
    return ToolsearchSettings(**overrides)


def tool_search_advisor(settings: ToolSearchSettings) -> ToolSearchToolCallingAdvisor:
    """A ``ToolSearchToolCallingAdvisor`` configured by ``settings`` (every option field goes
    through ``settings.options``; the index and the eviction are built from the rest)."""
    search_log = None
    if settings.search_log is not None:
        from toolsearch.search.search_log import JsonlSearchLog

        search_log = JsonlSearchLog(settings.search_log)
    return ToolSearchToolCallingAdvisor(
        tool_index=_index(settings),
        eviction_strategy=_eviction(settings),
        options=settings.options,
        search_log=search_log,
    )


def configured_advisor() -> ToolSearchToolCallingAdvisor | None:
    """The advisor the settings ask for (read now), or ``None`` when they do not enable it.

    ``ChatClient.builder(model).build()`` calls it through the auto tool advisor provider.
    """
    settings = load_settings().tool_search  # environment and TOML file, read now
    return tool_search_advisor(settings) if settings.enabled else None


def _eviction(settings: ToolSearchSettings) -> EvictionStrategy:
    eviction: EvictionStrategy = LruEvictionStrategy(settings.lru_max_sessions)
    if settings.ttl_seconds is not None:
        eviction = CompositeEvictionStrategy(eviction, TtlEvictionStrategy(settings.ttl_seconds))
    return eviction


def _index(settings: ToolSearchSettings) -> Any:
    from toolsearch.indexes.specs import default_index, make_index

    named = {"index_type", "embedder", "bm25_min_score", "reranker"} & settings.model_fields_set
    if not named:  # nothing named: the advisor's default, with its fallback
        return default_index()
    return make_index(
        settings.index_type,
        embedder=settings.embedder,
        bm25_min_score=settings.bm25_min_score,
        reranker=settings.reranker,
    )
