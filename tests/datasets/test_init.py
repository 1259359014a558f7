"""Tests for rankaug.datasets (the package)."""

from __future__ import annotations

import rankaug.datasets


class TestPackage:
    def test_exports(self) -> None:
        assert sorted(rankaug.datasets.__all__) == [
            "CocoDetection",
            "SyntheticDetection",
            "YoloFolder",
            "write_yolo_folder",
        ]
