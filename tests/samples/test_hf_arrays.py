"""``rankaug.samples.hf_arrays`` against real ``datasets.Dataset`` and ``IterableDataset``."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
import torch
from torch.utils.data import ConcatDataset, Subset

from rankaug import MosaicDataset
from rankaug.samples import DefaultAdapter
from rankaug.samples.hf_arrays import declared_dtypes, in_declared_dtypes

datasets = pytest.importorskip("datasets", reason="the Hugging Face tests need `datasets`")


def arrays() -> Any:
    """Two rows: a uint8 image, a uint8 mask, an int16 and a float16 plane, a struct's mask."""
    features = datasets.Features({
        "image": datasets.Array3D(shape=(4, 5, 3), dtype="uint8"),
        "mask": datasets.Array2D(shape=(4, 5), dtype="uint8"),
        "depth": datasets.Array2D(shape=(4, 5), dtype="int16"),
        "half": datasets.Array2D(shape=(4, 5), dtype="float16"),
        "extra": {"mask": datasets.Array2D(shape=(4, 5), dtype="uint16")},
        "image_id": datasets.Value("int32"),
    })  # fmt: skip
    columns = {
        "image": [np.full((4, 5, 3), 250, np.uint8), np.zeros((4, 5, 3), np.uint8)],
        "mask": [np.full((4, 5), 7, np.uint8)] * 2,
        "depth": [np.full((4, 5), -300, np.int16)] * 2,
        "half": [np.full((4, 5), 0.1, np.float16)] * 2,
        "extra": [{"mask": np.full((4, 5), 60000, np.uint16)}] * 2,
        "image_id": [0, 1],
    }
    return datasets.Dataset.from_dict(columns, features=features)


def dtypes(dataset: Any) -> dict[tuple[str, ...], str]:
    found = DefaultAdapter().for_dataset(dataset).declared_dtypes
    return {path: str(want.dtype) for path, want in found.items()}


DECLARED = {
    ("image",): "uint8",
    ("mask",): "uint8",
    ("depth",): "int16",
    ("half",): "float16",
    ("extra", "mask"): "uint16",
}


