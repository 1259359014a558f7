"""Tests for rankaug.cache._tv_tensors: torchvision's tv_tensors through the cache.

Runs where torchvision is installed: ``.venv-tv`` (torch 2.14.1 + torchvision 0.29.1,
``constraints-tv.txt``; ``.ci/run`` runs this file there), and skips elsewhere.
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import Any

import pytest
import torch

from rankaug.cache import CachedDataset
from rankaug.cache._content import content_hash
from rankaug.cache._format import Corrupt, read
from rankaug.cache._tv_tensors import is_tv_tensor, tv_tensor, tv_tensor_reduction
from rankaug.cache._unpickle import tensor_reduction
from tests.cache.helpers import ListDataset, forge

tv_tensors = pytest.importorskip(
    "torchvision.tv_tensors",
    reason="torchvision is not installed here: it lives in .venv-tv (torch 2.14.1 + "
    "torchvision 0.29.1, constraints-tv.txt); .ci/run runs this file there",
)


class _TensorPickler(pickle.Pickler):
    """Plain tensors as the cache stores them; anything else as pickle does."""

    def reducer_override(self, obj: object) -> object:  # type: ignore[override]
        return tensor_reduction(obj) if type(obj) is torch.Tensor else NotImplemented


class _Scored(tv_tensors.TVTensor):  # type: ignore[misc,name-defined]
    """A TVTensor of the user's own, with metadata."""

    score: float


def _scored(values: torch.Tensor, score: float) -> Any:
    scored = values.as_subclass(_Scored)
    scored.score = score
    return scored


def _coco_like() -> tuple[Any, dict[str, Any]]:
    """What ``wrap_dataset_for_transforms_v2(CocoDetection(...))`` gives."""
    image = tv_tensors.Image(torch.arange(3 * 64 * 80, dtype=torch.int32).reshape(3, 64, 80))
    boxes = tv_tensors.BoundingBoxes(
        torch.tensor([[1.0, 2, 30, 40], [5, 6, 7, 8]]),
        format="CXCYWH",
        canvas_size=(64, 80),
        clamping_mode="hard",
    )
    return image.to(torch.uint8), {
        "boxes": boxes,
        "labels": torch.tensor([3, 1]),
        "masks": tv_tensors.Mask(torch.ones(2, 64, 80, dtype=torch.bool)),
        "keypoints": tv_tensors.KeyPoints(torch.rand(2, 3, 2), canvas_size=(64, 80)),
        "video": tv_tensors.Video(torch.zeros(2, 3, 8, 8)),
    }


def _same(got: Any, expected: Any) -> None:
    assert type(got) is type(expected)
    assert vars(got) == vars(expected)
    assert got.dtype == expected.dtype
    assert torch.equal(got.as_subclass(torch.Tensor), expected.as_subclass(torch.Tensor))


class TestTvTensorReduction:
    def test_plain_tensors_and_other_objects_are_not_its(self) -> None:
        assert tv_tensor_reduction(torch.ones(2)) is NotImplemented
        assert not is_tv_tensor(torch.ones(2))
        assert is_tv_tensor(tv_tensors.Mask(torch.ones(2, 2)))

    def test_torchvisions_own_by_name_with_plain_metadata(self) -> None:
        boxes = _coco_like()[1]["boxes"]
        rebuild, (kind, plain, grad, state, enums) = tv_tensor_reduction(boxes)
        assert (rebuild, kind, grad) == (tv_tensor, "BoundingBoxes", False)
        assert type(plain) is torch.Tensor
        assert state == {"canvas_size": (64, 80), "clamping_mode": "hard"}
        assert enums == {"format": ("BoundingBoxFormat", "CXCYWH")}

    def test_undeclared_metadata_is_not_stored(self) -> None:
        mask = tv_tensors.Mask(torch.ones(2, 2))
        mask.note = "x"
        assert tv_tensor_reduction(mask) is NotImplemented


class TestTvTensor:
    @pytest.mark.parametrize("read_only_arrays", [False, True])
    def test_every_kind_round_trips_through_the_cache(
        self, tmp_path: Path, read_only_arrays: bool
    ) -> None:
        # no trusted_types: torchvision's own classes are looked up by name, never called
        sample = _coco_like()
        cached = CachedDataset(ListDataset([sample]), tmp_path, read_only_arrays=read_only_arrays)
        for _ in range(2):  # stored, then read back
            image, target = cached[0]
            _same(image, sample[0])
            assert list(target) == list(sample[1])
            assert type(target["labels"]) is torch.Tensor
            for key in target.keys() - {"labels"}:
                _same(target[key], sample[1][key])
        assert cached.is_cached(0)
        assert target["boxes"].format is tv_tensors.BoundingBoxFormat.CXCYWH

    def test_requires_grad_comes_back(self, tmp_path: Path) -> None:
        image = tv_tensors.Image(torch.ones(3, 4, 4), requires_grad=True)
        cached = CachedDataset(ListDataset([image]), tmp_path)
        cached[0]
        back = cached[0]
        assert type(back) is tv_tensors.Image
        assert back.requires_grad
        assert back.is_leaf

    def test_a_tv_tensor_of_the_users_own_needs_its_class_trusted(self, tmp_path: Path) -> None:
        sample = {"scores": _scored(torch.ones(4), 0.5)}
        with pytest.raises(TypeError, match=r"holds tests.cache.test_tv_tensors._Scored, .*"
                           r"pass trusted_types=\[_Scored\]") as info:  # fmt: skip
            CachedDataset(ListDataset([sample]), tmp_path / "a")[0]
        assert "_rebuild" not in str(info.value)
        cached = CachedDataset(ListDataset([sample]), tmp_path / "b", trusted_types=[_Scored])
        cached[0]
        _same(cached[0]["scores"], sample["scores"])

    @pytest.mark.parametrize(
        "arguments",
        [
            ("Mask", torch.ones(2), False, {"note": "planted"}, {}),
            ("Image", torch.ones(2), False, {}, {"format": ("BoundingBoxFormat", "XYXY")}),
            ("BoundingBoxes", torch.ones(1, 4), False, {"canvas_size": [object]}, {}),
            ("wrap", torch.ones(2), False, {}, {}),
            ("BoundingBoxes", torch.ones(1, 4), False, {}, {"format": ("TVTensor", "XYXY")}),
            (int, torch.ones(2), False, {}, {}),
        ],
    )
    def test_a_forged_entry_sets_nothing_undeclared(
        self, tmp_path: Path, arguments: tuple[Any, ...]
    ) -> None:
        class Forged:
            def __reduce__(self) -> Any:
                return tv_tensor, arguments

        path = tmp_path / "0.sample"
        stream = io.BytesIO()
        _TensorPickler(stream, protocol=5).dump(Forged())
        path.write_bytes(forge(stream.getvalue()))
        with pytest.raises(Corrupt, match=r"cannot unpickle \(UnpicklingError: "):
            read(str(path), {("builtins", "int"): int, ("builtins", "object"): object})


class TestContentHash:
    def test_a_tv_tensors_metadata_is_its_content(self) -> None:
        # a list of samples changed only in a box format must not read its old cache
        values = torch.tensor([[1.0, 2, 3, 4]])
        xyxy = tv_tensors.BoundingBoxes(values, format="XYXY", canvas_size=(8, 8))
        xywh = tv_tensors.BoundingBoxes(values, format="XYWH", canvas_size=(8, 8))
        assert content_hash([xyxy]) != content_hash([xywh])
        assert content_hash([xyxy]) == content_hash([xyxy.clone()])
