"""``collate_ultralytics``: ultralytics' own batch layout, checked against real ultralytics.

The round trip runs where ultralytics is installed (the benchmark venv, see
``benchmarks/requirements.txt``; ``.ci/run`` runs this file there) and skips elsewhere:
``YOLODataset`` samples of a small folder, collated by ultralytics' ``collate_fn`` and by
:func:`rankaug.collate_ultralytics`, also after rankaug's adapter, flip and mosaic.
"""

from __future__ import annotations

import os
import re
import warnings
from typing import Any

import albumentations as A
import cv2
import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader

from rankaug import MosaicDataset, RandomAugmentWrapper, Targets, collate_ultralytics
from rankaug.adapters import Ultralytics
from tests.albu import bbox_params
from tests.collate.test_init import fetched_descriptors

LABELS = ["0 0.5 0.5 0.25 0.25\n1 0.25 0.3 0.1 0.2\n", "", "1 0.6 0.4 0.3 0.5\n"]


def sample(boxes: int = 2, size: tuple[int, int] = (8, 10)) -> dict[str, Any]:
    return {"img": torch.zeros(3, *size, dtype=torch.uint8), "cls": torch.ones(boxes, 1),
            "bboxes": torch.rand(boxes, 4), "batch_idx": torch.zeros(boxes),
            "im_file": "a.jpg", "ori_shape": size}  # fmt: skip