class TestDeclaredDtypes:
    @pytest.mark.parametrize("form", ["numpy", "torch"])
    def test_map_style_and_streamed_datasets_give_int64(self, form: str) -> None:
        for data in (arrays().with_format(form), arrays().to_iterable_dataset().with_format(form)):
            row = next(iter(data))
            assert str(row["image"].dtype).endswith("int64")  # what the fix is about
            assert str(row["mask"].dtype).endswith("int64")
            assert str(row["half"].dtype).endswith("float32")
            # the torch format gives the scalar Value("int32") as int64 too; numpy as declared
            scalar: dict[tuple[str, ...], str] = {("image_id",): "int32"} if form == "torch" else {}
            assert dtypes(data) == {**DECLARED, **scalar}

    @pytest.mark.parametrize("form", ["numpy", "torch"])
    def test_a_column_in_the_dtype_its_format_gives_is_not_recorded(self, form: str) -> None:
        # it was: every row checked for nothing, and DefaultAdapter's fast path turned off
        features = datasets.Features({
            "image": datasets.Array3D(shape=(4, 5, 3), dtype="int64"),
            "depth": datasets.Array2D(shape=(4, 5), dtype="float32"),
            "valid": datasets.Array2D(shape=(4, 5), dtype="bool"),
            "masks": datasets.List(datasets.Array2D(shape=(4, 5), dtype="int64")),
        })  # fmt: skip
        columns = {
            "image": [np.full((4, 5, 3), 3, np.int64)],
            "depth": [np.full((4, 5), 0.5, np.float32)],
            "valid": [np.ones((4, 5), bool)],
            "masks": [[np.ones((4, 5), np.int64)]],
        }
        data = datasets.Dataset.from_dict(columns, features=features).with_format(form)
        for rows in (data, data.to_iterable_dataset()):
            row = next(iter(rows))  # datasets' own behaviour, which the rule reads
            assert [str(row[k].dtype).split(".")[-1] for k in columns] == [
                "int64", "float32", "bool", "int64"
            ]  # fmt: skip
            assert DefaultAdapter().for_dataset(rows).declared_dtypes == {}

    @pytest.mark.parametrize("form", ["numpy", "torch"])
    def test_a_column_in_another_dtype_is_still_recorded(self, form: str) -> None:
        features = datasets.Features({
            "image": datasets.Array3D(shape=(4, 5, 3), dtype="uint8"),
            "depth": datasets.Array2D(shape=(4, 5), dtype="float16"),
            "ids": datasets.Array2D(shape=(4, 5), dtype="int64"),
        })  # fmt: skip
        columns = {
            "image": [np.full((4, 5, 3), 250, np.uint8)],
            "depth": [np.full((4, 5), 0.5, np.float16)],
            "ids": [np.full((4, 5), 2, np.int64)],
        }
        data = datasets.Dataset.from_dict(columns, features=features).with_format(form)
        assert dtypes(data) == {("image",): "uint8", ("depth",): "float16"}
        out = in_declared_dtypes(data[0], declared_dtypes(data.features, form, {}, None))
        assert [str(out[k].dtype).split(".")[-1] for k in columns] == [
            "uint8", "float16", "int64"
        ]  # fmt: skip

    @pytest.mark.parametrize("form", ["numpy", "torch"])
    def test_float64_columns_stay_in_the_format_s_float32(self, form: str) -> None:
        # it was: read back as float64, holding the float32-rounded values the format gave
        # (0.1 as 0.10000000149011612), boxes Dataset.from_dict infers float64 too
        features = datasets.Features({
            "depth": datasets.Array2D(shape=(2, 2), dtype="float64"),
            "bboxes": datasets.List(datasets.List(datasets.Value("float64"))),
            "scale": datasets.Value("float64"),
        })  # fmt: skip
        columns = {"depth": [np.full((2, 2), 0.1)], "bboxes": [[[0.1, 0.2, 3.3, 4.4]]],
                   "scale": [0.1]}  # fmt: skip
        data = datasets.Dataset.from_dict(columns, features=features).with_format(form)
        assert dtypes(data) == {}
        row = data[0]
        assert in_declared_dtypes(row, declared_dtypes(data.features, form, {}, None)) is row
        assert str(row["bboxes"].dtype).removeprefix("torch.") == "float32"
        assert float(row["bboxes"][0, 0]) == float(np.float32(0.1))  # rounded by datasets

    def test_datasets_side_by_side_that_agree(self) -> None:
        # a ConcatDataset of two splits: its uint8 image came as the format's int64
        numpy = arrays().with_format("numpy")
        both = ConcatDataset([numpy, Subset(arrays().with_format("numpy"), [0])])
        assert dtypes(both) == DECLARED
        adapter = DefaultAdapter().for_dataset(both)
        data, _ = adapter.unpack(both[2], {"image"})
        assert data["image"].dtype == np.uint8
        assert dtypes(ConcatDataset([numpy, arrays().with_format("torch")])) == {}  # differ
        unknown: Any = [{"image": np.zeros((4, 5, 3), np.int64)}]  # no features known
        assert dtypes(ConcatDataset([numpy, unknown])) == {}

    def test_the_fast_path_is_kept(self, monkeypatch: pytest.MonkeyPatch) -> None:
        features = datasets.Features({"image": datasets.Array3D((4, 5, 3), "float32")})
        data = datasets.Dataset.from_dict(
            {"image": [np.full((4, 5, 3), 0.25, np.float32)]}, features=features
        ).with_format("numpy")
        adapter = DefaultAdapter().for_dataset(data)
        out = adapter._call_plain(data[0], {"image"}, lambda **kw: {"image": kw["image"] * 2})
        assert out is not None  # None: the fast path refused the sample
        assert out["image"].dtype == np.float32
        assert (out["image"] == 0.5).all()

    def test_format_options_that_set_a_dtype_are_kept(self) -> None:
        assert dtypes(arrays().with_format("numpy", dtype=np.int32)) == {}

    def test_only_the_formatted_columns(self) -> None:
        data = arrays().with_format("numpy", columns=["mask"], output_all_columns=True)
        assert dtypes(data) == {("mask",): "uint8"}

    def test_nothing_for_lists_and_other_formats(self) -> None:
        assert dtypes(arrays()) == {}  # Python lists
        assert dtypes(arrays().with_format("pandas")) == {}
        assert declared_dtypes(arrays().features, "numpy", {"dtype": "float32"}, None) == {}

    @pytest.mark.parametrize("form", ["numpy", "torch"])
    def test_an_array_of_strings_or_times_is_given_as_it_comes(self, form: str) -> None:
        features = datasets.Features({
            "image": datasets.Array3D(shape=(4, 5, 3), dtype="uint8"),
            "names": datasets.Array2D(shape=(1, 2), dtype="string"),
            "times": datasets.Array2D(shape=(1, 2), dtype="timestamp[s]"),
        })  # fmt: skip
        columns = {
            "image": [np.zeros((4, 5, 3), np.uint8)],
            "names": [[["cat", "dog"]]],
            "times": [np.zeros((1, 2), "datetime64[s]")],
        }
        data = datasets.Dataset.from_dict(columns, features=features).with_format(form)
        assert dtypes(data) == {("image",): "uint8"}  # numpy has no "string" dtype

    def test_the_torch_dtype(self) -> None:
        found = declared_dtypes(arrays().features, "torch", {}, None)
        assert found[("image",)].tensor == torch.uint8
        assert found[("half",)].tensor == torch.float16
        assert declared_dtypes(arrays().features, "numpy", {}, None)[("image",)].tensor is None


