"""Tests for rankaug.cache._walk: a random wrapper anywhere inside is found."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from torch.utils.data import ConcatDataset, Dataset

import rankaug.cache._walk
from rankaug import MosaicDataset, RankaugWarning
from rankaug.cache._walk import refuse_random
from rankaug.datasets import SyntheticDetection


class Holder(Dataset[Any]):
    """Holds whatever it is given as attributes."""

    def __init__(self, **attributes: Any) -> None:
        self.__dict__.update(attributes)

    def __len__(self) -> int:
        return 2

    def __getitem__(self, index: int) -> Any:
        return index


class Slotted:
    __slots__ = ("part",)

    def __init__(self, part: object) -> None:
        self.part = part


def mosaic() -> MosaicDataset[Any]:
    return MosaicDataset(SyntheticDetection(4, image_size=32), output_size=32, seed=0)


class TestRefuseRandom:
    @pytest.mark.parametrize(
        ("make", "where"),
        [
            (lambda m: Holder(inner=m), "dataset.inner"),
            (lambda m: Holder(parts=[SyntheticDetection(2), m]), r"dataset.parts\[1\]"),
            (lambda m: Holder(table={"train": m}), r"dataset.table\['train'\]"),
            (
                lambda m: Holder(deep=(Holder(x=[{"k": Slotted(m)}]),)),
                r"dataset.deep\[0\].x\[0\]\['k'\].part",
            ),
            (lambda m: ConcatDataset([SyntheticDetection(2), m]), r"dataset.datasets\[1\]"),
            (lambda m: m, r"dataset\)"),
        ],
    )
    def test_found_wherever_it_is(self, make: Any, where: str) -> None:
        with pytest.raises(ValueError, match=rf"holds MosaicDataset \(at {where}"):
            refuse_random(make(mosaic()))

    def test_cycles_and_plain_data_pass(self) -> None:
        holder = Holder(samples=[{"image": np.zeros((4, 4))} for _ in range(50)])
        holder.me = holder  # type: ignore[attr-defined]
        refuse_random(holder)
        refuse_random(SyntheticDetection(3))

    def test_the_walk_is_bounded(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(rankaug.cache._walk, "LIMIT", 10)
        with pytest.warns(RankaugWarning, match="stopped looking for rankaug wrappers"):
            refuse_random(Holder(parts=[[i] for i in range(20)]))


class TestOtherLibrariesTransforms:
    """An albumentations, torchvision or kornia transform may draw at random: the cache
    would keep its first draw, so the first one found is warned about, once."""

    def test_an_albumentations_pipeline_inside_is_warned_about_once(self) -> None:
        A = pytest.importorskip("albumentations")
        flip = A.Compose([A.HorizontalFlip(p=0.5)])
        holder = Holder(data=SyntheticDetection(2, 8), inner=[flip, A.Compose([A.VerticalFlip()])])
        with pytest.warns(RankaugWarning) as caught:
            refuse_random(holder)
        (warning,) = [w for w in caught if issubclass(w.category, RankaugWarning)]
        assert "found Compose from albumentations at dataset.inner[" in str(warning.message)
        assert "RandomAugmentWrapper(CachedDataset(" in str(warning.message)

    def test_a_kornia_augmentation_inside_is_warned_about(self) -> None:
        K = pytest.importorskip("kornia.augmentation")
        with pytest.warns(RankaugWarning, match="found RandomHorizontalFlip from kornia"):
            refuse_random(Holder(data=SyntheticDetection(2, 8), aug=K.RandomHorizontalFlip()))

    def test_plain_data_is_not_warned_about(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            refuse_random(Holder(data=SyntheticDetection(2, 8), parts=[np.zeros(3), len]))
