"""rankaug._compact_copy: the same deep copy as copy.deepcopy, plain objects set attribute by
attribute."""

from __future__ import annotations

import copy
import pickle
import random
from typing import Any
from unittest import mock

import numpy as np
import pytest

from rankaug._compact_copy import compact_deepcopy


class Plain:
    def __init__(self, **attributes: Any) -> None:
        for name, value in attributes.items():
            setattr(self, name, value)


class Tagged(dict[str, int]):
    """A dict with attributes: its items are no attribute."""


class Slotted:
    __slots__ = ("x",)


class WithSlots(Slotted):
    def __init__(self) -> None:
        self.x = 1
        self.y = 2


class OwnCopy:
    copies = 0

    def __deepcopy__(self, memo: dict[int, Any]) -> OwnCopy:
        OwnCopy.copies += 1
        return OwnCopy()


class OwnState:
    def __init__(self) -> None:
        self.kept, self.dropped = 1, 2

    def __getstate__(self) -> dict[str, int]:
        return {"kept": self.kept}


class Guarded:
    """A property whose name is also in the instance's ``__dict__`` (set there directly)."""

    sets = 0

    @property
    def x(self) -> int:
        return 0

    @x.setter
    def x(self, value: int) -> None:
        Guarded.sets += 1


def albumentations_pipeline() -> Any:
    import albumentations as A

    return A.Compose(
        [
            A.HorizontalFlip(p=0.5),
            A.Affine(scale=(0.75, 1.25), rotate=(-10, 10), p=1.0),
            A.RandomBrightnessContrast(p=0.5),
        ],
        bbox_params=A.BboxParams("pascal_voc", label_fields=["labels"]),
    )


class TestCompactDeepcopy:
    def test_plain_objects_are_copied_attribute_by_attribute(self) -> None:
        leaf: Any = Plain(values=[1, 2], name="leaf")
        tree = Plain(children=[leaf, Plain(parent=None)], table={"a": leaf})
        with mock.patch.object(copy, "deepcopy", wraps=copy.deepcopy) as deep:
            made: Any = compact_deepcopy(tree)
        assert not [c for c in deep.call_args_list if isinstance(c.args[0], Plain | list | dict)]
        assert made is not tree
        assert made.children[0] is not leaf
        assert made.children[0].values == [1, 2]
        assert made.children[0].values is not leaf.values
        assert made.table["a"] is made.children[0]  # shared stays shared

    def test_cycles_and_shared_values_come_back_as_they_were(self) -> None:
        shared = np.arange(3)
        node: Any = Plain(a=shared, b=shared, pair=(shared, [shared]))
        node.me = node
        made: Any = compact_deepcopy(node)
        assert made.me is made
        assert made.a is made.b is made.pair[0] is made.pair[1][0]
        assert made.a is not shared
        assert made.a.tolist() == [0, 1, 2]

    def test_what_is_not_plain_goes_to_deepcopy(self) -> None:
        tagged = Tagged(one=1)
        tagged.note = "n"  # type: ignore[attr-defined]
        slotted = WithSlots()
        stated = OwnState()
        guarded = Guarded()
        guarded.__dict__["x"] = 5
        odd = Plain(a=1)
        attributes: dict[Any, Any] = vars(odd)
        attributes[7] = "seven"  # not a name: setattr would refuse it
        before = OwnCopy.copies, Guarded.sets
        made: Any = compact_deepcopy(
            Plain(items=[tagged, slotted, OwnCopy(), stated, guarded, odd])
        )
        tagged2, slotted2, own2, stated2, guarded2, odd2 = made.items
        assert (type(tagged2), dict(tagged2), tagged2.note) == (Tagged, {"one": 1}, "n")
        assert (slotted2.x, slotted2.y) == (1, 2)
        assert isinstance(own2, OwnCopy)
        assert (OwnCopy.copies, Guarded.sets) == (before[0] + 1, before[1])
        assert vars(stated2) == {"kept": 1}
        assert guarded2.__dict__["x"] == 5
        assert vars(odd2) == {"a": 1, 7: "seven"}

    def test_an_albumentations_pipeline_copy_draws_and_works_as_deepcopys(self) -> None:
        pipeline = albumentations_pipeline()
        ours, theirs = compact_deepcopy(pipeline), copy.deepcopy(pipeline)
        image = np.arange(48 * 64 * 3, dtype=np.uint8).reshape(48, 64, 3)
        boxes = np.array([[4.0, 5.0, 30.0, 40.0]], np.float32)
        outputs = []
        for copied in (ours, theirs):
            copied.set_random_state(np.random.default_rng(7), random.Random(7))
            outputs.append(
                [copied(image=image, bboxes=boxes, labels=np.array([3])) for _ in range(6)]
            )
        for a, b in zip(*outputs, strict=True):
            assert np.array_equal(a["image"], b["image"])
            assert np.array_equal(a["bboxes"], b["bboxes"])
        # independent of the original: its own transforms, bound methods and generators
        assert ours.transforms[1] is not pipeline.transforms[1]
        bound = next(iter(ours.transforms[1]._key2func.values()))
        assert bound.__self__ is ours.transforms[1]
        assert ours.transforms[1].random_generator is not pipeline.transforms[1].random_generator

    def test_it_pickles_as_deepcopys_does(self) -> None:
        pipeline = albumentations_pipeline()
        assert pickle.dumps(compact_deepcopy(pipeline)) == pickle.dumps(copy.deepcopy(pipeline))

    @pytest.mark.parametrize("value", [3, "s", (1, 2), None, np.float32(2.5), b"x"])
    def test_atoms_and_tuples(self, value: Any) -> None:
        assert compact_deepcopy(value) == value
