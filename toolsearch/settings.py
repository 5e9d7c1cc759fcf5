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
from typing import Any

from pydantic import ConfigDict, Field, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from toolsearch.indexes import kinds
from toolsearch.search.advisor import ToolSearchToolCallingAdvisor
from toolsearch.search.options import ToolSearchOptions
from toolsearch.stores.eviction import (
    CompositeEvictionStrategy,
    EvictionStrategy,
    LruEvictionStrategy,
    TtlEvictionStrategy,
)

__all__ = [
    "Settings",
    "ToolSearchSettings",
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
    index_type: str = "bm25"
    """A kind of :data:`toolsearch.indexes.kinds.KINDS`: ``regex``, ``bm25``, ``vector``,
    ``hybrid`` or ``milvus`` (its embedder in ``embedder``, not after a colon)."""
    lru_max_sessions: int = Field(default=1000, ge=1)
    ttl_seconds: float | None = Field(default=None, gt=0)
    """Setting it makes eviction a composite of LRU and TTL."""
    bm25_min_score: float = Field(default=0.0, ge=0.0, le=1.0)
    embedder: str | None = None
    """For ``vector`` and ``hybrid``: ``minilm`` (the default), ``static``, ``tuned`` (made by
    ``toolsearch embedder finetune``), a sentence-transformers model folder, or an API
    embedder: ``openai:MODEL`` / ``gemini:MODEL``, optionally ``?dimensions=N&base_url=URL``
    (default URL: ``OPENAI_BASE_URL`` / ``GOOGLE_GEMINI_BASE_URL``; docs/embedders.md)."""
    uri: str | None = None
    """For an index on a server (``milvus``): its URI; unset, the kind's variable
    (``MILVUS_URI``). The cluster's token comes from ``MILVUS_TOKEN`` only."""
    collection: str | None = None
    """For an index on a server: the collection (unset: the backend's default)."""
    reranker: str | None = None
    """The folder of a cross-encoder (:class:`~toolsearch.indexes.CrossEncoderReranker`):
    it re-orders the index's top 20 hits for each search (any ``index_type``)."""
    search_log: Path | None = None
    """A JSONL file to append every search and the tools the model then called to
    (:class:`~toolsearch.search.logs.sink.JsonlSearchLog`), for ``toolsearch bench
    --replay`` and ``toolsearch embedder finetune --search-log``. It holds the search
    queries, which are user content. Off by default."""
    usage_memory: Path | None = None
    """Learning from use (docs/learning-from-use.md): a JSON file where the index keeps, per
    tool, the requests that led to a successful call of it, and ranks by them beside its own
    ranking (:class:`~toolsearch.indexes.learning.learned.LearnedToolIndex`). It stores user request
    text. Off by default."""
    usage_memory_autosave_every: int | None = Field(default=50, ge=1)
    """Save the usage memory after this many learned requests (``None``: on close and at
    exit only). A save merges into the file (or Redis): several workers lose nothing."""
    usage_memory_redis_url: str | None = None
    """Keep the usage memory in Redis instead of a file (one memory every worker learns
    into and reads: :class:`~toolsearch.indexes.learning.redis_store.RedisUsageStore`)."""
    usage_memory_namespace: str = "toolsearch"
    """The Redis key prefix of the usage memory (``<namespace>:usage``)."""
    usage_memory_tenant: str | None = None
    """Scope what this process learns and serves under a tenant key."""
    usage_memory_store_text: bool = True
    """``False``: keep no request text, only hashes of it and its terms, and its vector."""
    usage_memory_shadow: bool = False
    """Learn, and log what the learned ranking would have answered, but answer with the
    index's own ranking."""

    @property
    def options(self) -> ToolSearchOptions:
        """The advisor's options in these settings (every ``ToolSearchOptions`` field)."""
        return ToolSearchOptions(
            **{name: getattr(self, name) for name in ToolSearchOptions.model_fields}
        )

    @field_validator("index_type")
    @classmethod
    def _known_kind(cls, value: str) -> str:
        kinds.index_kind(value)  # ValueError listing the table's names
        return value

    @model_validator(mode="after")
    def _options_apply(self) -> ToolSearchSettings:
        kind = kinds.index_kind(self.index_type)
        if self.embedder and not kind.embedder:
            raise ValueError(
                f"embedder={self.embedder!r} applies to index_type "
                f"{kinds.choices(kinds.embedding_kind_names())}, not {self.index_type!r}"
            )
        for option in ("uri", "collection"):
            value = getattr(self, option)
            if value and not kind.needs_uri:
                raise ValueError(
                    f"{option}={value!r} applies to index_type "
                    f"{kinds.choices(kinds.server_kind_names())}, not {self.index_type!r}"
                )
        return self


class Settings(BaseSettings):
    """All toolsearch settings: one section per part (today ``tool_search``)."""

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


def load_settings(**overrides: Any) -> Settings:
    """Read the settings now (environment and TOML file); ``overrides`` win."""
    return Settings(**overrides)


def tool_search_advisor(settings: ToolSearchSettings) -> ToolSearchToolCallingAdvisor:
    """A ``ToolSearchToolCallingAdvisor`` configured by ``settings`` (every option field goes
    through ``settings.options``; the index and the eviction are built from the rest)."""
    search_log: Any = None
    if settings.search_log is not None:
        from toolsearch.search.logs.sink import JsonlSearchLog

        search_log = JsonlSearchLog(settings.search_log)
    index = _index(settings)
    if settings.usage_memory is not None or settings.usage_memory_redis_url is not None:
        from toolsearch.indexes.learning.learned import LearnedToolIndex
        from toolsearch.search.logs.sink import TeeSearchLog

        memory = usage_memory(settings)  # it learns as a search log, and ranks
        index = LearnedToolIndex(index, memory=memory, shadow=settings.usage_memory_shadow)
        search_log = memory if search_log is None else TeeSearchLog(search_log, memory)
    return ToolSearchToolCallingAdvisor(
        tool_index=index,
        eviction_strategy=_eviction(settings),
        options=settings.options,
        search_log=search_log,
    )


def usage_memory(settings: ToolSearchSettings) -> Any:
    """The :class:`~toolsearch.indexes.learning.memory.UsageMemory` the settings describe (a
    file, or Redis with ``usage_memory_redis_url``)."""
    from toolsearch.indexes.learning.memory import UsageMemory, UsageParams

    params = UsageParams(
        tenant=settings.usage_memory_tenant, store_text=settings.usage_memory_store_text
    )
    autosave = settings.usage_memory_autosave_every
    if settings.usage_memory_redis_url is not None:
        from toolsearch.indexes.learning.redis_store import RedisUsageStore

        store = RedisUsageStore(
            settings.usage_memory_redis_url, namespace=settings.usage_memory_namespace
        )
        return UsageMemory(store=store, params=params, autosave_every=autosave)
    return UsageMemory(settings.usage_memory, params=params, autosave_every=autosave)


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

    index_fields = {"index_type", "embedder", "bm25_min_score", "reranker", "uri", "collection"}
    if not index_fields & settings.model_fields_set:  # nothing named: the advisor's default
        return default_index()
    return make_index(
        settings.index_type,
        embedder=settings.embedder,
        bm25_min_score=settings.bm25_min_score,
        reranker=settings.reranker,
        uri=settings.uri or None,
        collection=settings.collection or None,
    )
