from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rankaug import CachedDataset, MosaicDataset, MosaicGrid, Partners, RankaugWarning
from rankaug._multi.settings import check_settings, dataset_settings, settings_text, shown
from rankaug.datasets import SyntheticDetection
from rankaug.mix import CopyPasteDataset, CutMixDataset, MixUpDataset
from tests.mix.painted import instance_sample


def _probability(epoch: int) -> float:
    return 1.0


class _Ramp:
    """A schedule whose ``p`` is a bound method (its object has no ``repr`` of its own)."""

    def __init__(self, top: object) -> None:
        self.top = top

    def p(self, epoch: int) -> float:
        return 1.0 if self.top else 0.0


class TestShown:
    def test_the_same_in_every_process(self) -> None:
        assert shown(_probability) == f"{__name__}._probability"
        assert " at 0x" not in shown(object())
        assert shown(np.arange(3)) == shown(np.arange(3)) != shown(np.arange(1, 4))
        assert shown("a\nb") == "a b"  # one line per setting

    def test_a_bound_method_shows_its_object(self) -> None:
        assert (
            shown(_Ramp(0.0).p) == f"{__name__}._Ramp.p of <{__name__}._Ramp object {{'top': 0.0}}>"
        )
        assert shown(_Ramp(0.0).p) != shown(_Ramp(1.0).p)
        assert shown(_Ramp(np.arange(3)).p) != shown(_Ramp(np.arange(1, 4)).p)

    def test_an_object_of_no_plain_data_shows_its_class(self) -> None:
        # what the check cannot tell apart (the docs say so)
        assert shown(_Ramp(_probability).p) == f"{__name__}._Ramp.p of <{__name__}._Ramp object>"
        assert shown(_Ramp(object())) == shown(_Ramp(object()))


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

    def test_only_the_dataset_class_differs_a_warning(self) -> None:
        recorded = settings_text({"dataset": "Subset", "dataset_length": 4, "p": 1.0})
        given = settings_text({"dataset": "list", "dataset_length": 4, "p": 1.0})
        with pytest.warns(RankaugWarning, match=r"in its dataset's class only: dataset is Subs"):
            check_settings({"settings": recorded}, given, "M")
        longer = settings_text({"dataset": "list", "dataset_length": 5, "p": 1.0})
        with pytest.raises(ValueError, match=r": dataset is Subset in the record, list given; "
                           r"dataset_length is 4 in the record, 5 given; the replay"):  # fmt: skip
            check_settings({"settings": recorded}, longer, "M")


class TestDatasetSettings:
    def test_a_keyed_dataset_inside_shows_its_seed(self) -> None:
        inner = MosaicDataset(SyntheticDetection(4, image_size=32), seed=3, output_size=32)
        assert dataset_settings(inner) == {
            "dataset": "MosaicDataset",
            "dataset_length": 4,
            "dataset_key": "seed=3, keying='stream'",
        }

    def test_a_cached_dataset_is_looked_through(self, tmp_path: Path) -> None:
        data = SyntheticDetection(4, image_size=32)
        assert dataset_settings(CachedDataset(data, tmp_path)) == dataset_settings(data)


def _data() -> SyntheticDetection:
    return SyntheticDetection(6, image_size=40, seed=1)


