from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

from rankaug import MosaicDataset, RankaugWarning
from rankaug._multi.settings import check_settings, dataset_text, settings_text, shown
from rankaug.datasets import SyntheticDetection
from rankaug.mix import CopyPasteDataset, CutMixDataset, MixUpDataset
from tests.mix.painted import instance_sample


def _probability(epoch: int) -> float:
    return 1.0


class TestShown:
    def test_the_same_in_every_process(self) -> None:
        assert shown(_probability) == f"{__name__}._probability"
        assert " at 0x" not in shown(object())
        assert shown(np.arange(3)) == shown(np.arange(3)) != shown(np.arange(1, 4))
        assert shown("a\nb") == "a b"  # one line per setting


class TestCheckSettings:
    def test_names_every_setting_that_differs(self) -> None:
        recorded = settings_text({"wrapper": "M", "output_size": (64, 64), "p": 1.0})
        given = settings_text({"wrapper": "M", "output_size": (32, 32), "p": 0.5})
        check_settings({"settings": recorded}, recorded, "M")
        with pytest.raises(
            ValueError,
            match=r"^record\['settings'\] differs from this M's: output_size is \(64, 64\) in "
            r"the record, \(32, 32\) given; p is 1.0 in the record, 0.5 given; the replay",
        ):
            check_settings({"settings": recorded}, given, "M")
        with pytest.raises(ValueError, match=r"alpha is \(absent\) in the record, 2.0 given"):
            check_settings({"settings": "wrapper=M"}, "wrapper=M\nalpha=2.0", "M")
        with pytest.raises(TypeError, match=r"^record\['settings'\] must be the text of a M's"):
            check_settings({"settings": 5}, given, "M")

    def test_an_old_record_reads_with_a_warning(self) -> None:
        with pytest.warns(RankaugWarning, match="cannot check that it was made with this M's"):
            check_settings({}, "wrapper=M", "M")

    def test_a_keyed_dataset_inside_shows_its_seed(self) -> None:
        inner = MosaicDataset(SyntheticDetection(4, image_size=32), seed=3, output_size=32)
        assert dataset_text(inner) == "MosaicDataset of 4, seed=3, keying='stream'"


def _data() -> SyntheticDetection:
    return SyntheticDetection(6, image_size=40, seed=1)


class TestReplayRefusesOtherSettings:
    @pytest.mark.parametrize(
        ("made", "given", "named"),
        [
            (
                {"output_size": 48},
                {"output_size": 32},
                r"output_size is 48 in the record, 32 given",
            ),
            ({"p": 1.0}, {"p": 0.5}, r"p is 1.0 in the record, 0.5 given"),
            ({}, {"p": _probability}, rf"p is 1.0 in the record, {__name__}._probability given"),
        ],
    )
    def test_mosaic(self, made: dict[str, object], given: dict[str, object], named: str) -> None:
        options = {"output_size": 48, **made}
        record = MosaicDataset(_data(), seed=0, **options)[2]["mosaic"]  # type: ignore[arg-type]
        same = MosaicDataset(_data(), seed=5, keying="sample", **options)  # type: ignore[arg-type]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            same.replay(record)  # seed and keying: the record's state replaces the key
        other = MosaicDataset(_data(), seed=0, **{**options, **given})  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=rf"differs from this MosaicDataset's: {named}"):
            other.replay(record)

    def test_mosaic_of_another_dataset(self) -> None:
        record = MosaicDataset(_data(), seed=0, output_size=48)[2]["mosaic"]
        other = MosaicDataset(SyntheticDetection(8, image_size=40), seed=0, output_size=48)
        with pytest.raises(ValueError, match=r"dataset is SyntheticDetection of 6 in the record, "):
            other.replay(record)

    @pytest.mark.parametrize("kind", [MixUpDataset, CutMixDataset])
    def test_mixes(self, kind: type[MixUpDataset[Any]] | type[CutMixDataset[Any]]) -> None:
        record = kind(_data(), seed=0, alpha=2.0)[1][kind.kind]
        assert kind(_data(), seed=9, alpha=2.0).replay(record)[kind.kind] == record
        with pytest.raises(ValueError, match=r"alpha is 2.0 in the record, 1.5 given"):
            kind(_data(), seed=0, alpha=1.5).replay(record)

    def test_another_wrapper(self) -> None:
        record = MixUpDataset(_data(), seed=0)[1]["mixup"]
        with pytest.raises(ValueError, match=r"wrapper is MixUpDataset in the record, CutMixDat"):
            CutMixDataset(_data(), seed=0).replay(record)

    def test_copypaste_settings(self) -> None:
        data = [instance_sample(i, (8, 8), [(1, 1, 5, 5)]) for i in range(2)]
        record = CopyPasteDataset(data, seed=0, p=1.0)[1]["copypaste"]
        with pytest.raises(ValueError, match=r"fraction is 1.0 in the record, 0.5 given"):
            CopyPasteDataset(data, seed=0, p=1.0, fraction=0.5).replay(record)

    def test_an_old_record_replays_with_a_warning(self) -> None:
        mosaic = MosaicDataset(_data(), seed=0, output_size=48)
        out = mosaic[2]
        old = {k: v for k, v in out["mosaic"].items() if k != "settings"}
        with pytest.warns(RankaugWarning, match="has no 'settings'"):
            again = mosaic.replay(old)
        np.testing.assert_array_equal(again["image"], out["image"])
