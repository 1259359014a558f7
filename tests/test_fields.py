from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any
from unittest import mock

import numpy as np
import pytest
import torch

from rankaug import CutMixDataset, MixUpDataset, MosaicDataset, Targets
from rankaug._multi import fields as fields_module
from rankaug._multi.fields import UNTYPED, Source, join, join_kept, read_field


def at(*indices: int) -> list[Source]:
    """Samples of these dataset indices, as join names them."""
    return [SimpleNamespace(index=index) for index in indices]


class TestReadField:
    def test_empty_values_without_a_dtype_are_untyped(self) -> None:
        assert read_field([]) is UNTYPED
        assert read_field(()) is UNTYPED
        assert read_field(None) is UNTYPED

    def test_arrays_and_tensors_keep_their_dtype_even_empty(self) -> None:
        assert read_field(np.zeros(0, np.int8)).dtype == np.int8
        assert read_field(torch.zeros(0, dtype=torch.int32)).dtype == np.int32
        assert read_field([1, 2]).dtype == np.int64
        assert read_field(["cat"]).dtype == np.dtype("<U3")


class TestJoin:
    def test_the_main_dtype_when_every_value_fits(self) -> None:
        out = join("labels", [np.array([5], np.int8), np.array([7, -3], np.int64)], at(0, 1))
        assert (out.dtype, out.tolist()) == (np.dtype(np.int8), [5, 7, -3])
        out = join("labels", [np.array([1.5], np.float32), np.array([2], np.int64)], at(0, 1))
        assert (out.dtype, out.tolist()) == (np.dtype(np.float32), [1.5, 2.0])
        out = join("flag", [np.array([True]), np.array([0, 1], np.uint8)], at(0, 1))
        assert (out.dtype, out.tolist()) == (np.dtype(np.bool_), [True, False, True])
        out = join("w", [np.array([1.0], np.float32), np.array([0.1], np.float64)], at(0, 1))
        assert out.dtype == np.float32  # floats round, as boxes do
        assert out[1] == np.float32(0.1)

    @pytest.mark.parametrize(
        ("main", "partner", "shown"),
        [
            (np.array([5], np.int8), np.array([1, 300]), "300 (int64)"),
            (np.array([5], np.int8), np.array([200], np.uint8), "200 (uint8)"),  # wraps back
            (np.array([5], np.int64), np.array([1.5]), "1.5 (float64)"),
            (np.array([5], np.int64), np.array([np.nan]), "nan (float64)"),
            (np.array([True]), np.array([2]), "2 (int64)"),
            (np.array([1.0]), np.array([2**53 + 1]), f"{2**53 + 1} (int64)"),
            (np.array([1.0], np.float32), np.array([1e300]), "1e+300 (float64)"),
            (np.array([5]), np.array(["7"]), "'7' (<U1)"),
            (np.array(["cat"]), np.array([7]), "7 (int64)"),
            (np.array(["cat"]), np.array([b"dog"]), "b'dog' (|S3)"),
        ],
    )
    def test_a_value_that_does_not_fit_is_refused_naming_everything(
        self, main: np.ndarray, partner: np.ndarray, shown: str
    ) -> None:
        expected = re.escape(
            f"dataset[9] 'labels' holds {shown}, which the main sample dataset[4]'s "
            f"{main.dtype} cannot hold exactly: give every sample's 'labels' one dtype"
        )
        with pytest.raises(ValueError, match=expected):
            join("labels", [main, np.zeros(0, np.int64), partner], at(4, 2, 9))

    def test_strings_widen_to_the_longest_of_the_main_kind(self) -> None:
        out = join("names", [np.array(["cat"]), np.array(["elephant", "ox"])], at(0, 1))
        assert (out.dtype, out.tolist()) == (np.dtype("<U8"), ["cat", "elephant", "ox"])
        out = join("names", [np.array([b"cat"]), np.array([b"elephant"])], at(0, 1))
        assert (out.dtype, out.tolist()) == (np.dtype("S8"), [b"cat", b"elephant"])
        out = join("names", [np.array(["elephant"]), np.array(["ox"])], at(0, 1))
        assert out.dtype == np.dtype("<U8")

    def test_an_untyped_main_takes_the_dtype_of_the_samples_with_entries(self) -> None:
        out = join(
            "labels", [UNTYPED, np.array([3], np.int32), np.array([4], np.int8)], at(0, 1, 2)
        )
        assert (out.dtype, out.tolist()) == (np.dtype(np.int32), [3, 4])
        out = join("labels", [UNTYPED, np.zeros(0), np.array([4], np.int16)], at(0, 1, 2))
        assert out.dtype == np.int16  # an empty partner decides nothing either
        out = join("names", [UNTYPED, np.array(["cat"]), np.array(["elephant"])], at(0, 1, 2))
        assert out.dtype == np.dtype("<U8")
        assert join("labels", [UNTYPED, UNTYPED[:0]], at(0, 1)).dtype == np.int64
        with pytest.raises(ValueError, match=r"dataset\[2\] 'labels' holds 'x' \(<U1\), which "
                           r"int64 of the other samples \(dataset\[0\]'s is empty\)"):  # fmt: skip
            join("labels", [UNTYPED, np.array([3]), np.array(["x"])], at(0, 1, 2))

    def test_an_empty_array_keeps_its_dtype(self) -> None:
        out = join("labels", [np.zeros(0, np.int8), np.array([3])], at(0, 1))
        assert out.dtype == np.int8
        with pytest.raises(ValueError, match=r"dataset\[1\] 'labels' holds 300 \(int64\)"):
            join("labels", [np.zeros(0, np.int8), np.array([300])], at(0, 1))

    def test_untyped_partners_and_object_fields(self) -> None:
        out = join("labels", [np.array([1], np.int16), UNTYPED], at(0, 1))
        assert (out.dtype, out.tolist()) == (np.dtype(np.int16), [1])
        things: Any = np.empty(1, dtype=object)
        things[0] = {"id": 1}
        out = join("meta", [things, np.array([2])], at(0, 1))
        assert out.tolist() == [{"id": 1}, 2]

    @pytest.mark.parametrize(
        "empty", [UNTYPED, np.zeros(0, np.float32), np.zeros((0, 3), np.float32)]
    )
    def test_an_empty_value_takes_the_rows_of_the_others(self, empty: np.ndarray) -> None:
        # [] beside (N, 1) classes failed in np.concatenate ("same number of dimensions")
        cls = np.array([[1.0], [2.0]], np.float32)
        out = join("cls", [empty, cls], at(0, 1))
        assert (out.shape, out.dtype) == ((2, 1), np.dtype(np.float32))
        out = join("cls", [cls, empty], at(0, 1))
        assert (out.shape, out.dtype) == ((2, 1), np.dtype(np.float32))
        out = join("cls", [cls[:0], empty], at(0, 1))  # nothing left of either
        assert (out.shape, out.dtype) == ((0, 1), np.dtype(np.float32))

    def test_rows_of_two_shapes_are_refused_naming_both(self) -> None:
        with pytest.raises(ValueError, match=re.escape(
            "dataset[5] 'attrs' has rows of shape (3,), the main sample dataset[2]'s (2,): "
            "give every sample's 'attrs' one shape"
        )):  # fmt: skip
            join("attrs", [np.zeros((1, 2)), np.zeros((1, 3))], at(2, 5))
        with pytest.raises(ValueError, match=re.escape(
            "dataset[5] 'attrs' has rows of shape (3,), dataset[4]'s (2,)"
        )):  # fmt: skip
            join("attrs", [UNTYPED, np.zeros((1, 2)), np.zeros((1, 3))], at(2, 4, 5))


