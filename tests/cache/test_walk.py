"""Tests for rankaug.cache._walk: a random wrapper anywhere inside is found."""

from __future__ import annotations

import functools
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
            refuse_random(Holder(parts=[Slotted([i]) for i in range(20)]))

    def test_plain_data_is_scanned_not_visited(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(rankaug.cache._walk, "LIMIT", 10)  # far fewer than the items
        records = [(f"{i}.png", i % 80, np.zeros(2), None) for i in range(1000)]
        annotations = {i: {"bbox": [1.0, 2.0], "tags": {"a"}} for i in range(100)}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            # walked item by item, 10 visits would stop it with a warning
            refuse_random(Holder(records=records, annotations=annotations, nested=[[[[1]]]]))
        assert [str(w.message) for w in caught] == []

    @pytest.mark.parametrize(
        ("make", "where"),
        [
            (lambda m: [(str(i), i) for i in range(1000)] + [("x", {"aug": m})],
             r"dataset.parts\[1000\]\[1\]\['aug'\]"),
            (lambda m: functools.reduce(lambda inner, _: [inner], range(40), m),
             r"dataset.parts(\[0\]){40}\)"),
            (lambda m: type("Records", (list,), {})([1, m]), r"dataset.parts\[1\]"),
        ],
    )  # fmt: skip
    def test_a_wrapper_among_data_is_found(self, make: Any, where: str) -> None:
        with pytest.raises(ValueError, match=rf"holds MosaicDataset \(at {where}"):
            refuse_random(Holder(parts=make(mosaic())))

    def test_data_in_a_cycle_is_walked(self) -> None:
        looped: list[Any] = [1]
        looped.append(looped)
        refuse_random(Holder(parts=looped))
        looped.append(mosaic())
        with pytest.raises(ValueError, match=r"at dataset.parts\[2\]"):
            refuse_random(Holder(parts=looped))


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


def apply_to_image(transform: Any, image: np.ndarray) -> np.ndarray:
    flipped: np.ndarray = transform(image=image)["image"]
    return flipped


class Augmenter:
    """Holds a transform; its bound method is what a dataset is given."""

    def __init__(self, transform: Any) -> None:
        self.transform = transform

    def __call__(self, image: np.ndarray) -> np.ndarray:
        return apply_to_image(self.transform, image)

    def apply(self, image: np.ndarray) -> np.ndarray:
        return apply_to_image(self.transform, image)


class TestInsideFunctions:
    """A transform a function holds (a closure variable, a ``functools.partial``
    argument, a global it names, a bound method's object) is found like any other."""

    def test_a_closure_variable(self) -> None:
        A = pytest.importorskip("albumentations")

        def make(transform: Any) -> Any:
            return lambda image: transform(image=image)["image"]

        holder = Holder(data=SyntheticDetection(2, 8), transform=make(A.HorizontalFlip()))
        with pytest.warns(RankaugWarning, match=r"HorizontalFlip from albumentations at "
                          r"dataset.transform.<closure transform>:"):  # fmt: skip
            refuse_random(holder)

    def test_a_partial_argument_and_a_bound_method(self) -> None:
        A = pytest.importorskip("albumentations")
        partial = functools.partial(apply_to_image, A.HorizontalFlip())
        with pytest.warns(RankaugWarning, match=r"at dataset.transform.args\[0\]:"):
            refuse_random(Holder(transform=partial))
        method = Augmenter(A.VerticalFlip()).apply
        with pytest.warns(RankaugWarning, match=r"at dataset.transform.__self__.transform:"):
            refuse_random(Holder(transform=method))

    def test_a_global_the_function_names(self) -> None:
        A = pytest.importorskip("albumentations")
        namespace: dict[str, Any] = {"aug": A.Compose([A.RandomCrop(4, 4)])}
        exec("def transform(image):\n    return aug(image=image)['image']", namespace)
        with pytest.warns(RankaugWarning, match=r"at dataset.transform.<global aug>:"):
            refuse_random(Holder(transform=namespace["transform"]))

    def test_a_rankaug_wrapper_in_a_closure_is_refused(self) -> None:
        inner = mosaic()
        with pytest.raises(ValueError, match=r"holds MosaicDataset \(at dataset.read.<closure"):
            refuse_random(Holder(read=lambda index: inner[index]))

    def test_functions_reached_through_globals_are_not_followed(self) -> None:
        A = pytest.importorskip("albumentations")
        library: dict[str, Any] = {"aug": A.HorizontalFlip()}
        exec("def helper(image):\n    return aug(image=image)['image']", library)
        user: dict[str, Any] = {"helper": library["helper"]}
        exec("def transform(image):\n    return helper(image)", user)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            refuse_random(Holder(transform=user["transform"], plain=lambda image: image))


class TestAugmentingDatasets:
    """A dataset built with ``augment=True`` (ultralytics' ``YOLODataset``) augments
    every read: warned about like a transform."""

    def test_augment_true_is_warned_about(self) -> None:
        with pytest.warns(RankaugWarning, match=r"found Holder with augment=True at dataset:"):
            refuse_random(Holder(augment=True))
        with pytest.warns(RankaugWarning, match=r"with augment=True at dataset.parts\[0\]:"):
            refuse_random(Holder(parts=[Holder(augment=True)]))

    def test_augment_false_and_other_objects_are_not(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            refuse_random(Holder(augment=False, settings=Slotted(True)))
            refuse_random(Holder(hyp=Augmenter(None)))


class TestHuggingFaceTransforms:
    """A ``with_transform``/``set_transform`` transform runs on every read of a
    ``datasets.Dataset``: the cache would keep its first output."""

    def test_with_transform_is_warned_about(self) -> None:
        datasets = pytest.importorskip("datasets")
        rows = datasets.Dataset.from_dict({"value": [1, 2]})
        with pytest.warns(RankaugWarning, match=r"found a Hugging Face transform \(<lambda>, "
                          r"set by with_transform or set_transform\) on the Dataset at "
                          r"dataset: it runs on every read"):  # fmt: skip
            refuse_random(rows.with_transform(lambda batch: batch))
        rows.set_transform(lambda batch: batch)
        with pytest.warns(RankaugWarning, match=r"on the Dataset at dataset.parts\[1\]:"):
            refuse_random(Holder(parts=[SyntheticDetection(2, 8), rows]))

    def test_other_formats_are_not(self) -> None:
        datasets = pytest.importorskip("datasets")
        rows = datasets.Dataset.from_dict({"value": [1, 2]})
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            refuse_random(rows)
            refuse_random(rows.with_format("numpy"))
            refuse_random(rows.with_transform(lambda batch: batch).with_format("torch"))
