"""torchvision's tv_tensors through every wrapper, against the real torchvision.

Runs where torchvision is installed: ``.venv-tv`` (torch 2.14.1 + torchvision 0.29.1, see
``constraints-tv.txt``; ``.ci/run`` runs this file there), and skips elsewhere (the main
venv's torch 2.13.0 CPU wheel has no torchvision beside it; there
``tests/samples/tv_standin.py`` stands in for it).
"""

from __future__ import annotations

from typing import Any

import albumentations as A
import pytest
import torch
from albumentations.pytorch import ToTensorV2

from rankaug import CutMixDataset, MixUpDataset, MosaicDataset, RandomAugmentWrapper, Targets
from rankaug.adapters import KeyMap
from rankaug.samples.restore import is_wrapped
from tests.albu import bbox_params

v2 = pytest.importorskip(
    "torchvision.transforms.v2",
    reason="torchvision is not installed here: it lives in .venv-tv (torch 2.14.1 + "
    "torchvision 0.29.1, constraints-tv.txt); .ci/run runs this file there",
)
from torchvision import tv_tensors  # noqa: E402 (after the skip)


class _Pairs(torch.utils.data.Dataset[Any]):
    """What ``wrap_dataset_for_transforms_v2(CocoDetection(...))`` gives: tv_tensors.

    ``listed=True`` gives the instance masks as a list of ``Mask``, one per box.
    """

    def __init__(self, *, listed: bool = False) -> None:
        self.listed = listed

    def __len__(self) -> int:
        return 4

    def __getitem__(self, index: int) -> Any:
        pixels = (torch.arange(64, dtype=torch.uint8) * (index + 1)).expand(3, 48, 64)
        image = tv_tensors.Image(pixels.clone())
        boxes = tv_tensors.BoundingBoxes(
            [[4.0, 4.0, 24.0, 20.0]], format="XYXY", canvas_size=(48, 64)
        )
        masks: Any = tv_tensors.Mask(torch.zeros((1, 48, 64), dtype=torch.uint8))
        if self.listed:
            masks = [tv_tensors.Mask(torch.zeros((48, 64), dtype=torch.uint8))]
        return image, {"boxes": boxes, "labels": torch.tensor([1]), "masks": masks}


def _resize() -> Any:
    return A.Compose(
        [A.Resize(32, 40), A.Affine(scale=(0.9, 1.1), p=1.0)],
        bbox_params=bbox_params("pascal_voc"),
    )


def _check(image: Any, target: Any) -> None:
    """The classes are torchvision's, and the boxes' canvas is the image's size."""
    assert type(image) is tv_tensors.Image
    assert type(target["boxes"]) is tv_tensors.BoundingBoxes
    assert type(target["masks"]) is tv_tensors.Mask
    assert type(target["labels"]) is torch.Tensor
    assert target["boxes"].canvas_size == tuple(image.shape[-2:])
    assert target["boxes"].format == tv_tensors.BoundingBoxFormat.XYXY
    assert tuple(target["masks"].shape[-2:]) == tuple(image.shape[-2:])
    assert len(target["masks"]) == len(target["boxes"]) == len(target["labels"])