class TestReplayRefusesOtherSettings:
    @pytest.mark.parametrize(
        ("made", "given", "named"),
        [
            (
                {"output_size": 48},
                {"output_size": 32},
                r"output_size is \(48, 48\) in the record, \(32, 32\) given",
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

    @pytest.mark.parametrize(
        ("made", "given"),
        [
            (Partners(weights=[1, 1, 1, 0, 0, 0]), Partners(weights=[0, 0, 0, 1, 1, 1])),
            (Partners(pool=[1, 2, 3]), Partners(pool=[3, 4, 5])),
            (Partners(pool=[1, 2, 3]), Partners(pool=[1, 2, 3], weights=[1, 1, 2])),
        ],
    )
    def test_mosaic_of_other_partners(self, made: Partners, given: Partners) -> None:
        record = MosaicDataset(_data(), seed=0, output_size=48, partners=made)[0]["mosaic"]
        other = MosaicDataset(_data(), seed=0, output_size=48, partners=given)
        with pytest.raises(ValueError, match=r"differs from this MosaicDataset's: partners is "):
            other.replay(record)

    def test_a_schedule_of_another_object(self) -> None:
        record = MosaicDataset(_data(), seed=0, output_size=48, p=_Ramp(0.0).p)[0]["mosaic"]
        assert record["applied"] is False
        other = MosaicDataset(_data(), seed=0, output_size=48, p=_Ramp(1.0).p)
        with pytest.raises(ValueError, match=r": p is .*\{'top': 0.0\}> in the record, "):
            other.replay(record)

    @pytest.mark.parametrize(
        "given",
        [
            {"output_size": (48, 48)},
            {"output_size": np.int64(48)},
            {"output_size": 48, "p": 1},
            {"output_size": 48, "layout": MosaicGrid(grid=[2, 2], fill=114.0)},  # type: ignore[arg-type]
        ],
    )
    def test_mosaic_settings_written_another_way(self, given: dict[str, Any]) -> None:
        out = MosaicDataset(_data(), seed=0, output_size=48, p=1.0)[2]
        again = MosaicDataset(_data(), seed=0, **given).replay(out["mosaic"])
        np.testing.assert_array_equal(again["image"], out["image"])

    def test_mosaic_of_another_dataset(self) -> None:
        record = MosaicDataset(_data(), seed=0, output_size=48)[2]["mosaic"]
        other = MosaicDataset(SyntheticDetection(8, image_size=40), seed=0, output_size=48)
        with pytest.raises(ValueError, match=r"dataset_length is 6 in the record, 8 given"):
            other.replay(record)

    def test_mosaic_of_a_cached_dataset(self, tmp_path: Path) -> None:
        cached = MosaicDataset(CachedDataset(_data(), tmp_path), seed=0, output_size=48)
        out = cached[2]
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the same samples: not even a warning
            again = MosaicDataset(_data(), seed=0, output_size=48).replay(out["mosaic"])
        np.testing.assert_array_equal(again["image"], out["image"])

    def test_mosaic_of_a_dataset_of_another_class(self) -> None:
        out = MosaicDataset(_data(), seed=0, output_size=48)[2]
        same = [_data()[i] for i in range(6)]  # the same samples, in a list
        with pytest.warns(RankaugWarning, match=r"dataset is SyntheticDetection in the record, "):
            again = MosaicDataset(same, seed=0, output_size=48).replay(out["mosaic"])
        np.testing.assert_array_equal(again["image"], out["image"])

    def test_mosaic_of_a_wrapper_of_another_seed(self) -> None:
        def inner(seed: int) -> MosaicDataset[Any]:
            return MosaicDataset(_data(), seed=seed, output_size=40, keying="sample", record=None)

        record = MosaicDataset(inner(1), seed=0, output_size=48)[2]["mosaic"]
        other = MosaicDataset(inner(2), seed=0, output_size=48)
        with pytest.raises(ValueError, match=r"dataset_key is seed=1, keying='sample' in the rec"):
            other.replay(record)

    @pytest.mark.parametrize("kind", [MixUpDataset, CutMixDataset])
    def test_mixes(self, kind: type[MixUpDataset[Any]] | type[CutMixDataset[Any]]) -> None:
        record = kind(_data(), seed=0, alpha=2.0)[1][kind.kind]
        assert kind(_data(), seed=9, alpha=2.0).replay(record)[kind.kind] == record
        with pytest.raises(ValueError, match=r"alpha is 2.0 in the record, 1.5 given"):
            kind(_data(), seed=0, alpha=1.5).replay(record)

    def test_mix_settings_written_another_way(self) -> None:
        record = MixUpDataset(_data(), seed=0, p=1)[1]["mixup"]
        assert MixUpDataset(_data(), seed=0, p=1.0).replay(record)["mixup"] == record
        record = CutMixDataset(_data(), seed=0, alpha=2, fill=114)[1]["cutmix"]
        again = CutMixDataset(_data(), seed=0, alpha=2.0, fill=(114.0,)).replay(record)
        assert again["cutmix"] == record

    def test_mix_of_other_partners(self) -> None:
        record = MixUpDataset(_data(), seed=0, partners=Partners(pool=[1]))[0]["mixup"]
        other = MixUpDataset(_data(), seed=0, partners=Partners(pool=[5]))
        with pytest.raises(ValueError, match=r"partners is PartnerSampler\(.*pool=\[1\]"):
            other.replay(record)

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
