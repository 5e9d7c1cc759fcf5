"""The GC freeze that keeps a first request off the event loop runs at most once per
occasion per process: an application that builds a door per request must not freeze (and
so keep for good) the garbage cycles alive at each construction."""

from __future__ import annotations

import gc

import pytest

from toolsearch import _first_use


@pytest.fixture
def freezes(monkeypatch):
    calls: list[int] = []
    monkeypatch.setattr(gc, "freeze", lambda: calls.append(1))
    monkeypatch.setattr(_first_use, "_FROZEN", set())
    monkeypatch.delenv("TOOLSEARCH_GC_FREEZE", raising=False)
    return calls


def test_building_many_doors_freezes_once(freezes):
    for _ in range(5):
        _first_use.freeze_loaded_objects()
    assert len(freezes) == 1


def test_a_model_load_is_its_own_occasion(freezes):
    _first_use.freeze_loaded_objects()
    _first_use.freeze_loaded_objects("model")
    _first_use.freeze_loaded_objects("model")
    assert len(freezes) == 2


def test_the_setting_turns_it_off(freezes, monkeypatch):
    monkeypatch.setenv("TOOLSEARCH_GC_FREEZE", "0")
    _first_use.freeze_loaded_objects()
    assert freezes == []