class TestTvTensors:
    def test_they_are_seen_without_wrap_like(self) -> None:
        boxes = _Pairs()[0][1]["boxes"]
        assert not hasattr(type(boxes), "wrap_like")  # torchvision 0.16+ has wrap
        assert is_wrapped(boxes)

    def test_random_augment_wrapper_keeps_them(self) -> None:
        image, target = RandomAugmentWrapper(_Pairs(), _resize(), seed=0)[0]
        _check(image, target)
        assert target["boxes"].canvas_size == (32, 40)  # the output's, not (48, 64)

    def test_a_pipeline_ending_in_to_tensor_gives_the_boxes_its_canvas(self) -> None:
        # the canvas was read HxW off ToTensorV2's CxHxW tensor: (3, 32)
        pipe = A.Compose([A.Resize(32, 40), ToTensorV2()], bbox_params=bbox_params("pascal_voc"))
        image, target = RandomAugmentWrapper(_Pairs(), pipe, seed=0)[0]
        assert (type(image), tuple(image.shape)) == (tv_tensors.Image, (3, 32, 40))
        assert target["boxes"].canvas_size == (32, 40)

    @pytest.mark.parametrize(
        "make",
        [
            lambda: MosaicDataset(_Pairs(), seed=0, output_size=32),
            lambda: MixUpDataset(_Pairs(), seed=0, p=1.0),
            lambda: CutMixDataset(_Pairs(), seed=0, p=1.0),
        ],
        ids=["mosaic", "mixup", "cutmix"],
    )
    def test_the_multi_sample_wrappers_keep_them(self, make: Any) -> None:
        dataset = make()
        for index in range(2):
            _check(*dataset[index])

    def test_a_later_v2_flip_moves_the_boxes_with_the_image(self) -> None:
        image, target = MosaicDataset(_Pairs(), seed=0, output_size=32)[0]
        flipped_image, flipped = v2.RandomHorizontalFlip(p=1.0)(image, target)
        width = image.shape[-1]
        expected = target["boxes"].clone()
        expected[:, [0, 2]] = width - target["boxes"][:, [2, 0]]
        torch.testing.assert_close(
            flipped["boxes"].as_subclass(torch.Tensor), expected.as_subclass(torch.Tensor)
        )
        assert torch.equal(flipped_image, image.flip(-1))

    @pytest.mark.parametrize(
        "make",
        [
            lambda data: RandomAugmentWrapper(data, _resize(), seed=0),
            lambda data: MosaicDataset(data, seed=0, output_size=32),
            lambda data: CutMixDataset(data, seed=0, p=1.0),
        ],
        ids=["augment", "mosaic", "cutmix"],
    )
    def test_a_list_of_masks_keeps_each_items_class(self, make: Any) -> None:
        image, target = make(_Pairs(listed=True))[0]
        assert type(target["masks"]) is list
        assert len(target["masks"]) == len(target["boxes"]) > 0
        assert {type(mask) for mask in target["masks"]} == {tv_tensors.Mask}
        assert {tuple(mask.shape) for mask in target["masks"]} == {tuple(image.shape[-2:])}

    def test_key_map_keeps_them(self) -> None:
        image, target = _Pairs()[0]
        sample = {"img": image, "ann": target}
        adapter = KeyMap("img", bboxes="ann.boxes", labels="ann.labels", masks="ann.masks")
        resize = A.Compose([A.Resize(24, 32)], bbox_params=bbox_params("pascal_voc"))
        out = RandomAugmentWrapper([sample], resize, seed=0, adapter=adapter)[0]
        _check(out["img"], out["ann"])
        assert out["ann"]["boxes"].tolist() == [[2.0, 2.0, 12.0, 10.0]]


class _Formatted(torch.utils.data.Dataset[Any]):
    """One box, [4, 4, 24, 20] in XYXY, given in torchvision's ``fmt``."""

    def __init__(self, fmt: str, coords: list[float]) -> None:
        self.fmt, self.coords = fmt, coords

    def __len__(self) -> int:
        return 4

    def __getitem__(self, index: int) -> Any:
        image = tv_tensors.Image(torch.full((3, 48, 64), 10 * (index + 1), dtype=torch.uint8))
        boxes = tv_tensors.BoundingBoxes([self.coords], format=self.fmt, canvas_size=(48, 64))
        return image, {"boxes": boxes, "labels": torch.tensor([1])}


class _Stream(torch.utils.data.IterableDataset[Any]):
    """The samples of ``_Formatted`` as a stream."""

    def __init__(self, fmt: str, coords: list[float]) -> None:
        self.samples = _Formatted(fmt, coords)

    def __iter__(self) -> Any:
        return (self.samples[index] for index in range(len(self.samples)))


def _assert_boxes(boxes: Any, expected: list[list[float]]) -> None:
    torch.testing.assert_close(boxes.as_subclass(torch.Tensor), torch.tensor(expected))


def _flip(box_format: str) -> Any:
    return A.Compose([A.HorizontalFlip(p=1.0)], bbox_params=bbox_params(box_format))


_CXCYWH = ("CXCYWH", [14.0, 12.0, 20.0, 16.0])
_XYWH = ("XYWH", [4.0, 4.0, 20.0, 16.0])


