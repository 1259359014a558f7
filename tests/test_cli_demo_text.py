from __future__ import annotations

from typing import Any

import pytest

from rankaug.cli.demo import DemoConfig
from rankaug.cli.demo_text import ApproachResult, DemoResult


def result(steps: int, columns: int) -> DemoResult:
    """Two ranks, ``steps`` steps in each of two epochs, no draw repeated."""
    rows: list[dict[str, Any]] = [
        {"rank": rank, "epoch": epoch, "step": step, "worker": 0, "index": step,
         "partners": [rank, step], "record_epoch": epoch,
         "mixup": {"partner": step, "ratio": 0.5}, "repeated": False}
        for epoch in range(2) for rank in range(2) for step in range(steps)
    ]  # fmt: skip
    approaches = {"rankaug": ApproachResult("rankaug.MosaicDataset", "MixUp", rows, 0, 0, 0)}
    config = DemoConfig(columns=columns)
    return DemoResult(config, "built-in", approaches, "demo.png", (100, 200))


class TestDemoResult:
    @pytest.mark.parametrize(
        ("steps", "columns", "said"),
        [(2, 4, "its 2 steps"), (1, 4, "its 1 step"), (4, 4, "its 4 steps"),
         (6, 4, "the first 4 steps")],
    )  # fmt: skip
    def test_the_sheet_line_names_the_steps_it_shows(
        self, steps: int, columns: int, said: str
    ) -> None:
        # before: "the first 4 steps of epoch 0" for an epoch of 2 steps (--samples 3)
        lines = result(steps, columns).to_text().splitlines()
        sheet = next(line for line in lines if line.startswith("sheet: "))
        assert sheet.endswith(f"rows = ranks, {said} of epoch 0)")
