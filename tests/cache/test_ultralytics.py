"""The cache's walk against real ultralytics: an augmenting ``YOLODataset`` is warned about.

Runs where ultralytics is installed (the benchmark venv, see
``benchmarks/requirements.txt``; ``.ci/run`` runs this file there) and skips elsewhere.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import pytest

from rankaug import CachedDataset, RankaugWarning
from rankaug.cache._walk import refuse_random
from rankaug.datasets import SyntheticDetection, write_yolo_folder


def yolo_dataset(root: Path, augment: bool) -> Any:
    """ultralytics' ``YOLODataset`` over the folder ``root``, as its trainer builds it."""
    os.environ.setdefault("YOLO_CONFIG_DIR", str(root.parent / "config"))  # its settings
    pytest.importorskip(
        "ultralytics",
        reason="ultralytics is not installed here: it lives in the benchmark venv "
        "(benchmarks/requirements.txt), where .ci/run runs this file",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ultralytics' own import-time warnings
        from ultralytics.cfg import get_cfg
        from ultralytics.data.dataset import YOLODataset
        from ultralytics.utils import DEFAULT_CFG

        return YOLODataset(
            img_path=str(root / "images"), imgsz=64, augment=augment, task="detect",
            data={"names": {i: str(i) for i in range(10)}, "channels": 3},
            hyp=get_cfg(DEFAULT_CFG), batch_size=4,
        )  # fmt: skip


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("yolo") / "data"
    return Path(write_yolo_folder(SyntheticDetection(6, image_size=64), folder))


def random_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    """The texts of the walk's warnings (not the fingerprint's)."""
    return [str(w.message) for w in caught if "CachedDataset found" in str(w.message)]


class TestAugmentingYoloDataset:
    def test_augment_true_is_warned_about(self, root: Path, tmp_path: Path) -> None:
        dataset = yolo_dataset(root, augment=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            CachedDataset(dataset, tmp_path)
        (found,) = random_warnings(caught)
        assert found.startswith("CachedDataset found YOLODataset with augment=True at dataset:")
        assert all(issubclass(w.category, RankaugWarning) for w in caught)

    def test_its_random_transforms_are_found(self, root: Path) -> None:
        dataset = yolo_dataset(root, augment=True)
        dataset.augment = False  # the flag hidden: its transforms are still random
        with pytest.warns(RankaugWarning, match=r"from ultralytics at dataset.transforms"):
            refuse_random(dataset)

    def test_augment_false_is_not(self, root: Path, tmp_path: Path) -> None:
        dataset = yolo_dataset(root, augment=False)  # LetterBox and Format: no draws
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            CachedDataset(dataset, tmp_path, fingerprint="yolo v1")
        assert random_warnings(caught) == []
