from __future__ import annotations

import pickle
from collections.abc import Mapping
from dataclasses import fields
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader

from rankaug import EpochIndex, Partners, SampleError, Targets
from rankaug._multi.pairs import Part
from rankaug.keys import KeyedRandom
from rankaug.mix import CopyPasteDataset, CutMixDataset, MixUpDataset, PairDataset
from rankaug.mix.base import Combined, PairPlan
from tests.mix.painted import flat_sample, instance_sample

WRAPPERS: list[type[PairDataset[Any]]] = [MixUpDataset, CutMixDataset, CopyPasteDataset]


def dataset(count: int = 8) -> list[dict[str, Any]]:
    return [instance_sample(i, (12, 16), [(i % 5, 1, i % 5 + 6, 8)]) for i in range(count)]


def labelled(main: Any, partner: Any, dtypes: tuple[Any, Any] | None = None) -> list[Any]:
    """A main sample (index 0) with one instance in a corner, a partner with one apart."""
    samples = [instance_sample(0, (12, 12), [(0, 0, 3, 3)]),
               instance_sample(1, (12, 12), [(4, 4, 12, 12)])]  # fmt: skip
    for sample, value, dtype in zip(samples, (main, partner), dtypes or (None, None), strict=True):
        sample["labels"] = np.array([value], dtype)
    return samples


def keyed(wrapper: Any, index: int) -> KeyedRandom:
    return wrapper.key_random(wrapper.context(index))


