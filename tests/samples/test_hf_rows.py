"""``rankaug.samples.hf_rows`` against real ``datasets.Dataset`` and ``IterableDataset``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from torch.utils.data import ConcatDataset, Subset

from rankaug import MosaicDataset
from rankaug.samples.hf_arrays import declared_dtypes, in_declared_dtypes
from rankaug.samples.hf_rows import empty_values, typed, untyped_empty

datasets = pytest.importorskip("datasets", reason="the Hugging Face tests need `datasets`")


def rows() -> Any:
    """Two rows, the first without objects; boxes declared float64, names strings."""
    features = datasets.Features({
        "objects": datasets.Sequence({
            "bbox": datasets.Sequence(datasets.Value("float64"), length=4),
            "category": datasets.ClassLabel(names=["a", "b"]),
            "name": datasets.Value("string"),
            "outline": datasets.Sequence(datasets.Sequence(datasets.Value("float32"))),
        }),
        "bboxes": datasets.List(datasets.List(datasets.Value("int32"), length=4)),
        "image_id": datasets.Value("int64"),
    })  # fmt: skip
    empty = {"bbox": [], "category": [], "name": [], "outline": []}
    full = {"bbox": [[1.0, 2.0, 3.0, 4.0]], "category": [1], "name": ["b"], "outline": [[[1.0]]]}
    columns = {"objects": [empty, full], "bboxes": [[], [[1, 2, 3, 4]]], "image_id": [0, 1]}
    return datasets.Dataset.from_dict(columns, features=features)


def read(data: Any, index: int) -> Any:
    """Row ``index`` as the adapters read it: its numeric columns in their declared dtypes."""
    return in_declared_dtypes(data[index], declared_dtypes(data.features, "numpy", {}, None))


def described(values: dict[str, Any]) -> dict[str, tuple[str, str, tuple[int, ...]]]:
    return {k: (type(v).__name__, str(v.dtype), tuple(v.shape)) for k, v in values.items()}


class TestEmptyValues:
    def test_the_numpy_format_gives_the_other_rows_dtype(self) -> None:
        data = rows().with_format("numpy")
        assert data[0]["objects"]["bbox"].dtype == object  # what the fix is about
        found = described(empty_values(data))
        assert found == {
            "objects.bbox": ("ndarray", "float32", (0, 4)),  # declared float64: the format's
            "objects.category": ("ndarray", "int64", (0,)),
            "bboxes": ("ndarray", "int32", (0, 4)),
        }  # strings and ragged outlines have no typed empty value
        other = read(data, 1)
        assert found["objects.bbox"][1] == str(other["objects"]["bbox"].dtype)
        assert found["bboxes"][1] == str(other["bboxes"].dtype)

    def test_the_torch_format_and_format_options(self) -> None:
        found = described(empty_values(rows().with_format("torch")))
        assert found["objects.bbox"] == ("Tensor", "torch.float32", (0, 4))
        wide = empty_values(rows().with_format("numpy", dtype=np.float64))
        assert wide["objects.bbox"].dtype == rows().with_format("numpy", dtype=np.float64)[1][
            "objects"]["bbox"].dtype == np.float64  # fmt: skip

    def test_lists_of_any_length_give_a_flat_empty_value(self) -> None:
        # Dataset.from_dict infers List(List(Value("float64"))): boxes of no declared length
        columns = {"objects": [{"bbox": [], "category": []},
                               {"bbox": [[1.0, 2.0, 3.0, 4.0]], "category": [1]}]}  # fmt: skip
        data = datasets.Dataset.from_dict(columns).with_format("numpy")
        assert data[0]["objects"]["bbox"].dtype == object
        found = described(empty_values(data))
        assert found == {
            "objects.bbox": ("ndarray", "float32", (0,)),
            "objects.category": ("ndarray", "int64", (0,)),
        }
        assert found["objects.bbox"][1] == str(read(data, 1)["objects"]["bbox"].dtype)

    def test_flattened_columns_whose_names_hold_dots(self) -> None:
        flat = rows().flatten()  # columns "objects.bbox", "objects.category"...
        for data in (flat.with_format("numpy"), flat.with_format("numpy", columns=["bboxes",
                     "objects.bbox"], output_all_columns=True)):  # fmt: skip
            assert data[0]["objects.bbox"].dtype == object
            found = described(empty_values(data))
            assert found["objects.bbox"] == ("ndarray", "float32", (0, 4))
            assert found["bboxes"] == ("ndarray", "int32", (0, 4))
        assert sorted(empty_values(data)) == ["bboxes", "objects.bbox"]  # only those formatted

    @pytest.mark.parametrize("form", ["numpy", "torch"])
    def test_lists_of_arrays_per_object_masks(self, form: str) -> None:
        # it was: none, so a row without objects gave its List(Array2D(...)) masks back as
        # an object (0, H, W) array (numpy) and a mosaic refused its (0,) masks
        features = datasets.Features({
            "masks": datasets.List(datasets.Array2D(shape=(3, 5), dtype="uint8")),
            "depths": datasets.List(datasets.Array2D(shape=(None, 5), dtype="float32")),
        })  # fmt: skip
        columns = {"masks": [[], [np.ones((3, 5), np.uint8)]], "depths": [[], []]}
        data = datasets.Dataset.from_dict(columns, features=features).with_format(form)
        assert len(data[0]["masks"]) == 0
        kind = "ndarray" if form == "numpy" else "Tensor"
        dtype = "uint8" if form == "numpy" else "torch.uint8"
        assert described(empty_values(data)) == {"masks": (kind, dtype, (0, 3, 5))}  # no shape
        assert str(data[1]["masks"].dtype).endswith("int64")  # the format's, read back uint8

    def test_a_mosaic_of_a_row_without_objects_and_its_masks(self) -> None:
        features = datasets.Features({
            "image": datasets.Array3D(shape=(8, 8, 3), dtype="uint8"),
            "bboxes": datasets.List(datasets.List(datasets.Value("float32"), length=4)),
            "labels": datasets.List(datasets.Value("int64")),
            "masks": datasets.List(datasets.Array2D(shape=(8, 8), dtype="uint8")),
        })  # fmt: skip
        columns = {"image": [np.zeros((8, 8, 3), np.uint8)] * 2, "bboxes": [[]] * 2,
                   "labels": [[]] * 2, "masks": [[]] * 2}  # fmt: skip
        data = datasets.Dataset.from_dict(columns, features=features).with_format("numpy")
        out = MosaicDataset(data, seed=0, output_size=8)[0]
        assert (out["masks"].dtype, out["masks"].shape) == (np.uint8, (0, 8, 8))

    def test_only_the_formatted_columns(self) -> None:
        data = rows().with_format("numpy", columns=["bboxes"], output_all_columns=True)
        assert sorted(empty_values(data)) == ["bboxes"]

    def test_wrapped_and_iterable_datasets(self) -> None:
        numpy = rows().with_format("numpy")
        assert sorted(empty_values(Subset(numpy, [0, 1]))) == sorted(empty_values(numpy))
        iterable = rows().to_iterable_dataset().with_format("numpy")
        assert described(empty_values(iterable)) == described(empty_values(numpy))

    def test_datasets_side_by_side_that_agree(self) -> None:
        # a ConcatDataset of two splits: its box-less rows came back an object (0, 4) array
        numpy = rows().with_format("numpy")
        both = ConcatDataset([numpy, Subset(rows().with_format("numpy"), [0])])
        assert described(empty_values(both)) == described(empty_values(numpy))
        torch_format = rows().with_format("torch")
        assert empty_values(ConcatDataset([numpy, torch_format])) == {}  # they disagree
        unknown: Any = [{"bboxes": []}]  # a list of rows: no features known
        assert empty_values(ConcatDataset([numpy, unknown])) == {}

    def test_nothing_for_lists_and_other_datasets(self) -> None:
        assert empty_values(rows()) == {}  # Python lists: [] like the other rows' lists
        assert empty_values(rows().with_format("pandas")) == {}
        assert empty_values([{"bboxes": np.zeros((0, 4))}]) == {}
        assert empty_values(None) == {}


class TestUntypedEmpty:
    def test_empty_without_a_dtype(self) -> None:
        assert untyped_empty(np.array([], dtype=object))
        assert untyped_empty([])
        assert not untyped_empty(np.zeros((0, 4), np.float32))
        assert not untyped_empty(np.array([None], dtype=object))
        assert not untyped_empty([[1.0, 2.0, 3.0, 4.0]])
        assert not untyped_empty(())
        assert not untyped_empty(torch.zeros(0))


class TestTyped:
    def test_a_new_copy_of_the_model_for_an_untyped_empty_value(self) -> None:
        model = np.zeros((0, 4), np.float32)
        out = typed(np.array([], dtype=object), model)
        assert (out.dtype, out.shape) == (np.float32, (0, 4))
        assert out is not model
        tensor = torch.zeros(0, 4)
        made = typed([], tensor)
        assert (made.dtype, tuple(made.shape)) == (torch.float32, (0, 4))
        assert made is not tensor

    def test_other_values_as_they_are(self) -> None:
        boxes = np.ones((1, 4), np.float32)
        assert typed(boxes, np.zeros((0, 4), np.float64)) is boxes
        listed: list[Any] = []
        assert typed(listed, None) is listed