class TestBoxFormats:
    @pytest.mark.parametrize(
        ("fmt", "coords", "fix"),
        [("CXCYWH", [14.0, 12.0, 20.0, 16.0], "ConvertBoundingBoxFormat"),
         ("XYWH", [4.0, 4.0, 20.0, 16.0], "box_format='coco'")],
    )  # fmt: skip
    def test_boxes_in_another_format_are_refused(
        self, fmt: str, coords: list[float], fix: str
    ) -> None:
        mosaic = MosaicDataset(_Formatted(fmt, coords), seed=0, output_size=48, keying="sample")
        with pytest.raises(Exception, match=rf"format {fmt}.*'pascal_voc'.*{fix}") as caught:
            mosaic[0]
        assert isinstance(caught.value.__cause__ or caught.value, ValueError)

    def test_boxes_in_the_wrappers_format_are_read(self) -> None:
        coco = MosaicDataset(
            _Formatted("XYWH", [4.0, 4.0, 20.0, 16.0]),
            seed=0, output_size=48, keying="sample", targets=Targets(box_format="coco"),
        )  # fmt: skip
        assert coco[0][1]["boxes"].format == tv_tensors.BoundingBoxFormat.XYWH

    @pytest.mark.parametrize(
        "make",
        [
            lambda data: RandomAugmentWrapper(data, _flip("pascal_voc"), seed=0),
            lambda data: RandomAugmentWrapper(
                [{"img": data[i][0], "ann": data[i][1]} for i in range(4)], _flip("pascal_voc"),
                seed=0, adapter=KeyMap("img", bboxes="ann.boxes", labels="ann.labels"),
            ),
        ],
        ids=["default", "key_map"],
    )  # fmt: skip
    def test_random_augment_wrapper_refuses_another_format(self, make: Any) -> None:
        augment = make(_Formatted(*_CXCYWH))
        with pytest.raises(Exception, match=r"format CXCYWH.*'pascal_voc'.*Convert") as caught:
            augment[0]
        assert isinstance(caught.value.__cause__, ValueError)

    def test_random_augment_wrapper_reads_its_transforms_format(self) -> None:
        augment = RandomAugmentWrapper(_Formatted(*_XYWH), _flip("coco"), seed=0)
        boxes = augment[0][1]["boxes"]
        assert boxes.format == tv_tensors.BoundingBoxFormat.XYWH
        _assert_boxes(boxes, [[40.0, 4.0, 20.0, 16.0]])  # x = 64 - 4 - 20: read as XYWH
        refused = RandomAugmentWrapper(_Formatted(*_XYWH), _flip("pascal_voc"), seed=0)
        with pytest.raises(
            Exception, match=r"format XYWH.*reads A.BboxParams format='pascal_voc'.*pass "
            r"A.BboxParams format='coco'"
        ):  # fmt: skip
            refused[0]

    @pytest.mark.parametrize(
        "make",
        [
            lambda stream: RandomAugmentWrapper(stream, _flip("pascal_voc"), seed=0),
            lambda stream: MosaicDataset(stream, seed=0, output_size=48, buffer_size=2),
            lambda stream: MixUpDataset(stream, seed=0, p=1.0, buffer_size=2),
            lambda stream: CutMixDataset(stream, seed=0, p=1.0, buffer_size=2),
        ],
        ids=["augment", "mosaic", "mixup", "cutmix"],
    )
    def test_the_streaming_wrappers_refuse_another_format(self, make: Any) -> None:
        streamed = make(_Stream(*_CXCYWH))
        with pytest.raises(Exception, match=r"format CXCYWH.*'pascal_voc'.*Convert") as caught:
            next(iter(streamed))
        assert isinstance(caught.value.__cause__ or caught.value, ValueError)

    def test_the_streaming_wrappers_read_their_format(self) -> None:
        coco = MosaicDataset(_Stream(*_XYWH), seed=0, output_size=48, buffer_size=2,
                             targets=Targets(box_format="coco"))  # fmt: skip
        assert next(iter(coco))[1]["boxes"].format == tv_tensors.BoundingBoxFormat.XYWH
        flipped = next(iter(RandomAugmentWrapper(_Stream(*_XYWH), _flip("coco"), seed=0)))
        _assert_boxes(flipped[1]["boxes"], [[40.0, 4.0, 20.0, 16.0]])