def lists() -> Any:
    """One row of numbers as lists: a nested-list uint8 image, int32 labels, scalars..."""
    features = datasets.Features({
        "image": datasets.List(datasets.List(datasets.List(datasets.Value("uint8")))),
        "labels": datasets.List(datasets.Value("int32")),
        "flags": datasets.Sequence(datasets.Value("int16")),
        "box": datasets.List(datasets.Value("uint16"), length=4),
        "outline": datasets.List(datasets.List(datasets.Value("int16"))),  # ragged rows
        "objects": {"category": datasets.List(datasets.Value("int8"))},
        "image_id": datasets.Value("int32"),
        "scale": datasets.Value("float64"),
        "ids": datasets.List(datasets.Value("int64")),  # as the formats give: not recorded
        "weights": datasets.List(datasets.Value("float32")),
        "name": datasets.Value("string"),
        "names": datasets.List(datasets.Value("string")),
        "kind": datasets.ClassLabel(names=["a", "b"]),
    })  # fmt: skip
    columns = {
        "image": [np.full((4, 5, 3), 250, np.uint8).tolist()],
        "labels": [[3, -70000]],
        "flags": [[-300, 2]],
        "box": [[1, 2, 60000, 4]],
        "outline": [[[1, 2, 3], [-4]]],
        "objects": [{"category": [-5, 6]}],
        "image_id": [7],
        "scale": [0.1],
        "ids": [[1]],
        "weights": [[0.5]],
        "name": ["x"],
        "names": [["y"]],
        "kind": [1],
    }
    return datasets.Dataset.from_dict(columns, features=features)


LISTED = {
    ("image",): "uint8",
    ("labels",): "int32",
    ("flags",): "int16",
    ("box",): "uint16",
    ("outline",): "int16",
    ("objects", "category"): "int8",
}