class TestJoinKept:
    @pytest.mark.parametrize(
        "values",
        [
            [np.array([5, 7], np.int64), np.array([-3], np.int64), np.array([9, 2], np.int64)],
            [np.array([5, 7], np.int8), np.zeros(0, np.int8), np.array([-3, 4, 6], np.int8)],
            [np.array([2**64 - 1, 3], np.uint64), np.array([1, 2**63, 0], np.uint64)],
            [np.array([True, False]), np.array([True, True, False])],
        ],
    )  # fmt: skip
    def test_one_integer_dtype_is_gathered_in_python_as_join_then_the_index_gives(
        self, values: list[np.ndarray]
    ) -> None:
        sources = at(*range(len(values)))
        expected = join("labels", values, sources)
        for keep in ([True, False, True, False, True], [False] * 5, [True] * 5):
            with mock.patch.object(fields_module, "join", side_effect=AssertionError):
                out = join_kept("labels", values, keep, sources)  # (no join: in Python)
            want = expected[np.array(keep)]
            assert (out.dtype, out.shape, out.tolist()) == (want.dtype, want.shape, want.tolist())

    @pytest.mark.parametrize(
        "values",
        [
            [np.array([5, 7], np.int8), np.array([1, 2, 3], np.int64)],  # dtypes that differ
            [np.array([5, 7], ">i8"), np.array([1, 2, 3], ">i8")],  # not native
            [np.array([[5], [7]]), np.array([[1], [2], [3]])],  # rows of a shape
            [np.array([1.5, 2.0]), np.array([0.25, 3.0, 1.0])],  # floats
            [np.array(["cat", "dog"]), np.array(["elephant", "ox", "emu"])],  # strings
            [UNTYPED, np.array([1, 2, 3, 4, 5], np.int32)],  # an untyped main
        ],
    )  # fmt: skip
    def test_any_other_field_is_joined_then_indexed(self, values: list[np.ndarray]) -> None:
        keep = [True, False, True, False, True]
        sources = at(*range(len(values)))
        want = join("labels", values, sources)[np.array(keep)]
        out = join_kept("labels", values, keep, sources)
        assert (out.dtype, out.shape, out.tolist()) == (want.dtype, want.shape, want.tolist())

    def test_a_value_that_does_not_fit_is_refused_as_join_refuses_it(self) -> None:
        with pytest.raises(ValueError, match=re.escape("dataset[1] 'labels' holds 300 (int64)")):
            join_kept("labels", [np.array([5], np.int8), np.array([300])], [True, False], at(0, 1))


