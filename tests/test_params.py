"""The parameter objects the wrappers share, and the deprecated flat keywords they replace."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np
import pytest
from torch.utils.data import ConcatDataset, Subset

from rankaug import (
    CachedDataset,
    CopyPasteDataset,
    CutMixDataset,
    MixUpDataset,
    MosaicDataset,
    MosaicGrid,
    Partners,
    Targets,
)
from rankaug.datasets import SyntheticDetection
from rankaug.params import refuse_leftovers, refuse_unused, take


def same_outputs(a: Any, b: Any, count: int = 4) -> None:
    for index in range(count):
        x, y = a[index], b[index]
        assert x.keys() == y.keys()
        for key in x:
            if isinstance(x[key], np.ndarray):
                np.testing.assert_array_equal(x[key], y[key])
                assert x[key].dtype == y[key].dtype
            else:
                assert x[key] == y[key], key


class TestTargets:
    def test_fields_are_checked_and_normalised(self) -> None:
        targets = Targets(box_format="coco", label_fields=["labels", "ids"], min_area=2)
        assert targets.label_fields == ("labels", "ids")
        assert targets.min_area == 2.0
        assert type(targets.min_area) is float
        assert targets.filters
        assert not Targets().filters
        assert {"bboxes", "labels", "ids"} <= targets.keys

    @pytest.mark.parametrize(
        ("kwargs", "error", "message"),
        [
            ({"box_format": "xyxy"}, ValueError, "box_format must be one of"),
            ({"label_fields": "labels"}, TypeError, "label_fields must be a sequence"),
            ({"keypoint_fields": ("labels",)}, ValueError, "every entry of keypoint_fields"),
            ({"min_visibility": 1.5}, ValueError, "min_visibility must be a finite number"),
            ({"min_width": True}, TypeError, "min_width must be a finite number"),
            ({"clip": "yes"}, TypeError, "clip must be True or False"),
        ],
    )
    def test_bad_fields_are_named(
        self, kwargs: dict[str, Any], error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error, match=message):
            Targets(**kwargs)

    def test_frozen(self) -> None:
        with pytest.raises(dataclasses.FrozenInstanceError):
            Targets().clip = False  # type: ignore[misc]

    def test_the_format_is_given_else_the_adapters_else_pascal_voc(self) -> None:
        class Coco:
            box_format = "coco"

        assert Targets().resolve(None).box_format == "pascal_voc"
        assert Targets().resolve(Coco()).box_format == "coco"
        assert Targets(box_format="yolo").resolve(Coco()).box_format == "yolo"

    def test_without_one_the_format_is_the_datasets(self) -> None:
        coco = SyntheticDetection(2, box_format="coco")
        assert Targets().resolve(None, coco).box_format == "coco"
        assert Targets(box_format="coco").resolve(None, coco).box_format == "coco"

        class Undeclared:  # an attribute that names no format is not a declaration
            box_format = "xyxy"

        assert Targets().resolve(None, Undeclared()).box_format == "pascal_voc"

    def test_a_format_the_dataset_does_not_give_is_refused(self) -> None:
        class Coco:
            box_format = "coco"

        voc = SyntheticDetection(2)
        with pytest.raises(ValueError, match=(
            r"^targets.box_format='yolo', but the dataset \(SyntheticDetection\) gives "
            r"'pascal_voc' boxes .*Targets\(box_format='pascal_voc', \.\.\.\)"
        )):  # fmt: skip
            Targets(box_format="yolo").resolve(None, voc)
        with pytest.raises(ValueError, match=r"^adapter=.* reads 'coco' boxes, but the dataset"):
            Targets().resolve(Coco(), voc)

    def test_the_format_is_read_through_the_datasets_that_hold_it(self, tmp_path: Any) -> None:
        # CachedDataset(YoloFolder(box_format="yolo")) and a Subset of it were read as VOC:
        # the mosaic dropped every box (cx, cy, w, h read as corners) with no error
        yolo = SyntheticDetection(4, image_size=32, box_format="yolo")
        for holder in (
            CachedDataset(yolo, tmp_path),
            Subset(yolo, [1, 2]),
            ConcatDataset([yolo, SyntheticDetection(2, box_format="yolo")]),
        ):
            assert Targets().resolve(None, holder).box_format == "yolo"
            with pytest.raises(ValueError, match=r"^targets.box_format='pascal_voc', but"):
                Targets(box_format="pascal_voc").resolve(None, holder)
        mosaic = MosaicDataset(Subset(yolo, [0, 1, 2, 3]), seed=0, output_size=32, p=0.0)
        np.testing.assert_allclose(mosaic[0]["bboxes"], yolo[0]["bboxes"], atol=1e-6)

    def test_datasets_side_by_side_in_other_formats_are_refused(self) -> None:
        mixed = ConcatDataset([SyntheticDetection(2, box_format="yolo"), SyntheticDetection(2)])
        with pytest.raises(ValueError, match=re.escape("give boxes in different formats")):
            Targets().resolve(None, mixed)

        class Converting:  # a dataset that declares its own format is taken at its word
            box_format = "coco"
            dataset = SyntheticDetection(2, box_format="yolo")

        assert Targets().resolve(None, Converting()).box_format == "coco"

    @pytest.mark.parametrize("wrapper", [MosaicDataset, MixUpDataset, CutMixDataset])
    def test_the_wrappers_read_the_datasets_format(self, wrapper: Any) -> None:
        # COCO (x, y, w, h) boxes, once read as (x_min, y_min, x_max, y_max) with no error
        coco = SyntheticDetection(8, image_size=48, box_format="coco")
        given = wrapper(coco, seed=3, targets=Targets(box_format="coco"))
        same_outputs(wrapper(coco, seed=3), given)
        assert given.config.box_format == "coco"
        with pytest.raises(ValueError, match=r"^targets.box_format='coco', but the dataset"):
            wrapper(SyntheticDetection(8, image_size=48), seed=3, targets=Targets("coco"))


class TestPartners:
    def test_a_list_becomes_a_tuple_and_replace_is_checked(self) -> None:
        assert Partners(pool=[3, 1], weights=[1.0, 2.0]).pool == (3, 1)
        with pytest.raises(TypeError, match="replace must be True or False"):
            Partners(replace=1)  # type: ignore[arg-type]

    def test_arrays_become_tuples_so_it_compares_hashes_and_stays_frozen(self) -> None:
        # an array pool once made Partners unhashable, uncomparable and shared with the caller
        pool = np.arange(3)
        made = Partners(pool=pool, weights=np.ones(3))
        assert made.pool == (0, 1, 2)
        assert made.weights == (1.0, 1.0, 1.0)
        assert all(type(entry) is int for entry in made.pool)
        assert made == Partners(pool=range(3), weights=[1, 1, 1])
        assert hash(made) == hash(Partners(pool=(0, 1, 2), weights=(1.0, 1.0, 1.0)))
        pool[0] = 99
        assert made.pool == (0, 1, 2)

    def test_pool_and_weights_types_are_checked(self) -> None:
        with pytest.raises(TypeError, match="every entry of pool must be an index"):
            Partners(pool=np.array([0.0, 1.0]))
        with pytest.raises(TypeError, match="pool must be a sequence of indices, got 'ab'"):
            Partners(pool="ab")
        with pytest.raises(TypeError, match="every entry of weights must be a real number"):
            Partners(weights=["1"])  # type: ignore[list-item]
        with pytest.raises(ValueError, match=r"weights must be .*one dimension"):
            Partners(weights=np.ones((2, 2)))

    def test_the_pool_is_checked_against_the_dataset(self) -> None:
        with pytest.raises(ValueError, match="pool"):
            MosaicDataset(SyntheticDetection(4, image_size=16), seed=0, partners=Partners(pool=[9]))


class TestMosaicGrid:
    def test_fields_are_checked(self) -> None:
        assert MosaicGrid(fill=(1, 2, 3)).fill == (1.0, 2.0, 3.0)
        assert MosaicGrid().fill is None  # YOLO's 114 for integer images (MosaicConfig)
        with pytest.raises(ValueError, match="canvas must be one of"):
            MosaicGrid(canvas="big")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=r"layout must be None or a rankaug\.MosaicGrid"):
            MosaicDataset(SyntheticDetection(4, image_size=16), seed=0, layout=(2, 2))  # type: ignore[arg-type]


class TestFlatKeywords:
    """The deprecated flat keywords build the same objects, so the same outputs."""

    def test_mosaic(self) -> None:
        data = SyntheticDetection(12, image_size=32, box_format="coco")
        with pytest.warns(DeprecationWarning, match="is deprecated; use ") as caught:
            flat = MosaicDataset(
                data, seed=1, output_size=48, keying="sample", box_format="coco", min_area=4.0,
                grid=(2, 3), fill=0, flip=0.5, pool=list(range(1, 12)), replace=False,
            )  # fmt: skip
        assert [str(w.message) for w in caught] == [
            "MosaicDataset(grid=..., fill=..., flip=...) is deprecated; "
            "use layout=rankaug.MosaicGrid(grid=..., fill=..., flip=...)",
            "MosaicDataset(box_format=..., min_area=...) is deprecated; "
            "use targets=rankaug.Targets(box_format=..., min_area=...)",
            "MosaicDataset(pool=..., replace=...) is deprecated; "
            "use partners=rankaug.Partners(pool=..., replace=...)",
        ]
        assert {w.filename for w in caught} == {__file__}  # the caller's line, not rankaug's
        objects = MosaicDataset(
            data, seed=1, output_size=48, keying="sample",
            targets=Targets(box_format="coco", min_area=4.0),
            layout=MosaicGrid(grid=(2, 3), fill=0, flip=0.5),
            partners=Partners(pool=list(range(1, 12)), replace=False),
        )  # fmt: skip
        assert flat.config == objects.config
        same_outputs(flat, objects)

    @pytest.mark.parametrize("wrapper", [MixUpDataset, CutMixDataset])
    def test_mix(self, wrapper: Any) -> None:
        data = SyntheticDetection(8, image_size=32)
        with pytest.warns(DeprecationWarning, match="is deprecated; use ") as caught:
            flat = wrapper(data, seed=2, keying="sample", pool=[1, 2, 3], label_fields=("labels",))
        name = wrapper.__name__
        assert [str(w.message) for w in caught] == [
            f"{name}(label_fields=...) is deprecated; "
            "use targets=rankaug.Targets(label_fields=...)",
            f"{name}(pool=...) is deprecated; use partners=rankaug.Partners(pool=...)",
        ]
        objects = wrapper(
            data, seed=2, keying="sample", partners=Partners(pool=[1, 2, 3]), targets=Targets()
        )
        assert flat.config == objects.config
        same_outputs(flat, objects)

    def test_an_object_and_its_flat_keywords_are_refused_together(self) -> None:
        with pytest.raises(TypeError, match=r"targets= and min_area=: pass the latter inside"):
            MosaicDataset(SyntheticDetection(4), seed=0, targets=Targets(), min_area=1.0)

    def test_an_unknown_keyword_is_refused(self) -> None:
        with pytest.raises(TypeError, match="unexpected keyword argument 'grids'"):
            MosaicDataset(SyntheticDetection(4), seed=0, grids=(2, 2))
        with pytest.raises(TypeError, match="unexpected keyword argument 'num_classes'"):
            CopyPasteDataset(SyntheticDetection(4), seed=0, num_classes=3)

    def test_take_and_refuse_leftovers(self) -> None:
        legacy: dict[str, Any] = {"pool": [1], "other": 2}
        with pytest.warns(DeprecationWarning, match=r"X\(pool=\.\.\.\) is deprecated"):
            assert take(Partners, None, legacy, "X") == Partners(pool=(1,))
        assert legacy == {"other": 2}
        with pytest.raises(TypeError, match=r"X\(\) got an unexpected keyword argument 'other'"):
            refuse_leftovers(legacy, "X")


class TestUnusedFields:
    @pytest.mark.parametrize(
        ("wrapper", "kwargs", "message"),
        [
            (MixUpDataset, {"targets": Targets(min_area=1.0)}, "does not use targets.min_area"),
            (CutMixDataset, {"partners": Partners(replace=False)}, "partners.replace"),
            (CopyPasteDataset, {"targets": Targets(min_visibility=0.5)}, "targets.min_visibility"),
            (MixUpDataset, {"partners": Partners(replace=False)}, "partners.replace, got False"),
        ],
    )  # fmt: skip
    def test_a_field_the_wrapper_does_not_use_is_refused(
        self, wrapper: Any, kwargs: dict[str, Any], message: str
    ) -> None:
        with pytest.raises(ValueError, match=message):
            wrapper(SyntheticDetection(4, image_size=16), seed=0, **kwargs)

    def test_defaults_pass(self) -> None:
        refuse_unused(Targets(), ("box_format",), "X")
        refuse_unused(Partners(pool=[1]), ("pool",), "X")
