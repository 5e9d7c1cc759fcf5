"""Tool-name uniqueness is checked once per tool set, not every time options are rebuilt."""

from __future__ import annotations

from typing import Any

import pytest

from toolsearch import DuplicateToolNameError, tool
from toolsearch.chat.options import ChatOptions
from toolsearch.tools import ensure_unique_names, tool_callbacks


class _Counting:
    """Wraps a callback and counts reads of its definition (what a name check reads)."""

    reads = 0

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.metadata = inner.metadata

    @property
    def definition(self) -> Any:
        _Counting.reads += 1
        return self._inner.definition

    def call(self, *args: Any, **kwargs: Any) -> Any:
        return self._inner.call(*args, **kwargs)


def _callbacks(count: int) -> tuple[Any, ...]:
    made = []
    for i in range(count):

        @tool(name=f"tool_{i}")
        def f(x: int) -> int:
            """Returns x."""
            return x

        made.append(_Counting(tool_callbacks(f)[0]))
    return tuple(made)


def test_options_rebuilt_with_the_same_tools_do_not_check_names_again() -> None:
    callbacks = _callbacks(30)
    options = ChatOptions(tool_callbacks=callbacks)
    first = _Counting.reads
    assert first >= 30  # the first check reads every name
    for n in range(12):  # what one advisor request does with its options
        options = options.replace(temperature=n / 10).merged_with(ChatOptions(max_tokens=n + 1))
    assert _Counting.reads == first


def test_a_new_tool_set_is_still_checked() -> None:
    callbacks = _callbacks(3)
    ChatOptions(tool_callbacks=callbacks)
    with pytest.raises(DuplicateToolNameError):
        ChatOptions(tool_callbacks=(*callbacks, callbacks[0]))
    with pytest.raises(DuplicateToolNameError):
        ensure_unique_names([callbacks[1], callbacks[1]])
