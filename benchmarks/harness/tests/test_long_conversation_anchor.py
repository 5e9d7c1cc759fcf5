"""benchmarks/long_conversation.py's ``anchored_changes``: each tool change keeps the
position of the end of the request where it first showed, and every later request
repeats every change so far (what the ToolChange contract asks)."""

from __future__ import annotations

import sys
from pathlib import Path

from toolsearch import AssistantMessage, ChatOptions, Prompt, UserMessage
from toolsearch.chat.options import ToolChange

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/

from long_conversation import anchored_changes


def prompt(messages: int, *changes: ToolChange) -> Prompt:
    turns = [
        UserMessage(content="u") if i % 2 == 0 else AssistantMessage(content="a")
        for i in range(messages)
    ]
    return Prompt(turns, ChatOptions(tool_changes=changes))


def test_changes_are_anchored_where_they_first_showed_and_carried_across_turns() -> None:
    first = ToolChange("add", ("a",), 2)
    second = ToolChange("add", ("b",), 2)
    later = ToolChange("add", ("c",), 2)  # a new turn's run starts its changes afresh
    prompts = [
        prompt(3),
        prompt(5, first),
        prompt(7, first, second),
        prompt(9, later),
    ]
    out = [p.options.tool_changes for p in anchored_changes(prompts)]
    assert out[0] == ()
    assert out[1] == (ToolChange("add", ("a",), 5),)
    assert out[2] == (ToolChange("add", ("a",), 5), ToolChange("add", ("b",), 7))
    assert out[3] == (*out[2], ToolChange("add", ("c",), 9))
    assert [len(p.messages) for p in anchored_changes(prompts)] == [3, 5, 7, 9]