class Average(PairDataset[Any]):
    """A two-sample wrapper of its own: the mean image, no targets."""

    kind = "average"
    uniforms = 1

    def combine(
        self, main: Part, partner: Part, plan: PairPlan, rng: np.random.Generator
    ) -> Combined:
        image = ((main.image.astype(np.int32) + partner.image) // 2).astype(main.image.dtype)
        return Combined(
            Part(main.index, image, main.boxes, main.fields, None, None, None, {}, None),
            0.5,
            {"u": plan.uniforms[0]},
        )


class Worded(Average):
    """:class:`Average` that also draws a 32-bit word, as ``rng.choice`` does."""

    def combine(
        self, main: Part, partner: Part, plan: PairPlan, rng: np.random.Generator
    ) -> Combined:
        combined = super().combine(main, partner, plan, rng)
        word = int(rng.integers(0, 2**31, dtype=np.int32))  # may leave half a word buffered
        return combined._replace(details={**combined.details, "word": word})


class ObjectAdapter:
    """Samples that are objects with ``image``, ``boxes`` and ``labels`` attributes."""

    def unpack(self, sample: Any, targets: Any) -> tuple[dict[str, Any], None]:
        return {"image": sample.image, "bboxes": sample.boxes, "labels": sample.labels}, None

    def repack(self, data: Mapping[str, Any], state: None) -> SimpleNamespace:
        return SimpleNamespace(image=data["image"], boxes=data["bboxes"], labels=data["labels"])


class _PartnersMixUp(MixUpDataset[Any]):
    """A subclass that sets its partners (and maybe its config) before the constructor."""

    def __init__(self, dataset: Any, partners: Partners, config: Any = None) -> None:
        self.partners = partners  # type: ignore[assignment]
        if config is not None:
            self.config = config
        super().__init__(dataset, seed=0, partners=Partners(pool=[0, 1, 2]))


class TestPairDataset:
    def test_a_subclass_may_set_partners_or_config_before_the_constructor(self) -> None:
        # before: refused as an assignment after construction, whatever the value (the
        # constructor sets them after the base's, which counted as made)
        config = MixUpDataset(dataset(), seed=1).config  # built again: equal
        mix = _PartnersMixUp(dataset(), Partners(pool=(0, 1, 2)), config)
        assert mix.partners.pool is not None
        assert mix.partners.pool.tolist() == [0, 1, 2]
        assert mix.config == config
        assert mix[0]["image"].shape == dataset()[0]["image"].shape
        with pytest.raises(AttributeError, match=r"^_PartnersMixUp\.partners cannot be assigned"):
            mix.partners = Partners(pool=(0, 1, 2))  # type: ignore[assignment]  # made: refused

    @pytest.mark.parametrize("name", ["partners", "config"])
    def test_another_value_set_before_the_constructor_is_refused(self, name: str) -> None:
        given: dict[str, Any] = {"partners": Partners(pool=(0, 1, 2))}
        given[name] = Partners(pool=(0, 1)) if name == "partners" else {"lr": 0.1}
        with pytest.raises(
            AttributeError,
            match=rf"^_PartnersMixUp\.{name} cannot be assigned: it was set before the "
            rf"constructor, which sets {name} itself, to another value",
        ):
            _PartnersMixUp(dataset(), **given)

    @pytest.mark.parametrize("mix", [MixUpDataset, CutMixDataset])
    def test_an_adapter_set_afterwards_reads_both_samples(self, mix: type) -> None:
        # before: the output was repacked by the new adapter, both samples still unpacked
        # by the old one, which refused them ("for any other shape, pass adapter=")
        box = np.array([[1.0, 1.0, 9.0, 7.0]])
        data = [SimpleNamespace(image=np.full((12, 16, 3), 40 * i, np.uint8), boxes=box,
                                labels=np.array([i])) for i in range(3)]  # fmt: skip
        wrapper = mix(data, seed=0, record=None)
        wrapper.adapter = ObjectAdapter()
        assert isinstance(wrapper.adapter, ObjectAdapter)
        out = wrapper[0]
        assert type(out) is SimpleNamespace
        assert out.image.shape == (12, 16, 3)
        assert len(out.boxes) == len(out.labels) > 0
        wrapper.adapter = None  # the default again: it refuses these samples
        with pytest.raises(SampleError, match="cannot handle a sample of type SimpleNamespace"):
            wrapper[0]

    @pytest.mark.parametrize("mix", WRAPPERS)
    @pytest.mark.parametrize("name", ["p", "record", "fill", "targets"])
    def test_an_argument_kept_in_the_config_cannot_be_assigned(self, mix: type, name: str) -> None:
        # before: mixup.p = 0.0 made an attribute nothing read: every sample stayed mixed
        wrapper = mix(dataset(), seed=0)
        with pytest.raises(
            AttributeError,
            match=rf"^{mix.__name__}\.{name} cannot be assigned: "
            rf"{name} is an argument of {mix.__name__}, checked into its config",
        ):
            setattr(wrapper, name, 0.0)
        assert not hasattr(wrapper, name)

    @pytest.mark.parametrize(
        ("mix", "keyword", "name"),
        [(mix, keyword, field.name) for mix in WRAPPERS
         for keyword, kind in mix.parameter_objects.items() for field in fields(kind)
         if field.name not in mix.fixed_settings],
    )  # fmt: skip
    def test_a_deprecated_flat_keyword_cannot_be_assigned(
        self, mix: type, keyword: str, name: str
    ) -> None:
        # before: mixup.min_area = 4.0 made an attribute nothing read
        wrapper = mix(dataset(), seed=0)
        kind = mix.parameter_objects[keyword].__name__  # type: ignore[attr-defined]
        with pytest.raises(
            AttributeError,
            match=rf"^{mix.__name__}\.{name} cannot be assigned: {name}= is a deprecated "
            rf"spelling of {keyword}=rankaug\.{kind}\({name}=\.\.\.\)",
        ):
            setattr(wrapper, name, 0)
        assert not hasattr(wrapper, name)
        made = mix.parameter_objects[keyword]  # type: ignore[attr-defined]
        default = next(f.default for f in fields(made) if f.name == name)
        with pytest.warns(DeprecationWarning, match=rf"use {keyword}=rankaug\.{kind}\("):
            mix(dataset(), seed=0, **{name: default})  # the list is the constructor's

    def test_a_subclass_keeps_an_attribute_named_like_a_deprecated_keyword(self) -> None:
        # before: a subclass keeping its own self.weights could not be made
        class Weighted(MixUpDataset[Any]):
            def __init__(self, data: Any, bias: float) -> None:
                super().__init__(data, seed=0)
                self.weights = [bias, 1 - bias]  # not its argument: no deprecated keyword

        assert Weighted(dataset(), 0.25).weights == [0.25, 0.75]

    @pytest.mark.parametrize(
        ("mix", "name"),
        [(MixUpDataset, "alpha"), (MixUpDataset, "config"), (MixUpDataset, "partners"),
         (CutMixDataset, "alpha"), (CutMixDataset, "min_area"), (CutMixDataset, "seed"),
         (CopyPasteDataset, "fraction"), (CopyPasteDataset, "source"),
         (CopyPasteDataset, "max_overlap"), (CopyPasteDataset, "min_visibility")],
    )  # fmt: skip
    def test_a_setting_fixed_when_made_cannot_be_assigned(self, mix: type, name: str) -> None:
        # before: assigned, it was silently not used (config, partners, seed), or used
        # in part: CutMix's min_area filtered mixed samples' boxes and not the others',
        # and every record's settings kept the old value (alpha, CopyPaste's settings)
        wrapper = mix(dataset(), seed=0)
        before = getattr(wrapper, name)
        with pytest.raises(AttributeError, match=rf"^{mix.__name__}\.{name} cannot be assigned"):
            setattr(wrapper, name, before)
        assert getattr(wrapper, name) is before

    @pytest.mark.parametrize("tensors", [False, True])
    @pytest.mark.parametrize("mix", [MixUpDataset, CutMixDataset])
    def test_instance_masks_as_a_list_come_back_a_list_of_the_same(
        self, mix: type[PairDataset[Any]], tensors: bool
    ) -> None:
        arrays = [flat_sample(i, (12, 16), 40 * i, boxes=[(1, 1, 9, 7), (6, 4, 15, 11)])
                  for i in range(3)]  # fmt: skip
        listed = [{**s, "masks": [torch.from_numpy(m) if tensors else m for m in s["masks"]]}
                  for s in arrays]  # fmt: skip
        kind, dtype = (torch.Tensor, torch.uint8) if tensors else (np.ndarray, np.uint8)
        for seed in range(4):
            want = mix(arrays, seed=seed)[0]["masks"]  # type: ignore[call-arg]
            got = mix(listed, seed=seed)[0]["masks"]  # type: ignore[call-arg]
            assert type(got) is list
            assert [(type(m), m.dtype) for m in got] == [(kind, dtype)] * len(want)
            for mask, expected in zip(got, want, strict=True):
                np.testing.assert_array_equal(np.asarray(mask), expected)

    @pytest.mark.parametrize("kind", [MixUpDataset, CutMixDataset, CopyPasteDataset])
    def test_non_finite_keypoints_are_refused_not_dropped(self, kind: type) -> None:
        points = np.array([[np.nan, 5.0], [16.0, 16.0]], np.float32)
        data = [{"image": np.zeros((32, 32, 3), np.uint8), "bboxes": np.zeros((0, 4)),
                 "labels": np.zeros(0, np.int64), "keypoints": points}] * 2  # fmt: skip
        with pytest.raises(
            SampleError, match=r"dataset\[\d\] keypoints\[0\] = \[nan, 5.0\] contains"
        ):
            kind(data, seed=0, p=1.0)[0]

    def test_the_plan_follows_the_specified_order(self) -> None:
        average = Average(dataset(), seed=4, p=0.5, keying="sample")
        for index in range(8):
            rng = keyed(average, index).generator
            u = rng.random(3)
            others = int(u[1] * 7)
            partner = others + (others >= index)
            out = average[index]
            applied = bool(u[0] < 0.5)
            assert out["mix"]["applied"] == applied
            if applied:
                assert out["mix"]["indices"] == [index, partner]
                assert out["mix"]["u"] == u[2]
            else:
                assert out["mix"]["indices"] == [index]

    def test_replay_keeps_a_buffered_half_word(self) -> None:
        # the record's state once dropped the Generator's buffered 32-bit half: a stream
        # sample after one that left it replayed with other draws
        worded = Worded(dataset(), seed=2, p=1.0)
        outputs = [worded[i % 4] for i in range(12)]
        colons = [out["mix"]["state"].count(":") for out in outputs]
        assert 2 in colons  # some samples started with half a word buffered
        for out in outputs:
            again = worded.replay(out["mix"])
            assert again["mix"] == out["mix"]
            assert again["image"].tobytes() == out["image"].tobytes()

    @pytest.mark.parametrize("cls", WRAPPERS)
    def test_float_images_take_a_given_fill_and_refuse_the_default(self, cls: type[Any]) -> None:
        # the default fill=114 was painted into float images in [0, 1]
        def floats(sizes: list[tuple[int, int]]) -> list[dict[str, Any]]:
            return [instance_sample(i, hw, [(0, 0, 4, 4)]) | {"image": np.full((*hw, 3), 0.5,
                    np.float32)} for i, hw in enumerate(sizes)]  # fmt: skip

        letterboxed = cls(floats([(16, 16), (8, 16)]), seed=0, partner_fit="letterbox")
        with pytest.raises(SampleError) as caught:
            letterboxed[0]
        assert "fill must be given for float images" in str(caught.value.__cause__)
        # refused at the first sample, though its partner needs no letterbox
        pool = Partners(pool=[0, 1])
        same = cls(floats([(16, 16)] * 2 + [(8, 16)]), seed=0, partner_fit="letterbox",
                   partners=pool)  # fmt: skip
        with pytest.raises(SampleError, match="fill must be given for float images"):
            same[0]
        given = cls(floats([(16, 16), (8, 16)]), seed=0, partner_fit="letterbox", fill=0.25)
        out = given[0]
        assert out["image"].max() <= 0.5
        # no letterbox, no fill: the default is not in the way
        assert cls(floats([(16, 16)] * 2), seed=0)[0]["image"].max() <= 0.5

    @pytest.mark.parametrize("cls", WRAPPERS)
    def test_partner_labels_keep_the_main_dtype_or_are_refused(self, cls: type[Any]) -> None:
        # the partner's labels were cast to the main sample's int8 unchecked: 300 -> 44
        out = cls(labelled(5, 3, (np.int8, np.int64)), seed=0, p=1.0)[0]
        assert (out["labels"].dtype, out["labels"].tolist()) == (np.dtype(np.int8), [5, 3])
        wrapper = cls(labelled(5, 300, (np.int8, np.int64)), seed=0, p=1.0)
        with pytest.raises(SampleError, match=r"dataset\[1\] 'labels' holds 300 \(int64\), which "
                           r"the main sample dataset\[0\]'s int8 cannot hold exactly"):  # fmt: skip
            wrapper[0]

    @pytest.mark.parametrize("cls", WRAPPERS)
    def test_boxes_outside_the_image_are_clipped_mixed_or_not(self, cls: type[Any]) -> None:
        # only mixed outputs had them clipped; an unmixed one kept (-2, 1, 6, 14)
        data = dataset()
        data[0]["bboxes"][0] = (-2, 1, 6, 14)  # the image is 12x16
        # (a mixed CutMix or CopyPaste output may take the box from the mask instead)
        for p in (0.0, 1.0) if cls is MixUpDataset else (0.0,):
            out = cls(data, seed=0, p=p, keying="sample")[0]
            assert out["bboxes"].dtype == np.float32
            assert out["bboxes"][0].tolist() == [0.0, 1.0, 6.0, 12.0]

    @pytest.mark.parametrize("cls", WRAPPERS)
    def test_clip_false_refuses_boxes_outside_the_image_mixed_or_not(self, cls: type[Any]) -> None:
        data = dataset()
        data[0]["bboxes"][0] = (-2, 1, 6, 14)
        for p in (0.0, 1.0):
            wrapper = cls(data, seed=0, p=p, targets=Targets(clip=False))
            with pytest.raises(SampleError, match=r"dataset\[0\] bboxes.* clip=False"):
                wrapper[0]

    @pytest.mark.parametrize("cls", WRAPPERS)
    def test_string_labels_widen_to_the_longest(self, cls: type[Any]) -> None:
        # cut to the main sample's width before: 'elephant' -> 'cat'
        out = cls(labelled("cat", "elephant"), seed=0, p=1.0)[0]
        assert (out["labels"].dtype, out["labels"].tolist()) == ("<U8", ["cat", "elephant"])

    @pytest.mark.parametrize("cls", WRAPPERS)
    def test_empty_list_labels_of_the_main_take_the_partners_ints(self, cls: type[Any]) -> None:
        # np.asarray([]) is float64, and it decided: the partner's labels came back floats
        data = labelled(0, 7)
        data[0].update(bboxes=[], labels=[], masks=np.zeros((0, 12, 12), np.uint8))
        out = cls(data, seed=0, p=1.0)[0]
        assert out["labels"] == [7]
        assert type(out["labels"][0]) is int

    @pytest.mark.parametrize("cls", WRAPPERS)
    def test_a_main_sample_without_boxes_refuses_a_partner_with_boxes(self, cls: type[Any]) -> None:
        data = labelled(0, 7)
        main = data[0]
        data[0] = {"image": main["image"], "mask": main["mask"], "masks": main["masks"][:0]}
        with pytest.raises(SampleError, match=r"dataset\[1\] has 1 boxes, but the main image "
                           r"dataset\[0\] has no boxes: .*empty boxes"):  # fmt: skip
            cls(data, seed=0, p=1.0)[0]
        data[0].update(bboxes=np.zeros((0, 4)), labels=np.zeros(0, np.int64))
        assert cls(data, seed=0, p=1.0)[0]["labels"].tolist() == [7]

    @pytest.mark.parametrize("cls", WRAPPERS)
    def test_each_keying_draws_from_its_key(self, cls: type[Any]) -> None:
        def records(keying: str, rank: int = 0, order: list[int] | None = None) -> list[Any]:
            wrapper = cls(dataset(), seed=1, p=1.0, keying=keying, rank=rank)
            out = {i: wrapper[i][wrapper.config.record] for i in (order or list(range(8)))}
            return [(r["indices"], r["state"]) for _, r in sorted(out.items())]

        forward = records("sample")
        assert records("sample", order=list(range(7, -1, -1))) == forward  # order-free
        assert records("sample", rank=1) == forward  # the same index on every rank
        assert records("sample_rank", rank=1) != records("sample_rank", rank=0)
        stream = records("stream")
        assert records("stream") == stream  # reproducible
        assert records("stream", rank=1) != stream
        assert stream != forward

    @pytest.mark.parametrize("cls", WRAPPERS)
    def test_the_epoch_comes_from_the_index(self, cls: type[Any]) -> None:
        wrapper = cls(dataset(), seed=0, p=1.0, keying="sample")
        record = wrapper.config.record
        carried = wrapper[EpochIndex(3, 2)][record]
        assert carried["epoch"] == 2
        wrapper.set_epoch(2)
        assert wrapper[3][record] == carried
        assert wrapper[EpochIndex(3, 1)][record]["state"] != carried["state"]

    def test_partners_never_the_main_index_and_from_the_pool(self) -> None:
        mixup = MixUpDataset(dataset(), seed=0, keying="sample", partners=Partners(pool=[0, 1, 2]))
        seen = set()
        for index in range(8):
            main, partner = mixup[index]["mixup"]["indices"]
            assert partner != main
            assert partner in (0, 1, 2)
            seen.add(partner)
        assert seen == {0, 1, 2}
        weighted = MixUpDataset(
            dataset(), seed=0, partners=Partners(weights=[0, 0, 0, 0, 0, 0, 1, 1])
        )
        assert {weighted[i]["mixup"]["indices"][1] for i in range(8)} == {6, 7}

    @pytest.mark.parametrize("cls", WRAPPERS)
    @pytest.mark.parametrize(
        "partners",
        [
            Partners(pool=[0]),
            Partners(pool=[0, 1], weights=[1.0, 0.0]),
            Partners(weights=[1.0] + [0.0] * 7),
        ],
    )
    def test_a_sample_with_no_other_candidate_is_not_mixed(
        self, cls: type[Any], partners: Partners
    ) -> None:
        # issue 19: pool=[0] mixed index 0 with itself (labels [0, 0], indices [0, 0])
        data = dataset()
        for keying in ("stream", "sample"):
            wrapper = cls(data, seed=3, p=1.0, keying=keying, partners=partners)
            record = wrapper.config.record
            out = wrapper[0]
            assert out[record]["applied"] is False
            assert out[record]["indices"] == [0]
            assert out["labels"].tolist() == data[0]["labels"].tolist()
            np.testing.assert_array_equal(out["image"], data[0]["image"])
            np.testing.assert_array_equal(out["bboxes"], data[0]["bboxes"])
            again = wrapper.replay(out[record])
            assert again[record] == out[record]
            assert again["labels"].tolist() == out["labels"].tolist()
            np.testing.assert_array_equal(again["image"], out["image"])
            mixed = wrapper[1][record]  # the others still draw index 0
            assert mixed["applied"] is True
            assert mixed["indices"] == [1, 0]

    @pytest.mark.parametrize("cls", WRAPPERS)
    def test_a_single_sample_is_refused(self, cls: type[Any]) -> None:
        with pytest.raises(ValueError, match=r"dataset has 1 sample: .* needs a partner other"):
            cls(dataset(1), seed=0)

    def test_copy_paste_flips_a_single_sample(self) -> None:
        out = CopyPasteDataset(dataset(1), seed=0, p=1.0, source="flip")[0]
        assert out["copypaste"]["applied"] is True
        assert out["copypaste"]["indices"] == [0, 0]

    def test_a_failing_dataset_is_named(self) -> None:
        class Broken:
            def __len__(self) -> int:
                return 4

            def __getitem__(self, index: int) -> Any:
                if index == 2:
                    raise OSError("unreadable")
                return flat_sample(index, (4, 4), 1)

        mixup = MixUpDataset(Broken(), seed=0, keying="sample")
        with pytest.raises(SampleError, match=r"dataset\[2\] failed at index 2 .*OSError"):
            mixup[2]
        partners = [i for i in (0, 1, 3) if _partner(mixup, i) == 2]
        with pytest.raises(SampleError, match=rf"dataset\[2\] failed at index {partners[0]} "):
            mixup[partners[0]]

    def test_a_bad_partner_field_is_named(self) -> None:
        data = [flat_sample(i, (4, 4), 1) for i in range(3)]
        data[1]["labels"] = np.zeros(5, np.int64)
        cutmix = CutMixDataset(data, seed=0, keying="sample")
        main = next(i for i in (0, 2) if _partner(cutmix, i) == 1)
        with pytest.raises(SampleError, match=r"dataset\[1\] 'labels' has 5 entries for 1 boxes"):
            cutmix[main]

    @pytest.mark.parametrize("cls", WRAPPERS)
    def test_workers_give_what_the_main_process_gives(self, cls: type[Any]) -> None:
        wrapper = cls(dataset(), seed=0, p=1.0, keying="sample")
        loader = DataLoader(
            wrapper, batch_size=None, num_workers=2, collate_fn=lambda sample: sample,
            multiprocessing_context="fork",
        )  # fmt: skip
        record = wrapper.config.record
        assert [s[record] for s in loader] == [wrapper[i][record] for i in range(8)]

    def test_pickles_for_spawned_workers_with_a_schedule(self) -> None:
        mixup = MixUpDataset(dataset(), seed=0, p=half_from_epoch_one, keying="sample")
        again = pickle.loads(pickle.dumps(mixup))
        for epoch in (0, 1):
            records = [again[EpochIndex(i, epoch)]["mixup"] for i in range(8)]
            assert records == [mixup[EpochIndex(i, epoch)]["mixup"] for i in range(8)]
        assert {again[EpochIndex(i, 0)]["mixup"]["applied"] for i in range(8)} == {False}


def half_from_epoch_one(epoch: int) -> float:
    return 0.5 if epoch >= 1 else 0.0


def _partner(wrapper: Any, index: int) -> int:
    rng = keyed(wrapper, index).generator
    partner: int = wrapper.plan(index, rng, 0).indices[1]
    return partner
