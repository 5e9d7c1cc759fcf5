"""Settings: every tool-search option from the environment (``TOOLSEARCH_...``) or a TOML file.

The "auto-configuration" path: with ``TOOLSEARCH_TOOL_SEARCH__ENABLED=true``,
``ChatClient.builder(model)`` (and ``ChatClient.create``) use a
``ToolSearchToolCallingAdvisor`` built from these settings instead of the plain
``ToolCallingAdvisor``. An explicitly registered tool advisor always wins.

Sources, highest priority first: keyword arguments, environment variables
(``TOOLSEARCH_TOOL_SEARCH__MAX_RESULTS=8``), then the TOML file named by
``TOOLSEARCH_CONFIG_FILE`` (default ``toolsearch.toml`` in the working directory, if it
exists), with a ``[tool_search]`` table.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from toolsearch.memory.memory import CONVERSATION_ID

if TYPE_CHECKING:
    from toolsearch.search.advisor import ToolSearchToolCallingAdvisor

__all__ = ["ToolSearchSettings", "ToolsearchSettings", "load_settings", "tool_search_advisor"]

CONFIG_FILE_VARIABLE = "TOOLSEARCH_CONFIG_FILE"
DEFAULT_CONFIG_FILE = "toolsearch.toml"


class ToolSearchSettings(BaseModel):
    """``[tool_search]`` / ``TOOLSEARCH_TOOL_SEARCH__*``: the tool-search advisor's options."""

    enabled: bool = False
    """Use the tool-search advisor instead of the plain tool-calling advisor."""
    index_type: Literal["regex", "bm25", "vector", "hybrid"] = "bm25"
    max_results: int = Field(5, ge=1, le=10)
    system_message_suffix: str | None = None
    reference_tool_name_accumulation: bool = True
    session_id_key_name: str = CONVERSATION_ID
    order: int = 300
    lru_max_sessions: int = Field(1000, ge=1)
    ttl_seconds: float | None = Field(None, gt=0)
    """Setting it makes eviction a composite of LRU and TTL."""
    bm25_min_score: float = Field(0.0, ge=0.0, le=1.0)
    embedder: str | None = None
    """For ``vector`` and ``hybrid``: ``minilm`` (the default), ``static``, ``tuned`` (made by
    ``toolsearch embedder finetune``) or a sentence-transformers model folder."""
    reranker: str | None = None
    """The folder of a cross-encoder (:class:`~toolsearch.indexes.CrossEncoderReranker`):
    it re-orders the index's top 20 hits for each search (any ``index_type``)."""
    pinned_tools: list[str] = Field(default_factory=list)
    search_tool_name: str = "toolSearchTool"
    undiscovered_tool_policy: Literal["execute", "hint"] = "execute"
    exclude_loaded_tools: bool = True
    """Searches skip the tools the model already sees, so each returns new ones."""

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
    """A ``ToolSearchToolCallingAdvisor`` configured by ``settings``."""
    from toolsearch.search.advisor import ToolSearchToolCallingAdvisor
    from toolsearch.search.eviction import (
        CompositeEvictionStrategy,
        EvictionStrategy,
        LruEvictionStrategy,
        TtlEvictionStrategy,
    )

    eviction: EvictionStrategy = LruEvictionStrategy(settings.lru_max_sessions)
    if settings.ttl_seconds is not None:
        eviction = CompositeEvictionStrategy(eviction, TtlEvictionStrategy(settings.ttl_seconds))
    return ToolSearchToolCallingAdvisor(
        tool_index=_index(settings),
        max_results=settings.max_results,
        system_message_suffix=settings.system_message_suffix,
        reference_tool_name_accumulation=settings.reference_tool_name_accumulation,
        session_id_key_name=settings.session_id_key_name,
        eviction_strategy=eviction,
        order=settings.order,
        pinned_tools=settings.pinned_tools,
        search_tool_name=settings.search_tool_name,
        undiscovered_tool_policy=settings.undiscovered_tool_policy,
        exclude_loaded_tools=settings.exclude_loaded_tools,
    )


def _index(settings: ToolSearchSettings) -> Any:
    from toolsearch import indexes

    first_stage = _first_stage(settings)
    if settings.reranker is None:
        return first_stage
    reranker = indexes.load_reranker(settings.reranker)
    return indexes.RerankingToolIndex(reranker, first_stage=first_stage)


def _first_stage(settings: ToolSearchSettings) -> Any:
    from toolsearch import indexes

    if settings.index_type == "regex":
        return indexes.RegexToolIndex()
    if settings.index_type == "bm25":
        return indexes.Bm25ToolIndex(min_score=settings.bm25_min_score)
    embedder = indexes.load_embedder(settings.embedder) if settings.embedder else None
    if settings.index_type == "vector":
        return indexes.VectorToolIndex(embedder=embedder)
    return indexes.HybridToolIndex(
        bm25=indexes.Bm25ToolIndex(min_score=settings.bm25_min_score),
        vector=indexes.VectorToolIndex(embedder=embedder),
    )