def _classes_sample(index: int) -> dict[str, Any]:
    """Even indices are backgrounds: ``"cls": []`` beside the others' ``[[c], ...]``."""
    count = 0 if index % 2 == 0 else 2
    boxes = np.array([[4.0, 4.0, 20.0, 20.0], [10.0, 12.0, 30.0, 30.0]])[:count]
    return {"image": np.full((32, 32, 3), index, np.uint8), "bboxes": boxes,
            "cls": [[float(index)]] * count}  # fmt: skip


@pytest.mark.parametrize("kind", ["mosaic", "mixup", "cutmix"])
def test_a_background_s_empty_classes_join_the_others_rows(kind: str) -> None:
    samples = [_classes_sample(i) for i in range(6)]
    targets = Targets(label_fields=("cls",))
    wrapper: Any = {
        "mosaic": lambda: MosaicDataset(samples, seed=0, output_size=32, targets=targets),
        "mixup": lambda: MixUpDataset(samples, seed=0, targets=targets),
        "cutmix": lambda: CutMixDataset(samples, seed=0, targets=targets),
    }[kind]()
    outs = [wrapper[i] for i in range(6)]
    assert any(len(out["cls"]) for out in outs[0::2])  # backgrounds that took boxes in
    for out in outs:
        assert type(out["cls"]) is list
        assert len(out["cls"]) == len(out["bboxes"])
        assert all(type(row) is list and len(row) == 1 for row in out["cls"])
