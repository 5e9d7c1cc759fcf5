"""The tool-search advisor's options, readable one by one as attributes
(``advisor.max_results``...), as before :class:`~toolsearch.search.options.ToolSearchOptions`
gathered them: read-only views of the frozen ``options``."""

from __future__ import annotations

from toolsearch.search.options import (
    Injection,
    LoadAll,
    SearchChoice,
    ToolSearchOptions,
    UndiscoveredToolPolicy,
    UnloadMoment,
)

__all__ = ["OptionViews"]


class OptionViews:
    """Each :class:`ToolSearchOptions` field as a read-only property of the advisor."""

    options: ToolSearchOptions

    @property
    def max_results(self) -> int:
        return self.options.max_results

    @property
    def system_message_suffix(self) -> str | None:
        return self.options.system_message_suffix

    @property
    def reference_tool_name_accumulation(self) -> bool:
        return self.options.reference_tool_name_accumulation

    @property
    def session_id_key_name(self) -> str:
        return self.options.session_id_key_name

    @property
    def search_tool_name(self) -> str:
        return self.options.search_tool_name

    @property
    def undiscovered_tool_policy(self) -> UndiscoveredToolPolicy:
        return self.options.undiscovered_tool_policy

    @property
    def search_results_with_summaries(self) -> bool:
        return self.options.search_results_with_summaries

    @property
    def exclude_loaded_tools(self) -> bool:
        return self.options.exclude_loaded_tools

    @property
    def multi_query(self) -> bool:
        return self.options.multi_query

    @property
    def search(self) -> SearchChoice:
        return self.options.search

    @property
    def injection(self) -> Injection:
        return self.options.injection

    @property
    def call_tool_name(self) -> str:
        return self.options.call_tool_name

    @property
    def max_loaded_tools(self) -> int | None:
        return self.options.max_loaded_tools

    @property
    def unload_idle_turns(self) -> int | None:
        return self.options.unload_idle_turns

    @property
    def unload_at(self) -> UnloadMoment:
        return self.options.unload_at

    @property
    def preload_results(self) -> int:
        return self.options.preload_results

    @property
    def preload_min_score(self) -> float:
        return self.options.preload_min_score

    @property
    def load_all(self) -> LoadAll:
        return self.options.load_all

    @property
    def cost_model(self) -> str:
        return self.options.cost_model

    @property
    def traffic_seconds(self) -> float:
        return self.options.traffic_seconds

    @property
    def warm_tools(self) -> int:
        return self.options.warm_tools