class TestListsAndValues:
    @pytest.mark.parametrize("form", ["numpy", "torch"])
    def test_lists_of_numbers_and_torch_scalars_are_recorded(self, form: str) -> None:
        # it was: none, so List(Value("uint8")) images came as int64 (and were refused by
        # MosaicDataset), int32 labels as int64, and torch scalars as int64 and float32
        data = lists().with_format(form)
        for rows in (data, data.to_iterable_dataset()):
            row = next(iter(rows))
            assert str(row["image"].dtype).endswith("int64")  # datasets' own behaviour
            assert str(row["labels"].dtype).endswith("int64")
            torch_only: dict[tuple[str, ...], str] = {("image_id",): "int32"}  # float64: kept
            scalars: dict[tuple[str, ...], str] = torch_only if form == "torch" else {}
            assert dtypes(rows) == {**LISTED, **scalars}

    @pytest.mark.parametrize("form", ["numpy", "torch"])
    def test_values_come_back_in_their_declared_dtype_and_container(self, form: str) -> None:
        data = lists().with_format(form)
        row = data[0]
        out = in_declared_dtypes(row, declared_dtypes(data.features, form, {}, None))
        kind = np.ndarray if form == "numpy" else torch.Tensor
        stacked = {path: dtype for path, dtype in LISTED.items() if path != ("outline",)}
        for (key, *inner), dtype in stacked.items():
            value = out[key][inner[0]] if inner else out[key]
            assert type(value) is kind
            assert str(value.dtype).removeprefix("torch.") == dtype
        outline = out["outline"]  # ragged: numpy's object array of rows, torch's list of them
        assert type(outline) is type(row["outline"])
        assert [str(part.dtype).removeprefix("torch.") for part in outline] == ["int16"] * 2
        assert [np.asarray(part).tolist() for part in outline] == [[1, 2, 3], [-4]]
        assert np.asarray(out["image"]).tolist() == [[[250] * 3] * 5] * 4
        assert np.asarray(out["labels"]).tolist() == [3, -70000]
        assert np.asarray(out["box"]).tolist() == [1, 2, 60000, 4]
        assert str(out["image_id"].dtype).removeprefix("torch.") == "int32"
        assert out["scale"] is row["scale"]  # float64: the format's (torch: float32)
        assert out["ids"] is row["ids"]  # recorded nowhere: the row's own
        assert out["names"] is row["names"]

    def test_a_value_the_dtype_cannot_hold_is_refused(self) -> None:
        declared = declared_dtypes(lists().features, "numpy", {}, None)
        said = "column 'labels' is declared List(Value('int32')), which its format gives as int64"
        with pytest.raises(ValueError, match=re.escape(said)):
            in_declared_dtypes({"labels": np.array([2**40])}, declared)

    def test_a_0d_object_array_is_left_as_it_is(self) -> None:
        # no rows to go through (iterating it raised TypeError: iteration over a 0-d array)
        declared = declared_dtypes(lists().features, "numpy", {}, None)
        sample = {"labels": np.array(None, dtype=object)}
        assert in_declared_dtypes(sample, declared) is sample

    def test_a_mosaic_takes_a_nested_list_uint8_image(self) -> None:
        data = lists().select_columns(["image"]).with_format("numpy")
        out = MosaicDataset(data, output_size=(8, 10), seed=0)[0]
        assert out["image"].dtype == np.uint8
        assert set(np.unique(out["image"]).tolist()) <= {114, 250}  # fill and the image


