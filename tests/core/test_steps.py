"""The sans-IO drivers (``toolsearch._steps``): one core, run blocking or awaited, behaves
the same, and an effect's failure reaches the core where it asked."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Generator
from typing import Any

import pytest

from toolsearch._steps import adrive, drive


def _core(log: list[str]) -> Generator[str, Any, str]:
    first = yield "a"
    try:
        second = yield "fail"
    except ValueError as exc:
        second = f"caught {exc}"
    finally:
        log.append("finally")
    return f"{first}|{second}"


def _handle(effect: str) -> str:
    if effect == "fail":
        raise ValueError("boom")
    return effect.upper()


async def _ahandle(effect: str) -> str:
    await asyncio.sleep(0)
    return _handle(effect)


def test_both_drivers_run_one_core_to_the_same_result() -> None:
    sync_log: list[str] = []
    async_log: list[str] = []

    assert drive(_core(sync_log), _handle) == "A|caught boom"
    assert asyncio.run(adrive(_core(async_log), _ahandle)) == "A|caught boom"
    assert sync_log == async_log == ["finally"]


def test_a_failure_the_core_does_not_catch_leaves_through_it_after_its_finally() -> None:
    log: list[str] = []

    def core() -> Generator[str, Any, None]:
        try:
            yield "fail"
        finally:
            log.append("finally")

    with pytest.raises(ValueError, match="boom"):
        drive(core(), _handle)
    with pytest.raises(ValueError, match="boom"):
        asyncio.run(adrive(core(), _ahandle))
    assert log == ["finally", "finally"]


def test_the_sync_driver_loads_no_event_loop() -> None:
    code = (
        "import sys\n"
        "from toolsearch._steps import drive\n"
        "def core():\n"
        "    return (yield 1) + 1\n"
        "assert drive(core(), lambda e: e) == 2\n"
        "print('asyncio' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