def assert_same_batch(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    """Equal field by field: the same keys in the same order, tensors of the same dtype."""
    assert list(ours) == list(theirs)
    tensors = [key for key, value in theirs.items() if isinstance(value, torch.Tensor)]
    assert tensors == ["batch_idx", "bboxes", "cls", "img"]
    for key in tensors:
        assert ours[key].dtype == theirs[key].dtype, key
        assert torch.equal(ours[key], theirs[key]), key
    for key in set(theirs) - set(tensors):
        assert type(ours[key]) is tuple, key
        assert ours[key] == theirs[key], key


class TestCollateUltralytics:
    def test_layout(self) -> None:
        out = collate_ultralytics([sample(2), sample(0), sample(1)])
        assert list(out) == ["batch_idx", "bboxes", "cls", "im_file", "img", "ori_shape"]
        assert out["batch_idx"].tolist() == [0.0, 0.0, 2.0]
        assert out["img"].shape == (3, 3, 8, 10)
        assert out["cls"].shape == (3, 1)
        assert out["im_file"] == ("a.jpg", "a.jpg", "a.jpg")

    def test_numpy_images_become_chw(self) -> None:
        first = {**sample(1), "img": np.arange(8 * 10 * 3, dtype=np.uint8).reshape(8, 10, 3)}
        out = collate_ultralytics([first])
        assert torch.equal(out["img"][0], torch.from_numpy(first["img"]).permute(2, 0, 1))

    def test_from_a_worker_only_the_images_pass_a_file_descriptor(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # the per-box tensors travel by value, in any dtype; the images shared as usual
        samples = [{**sample(k % 3), "keypoints": torch.rand(k % 3, 2).bfloat16()}
                   for k in range(8)]  # fmt: skip
        loader = DataLoader(
            samples, batch_size=4, num_workers=1, collate_fn=collate_ultralytics,
            persistent_workers=True, prefetch_factor=1,
        )  # fmt: skip
        batches = list(loader)
        for batch, first in zip(batches, (0, 4), strict=True):
            here = collate_ultralytics(samples[first : first + 4])
            assert batch["img"].is_shared()
            for key in ("batch_idx", "bboxes", "cls", "keypoints"):
                assert type(batch[key]) is torch.Tensor, key
                assert not batch[key].is_shared(), key
                assert batch[key].dtype == here[key].dtype, key
                assert torch.equal(batch[key], here[key]), key
        assert fetched_descriptors(loader, monkeypatch) == (2, 2)

    def test_errors(self) -> None:
        with pytest.raises(ValueError, match=r"^batch must be a non-empty sequence .*, got \[\]"):
            collate_ultralytics([])
        with pytest.raises(TypeError, match=re.escape("batch[0] must be a dict sample")):
            collate_ultralytics([(torch.zeros(3, 2, 2), 0)])
        with pytest.raises(ValueError, match=re.escape("batch[1] has keys")):
            collate_ultralytics([sample(), {"img": torch.zeros(3, 8, 10)}])
        with pytest.raises(ValueError, match=re.escape("batch[1] img has shape (3, 4, 4)")):
            collate_ultralytics([sample(), sample(size=(4, 4))])
        stale = {**sample(2), "batch_idx": torch.zeros(3)}
        with pytest.raises(ValueError, match="batch_idx has 3 entries for 2 boxes"):
            collate_ultralytics([stale])
        with pytest.raises(TypeError, match=re.escape("batch[0] cls must be a tensor")):
            collate_ultralytics([{**sample(1), "cls": [[1.0]]}])

    @pytest.mark.parametrize("batch", [sample(), None, "img"], ids=["a lone sample", "None", "str"])
    def test_a_batch_that_is_not_a_sequence_is_named(self, batch: Any) -> None:
        # a lone sample was read key by key: "batch[0] must be a dict sample, got str"
        with pytest.raises(TypeError, match=r"^batch must be a non-empty sequence of dict samples"):
            collate_ultralytics(batch)

    @pytest.mark.parametrize("key", ["cls", "keypoints"])
    def test_a_per_box_value_out_of_step_with_the_boxes_is_refused(self, key: str) -> None:
        # concatenated, each later box of the batch would get another box's class
        extra = {"keypoints": torch.zeros(2, 17, 3)} if key == "keypoints" else {}
        good, bad = {**sample(2), **extra}, {**sample(2), **extra}
        bad[key] = torch.cat([bad[key], bad[key][:1]])  # 3 entries for 2 boxes
        with pytest.raises(ValueError, match=re.escape(f"batch[1] {key} has 3 entries for 2")):
            collate_ultralytics([good, bad, good])
        out = collate_ultralytics([good, good])
        assert len(out[key]) == len(out["bboxes"]) == 4

    def test_rankaugs_own_layout_is_refused_not_collated_without_img(self) -> None:
        # YoloFolder -> MosaicDataset samples ({"image", "bboxes", "labels"}) came out with
        # bboxes concatenated, images and labels as tuples and no img, cls or batch_idx
        ours = {"image": np.zeros((8, 10, 3), np.uint8), "bboxes": np.zeros((1, 4), np.float32),
                "labels": np.zeros(1, np.int64)}  # fmt: skip
        with pytest.raises(ValueError, match=r"^batch\[0\] has no 'img' .*'image', 'labels'.*"
                           r"collate_detection"):  # fmt: skip
            collate_ultralytics([ours, ours])


@pytest.fixture(scope="module")
def yolo(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """ultralytics' ``YOLODataset`` over a three-image folder, without augmentation."""
    root = tmp_path_factory.mktemp("yolo")
    os.environ.setdefault("YOLO_CONFIG_DIR", str(root / "config"))  # its settings file
    pytest.importorskip(
        "ultralytics",
        reason="ultralytics is not installed here: it lives in the benchmark venv "
        "(benchmarks/requirements.txt), where .ci/run runs this file",
    )
    (root / "images").mkdir()
    (root / "labels").mkdir()
    for index, labels in enumerate(LABELS):
        image = np.full((48, 64, 3), (40, 90, 160), np.uint8)
        image[10 : 30 + index, 20:44] = (200, 30 + 50 * index, 10)
        cv2.imwrite(str(root / "images" / f"{index}.png"), image)
        (root / "labels" / f"{index}.txt").write_text(labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ultralytics' own import-time warnings
        from ultralytics.cfg import get_cfg
        from ultralytics.data.dataset import YOLODataset
        from ultralytics.utils import DEFAULT_CFG

        return YOLODataset(
            img_path=str(root / "images"), imgsz=64, augment=False, task="detect",
            data={"names": {0: "a", 1: "b"}, "channels": 3}, hyp=get_cfg(DEFAULT_CFG),
        )  # fmt: skip


class TestAgainstUltralytics:
    def test_its_collated_batch_and_ours_are_equal(self, yolo: Any) -> None:
        samples = [yolo[i] for i in range(len(yolo))]
        assert_same_batch(collate_ultralytics(samples), yolo.collate_fn(samples))

    def test_after_the_adapter_the_batch_is_the_same(self, yolo: Any) -> None:
        adapter = Ultralytics()
        samples = [yolo[i] for i in range(len(yolo))]
        targets = {"image", "bboxes", "labels"}
        rebuilt = [adapter.repack(*adapter.unpack(s, targets)) for s in samples]
        assert_same_batch(collate_ultralytics(rebuilt), yolo.collate_fn(samples))

    def test_a_flip_through_rankaug(self, yolo: Any) -> None:
        flip = A.Compose([A.HorizontalFlip(p=1.0)], bbox_params=bbox_params("yolo"))
        samples = [yolo[i] for i in range(len(yolo))]
        flipped = RandomAugmentWrapper(samples, flip, seed=0, adapter=Ultralytics())
        ours = collate_ultralytics([flipped[i] for i in range(len(yolo))])
        theirs = yolo.collate_fn(samples)
        assert torch.equal(ours["img"], theirs["img"].flip(3))
        expected = theirs["bboxes"].clone()
        expected[:, 0] = 1.0 - expected[:, 0]
        torch.testing.assert_close(ours["bboxes"], expected)
        for key in ("cls", "batch_idx"):
            assert torch.equal(ours[key], theirs[key]), key
        for key in ("im_file", "ori_shape", "resized_shape", "ratio_pad"):
            assert ours[key] == theirs[key], key

    def test_the_letterbox_the_data_guide_drops_comes_first(self, yolo: Any) -> None:
        # docs/guides/data.md: dataset.transforms.transforms.pop(0) leaves unpadded images
        assert [type(t).__name__ for t in yolo.transforms.transforms] == ["LetterBox", "Format"]

    def test_a_mosaic_batch_goes_into_its_collate_fn_as_into_ours(self, yolo: Any) -> None:
        samples = [yolo[i] for i in range(len(yolo))]
        mosaic = MosaicDataset(samples, seed=0, output_size=64, targets=Targets(box_format="yolo"),
                               adapter=Ultralytics())  # fmt: skip
        outputs = [mosaic[i] for i in range(len(yolo))]
        for out in outputs:
            assert len(out["batch_idx"]) == len(out["cls"]) == len(out["bboxes"])
            assert out["resized_shape"] == (64, 64)
            out.pop("mosaic")  # rankaug's record: ultralytics' collate_fn would keep it too
        ours = collate_ultralytics(outputs)
        assert ours["img"].shape == (3, 3, 64, 64)
        assert ours["img"].dtype == torch.uint8
        assert_same_batch(ours, yolo.collate_fn(outputs))