class TestInDeclaredDtypes:
    @pytest.mark.parametrize("form", ["numpy", "torch"])
    def test_values_come_back_in_their_declared_dtype_and_container(self, form: str) -> None:
        data = arrays().with_format(form)
        declared = declared_dtypes(data.features, form, {}, None)
        row = data[0]
        before = {key: row[key] for key in row}
        out = in_declared_dtypes(row, declared)
        kind = np.ndarray if form == "numpy" else torch.Tensor
        for path, dtype in DECLARED.items():
            value = out[path[0]] if len(path) == 1 else out[path[0]][path[1]]
            assert type(value) is kind
            assert str(value.dtype).removeprefix("torch.") == dtype
        assert np.asarray(out["image"]).tolist() == [[[250] * 3] * 5] * 4
        assert np.asarray(out["depth"]).tolist() == [[-300] * 5] * 4
        assert np.asarray(out["extra"]["mask"]).tolist() == [[60000] * 5] * 4
        assert str(out["image_id"].dtype).removeprefix("torch.") == "int32"
        assert all(row[key] is before[key] for key in before)  # the row itself untouched
        assert str(row["image"].dtype).endswith("int64")

    @pytest.mark.parametrize("form", ["numpy", "torch"])
    def test_a_list_of_arrays_comes_back_in_their_declared_dtype(self, form: str) -> None:
        # per-object masks, declared List(Array2D(..., dtype="uint8")): given int64 too
        features = datasets.Features({
            "image": datasets.Array3D(shape=(4, 5, 3), dtype="uint8"),
            "masks": datasets.List(datasets.Array2D(shape=(4, 5), dtype="uint8")),
        })  # fmt: skip
        columns = {
            "image": [np.zeros((4, 5, 3), np.uint8)] * 2,
            "masks": [[np.full((4, 5), 200, np.uint8)] * 2, []],
        }
        data = datasets.Dataset.from_dict(columns, features=features).with_format(form)
        declared = declared_dtypes(data.features, form, {}, None)
        assert str(declared[("masks",)].dtype) == "uint8"
        out = in_declared_dtypes(data[0], declared)
        assert str(out["masks"].dtype).removeprefix("torch.") == "uint8"
        assert np.asarray(out["masks"]).tolist() == [[[200] * 5] * 4] * 2
        assert len(in_declared_dtypes(data[1], declared)["masks"]) == 0  # a row without any

    def test_a_sample_in_its_dtypes_is_itself(self) -> None:
        declared = declared_dtypes(arrays().features, "numpy", {}, None)
        sample = {"image": np.zeros((4, 5, 3), np.uint8), "label": 3}
        assert in_declared_dtypes(sample, declared) is sample
        pair = (np.zeros((4, 5, 3), np.int64), {})
        assert in_declared_dtypes(pair, declared) is pair

    @pytest.mark.parametrize(
        ("value", "shown"),
        [
            (np.full((4, 5, 3), 256, np.int64), "from 256 to 256"),
            (np.full((4, 5, 3), -1, np.int64), "from -1 to -1"),
            (torch.full((4, 5, 3), 300, dtype=torch.int64), "from 300 to 300"),
        ],
    )
    def test_a_value_the_dtype_cannot_hold_is_refused(self, value: Any, shown: str) -> None:
        form = "numpy" if isinstance(value, np.ndarray) else "torch"
        declared = declared_dtypes(arrays().features, form, {}, None)
        expected = (
            "the Hugging Face column 'image' is declared Array3D(shape=(4, 5, 3), "
            f"dtype='uint8'), which its format gives as int64, and rankaug reads it back as "
            f"uint8; but this row holds values {shown}"
        )
        with pytest.raises(ValueError, match=re.escape(expected)):
            in_declared_dtypes({"image": value}, declared)

    def test_a_float_the_declared_float_cannot_hold_is_refused(self) -> None:
        declared = declared_dtypes(arrays().features, "numpy", {}, None)
        held = in_declared_dtypes({"half": np.full((4, 5), 0.5, np.float32)}, declared)
        assert held["half"].dtype == np.float16
        nan = in_declared_dtypes({"half": np.full((4, 5), np.nan, np.float32)}, declared)
        assert np.isnan(nan["half"]).all()
        with pytest.raises(ValueError, match=re.escape("column 'half' is declared Array2D")):
            in_declared_dtypes({"half": np.full((4, 5), 0.1, np.float32)}, declared)
        with pytest.raises(ValueError, match=re.escape("from 70000.0 to 70000.0")):
            in_declared_dtypes({"half": np.full((4, 5), 7e4, np.float32)}, declared)
