"""Tests for rankaug.collate (the package): collate_detection."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
import torch
import torch.multiprocessing.reductions
from hypothesis import given
from hypothesis import strategies as st
from torch.utils.data import DataLoader

import rankaug.collate
from rankaug import MosaicDataset, collate_detection
from rankaug.datasets import SyntheticDetection


def sample(boxes: int, value: int = 0) -> dict[str, Any]:
    return {
        "image": np.full((4, 6, 3), value, np.uint8),
        "bboxes": np.arange(boxes * 4, dtype=np.float32).reshape(boxes, 4),
        "labels": np.arange(boxes, dtype=np.int64) + 10,
        "mask": np.full((4, 6), value, np.uint8),
        "path": f"{value}.png",
    }


def with_(boxes: int = 1, **changes: Any) -> dict[str, Any]:
    return {**sample(boxes), **changes}


def fetched_descriptors(
    loader: DataLoader[Any], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, int]:
    """File descriptors the main process fetched from the workers in a pass, and batches.

    Counted where torch rebuilds a storage shared by descriptor (the worker's pickle
    names the function; the main process looks it up as it unpickles a batch, perhaps
    one that waits for an earlier one to be yielded first: so the pass's total).
    """
    real = torch.multiprocessing.reductions.rebuild_storage_fd
    count = [0]

    def counting(*args: Any) -> Any:
        count[0] += 1
        return real(*args)

    monkeypatch.setattr(torch.multiprocessing.reductions, "rebuild_storage_fd", counting)
    batches = sum(1 for _ in loader)
    return count[0], batches


class TestPackage:
    def test_exports(self) -> None:
        assert sorted(rankaug.collate.__all__) == [
            "BatchCollator",
            "RecycleStats",
            "collate_detection",
        ]


class TestCollateDetection:
    def test_stacks_images_and_gathers_targets_yolo_style(self) -> None:
        out = collate_detection([sample(2, 1), sample(0, 2), sample(1, 3)])
        assert out["image"].shape == (3, 4, 6, 3)
        assert out["image"][:, 0, 0, 0].tolist() == [1, 2, 3]
        assert out["targets"].dtype == torch.float32
        assert out["targets"].tolist() == [
            [0, 10, 0, 1, 2, 3], [0, 11, 4, 5, 6, 7], [2, 10, 0, 1, 2, 3],
        ]  # fmt: skip
        assert out["mask"].shape == (3, 4, 6)
        assert out["path"] == ["1.png", "2.png", "3.png"]

    def test_gathers_boxes_ultralytics_style_in_their_own_dtypes(self) -> None:
        out = collate_detection([sample(2, 1), sample(0, 2), sample(1, 3)])
        assert out["batch_idx"].dtype == torch.int64
        assert out["batch_idx"].tolist() == [0, 0, 2]
        assert out["labels"].dtype == torch.int64
        assert out["labels"].tolist() == [10, 11, 10]
        assert out["bboxes"].dtype == torch.float32
        assert out["bboxes"].tolist() == [[0, 1, 2, 3], [4, 5, 6, 7], [0, 1, 2, 3]]
        assert list(out) == ["image", "mask", "targets", "batch_idx", "bboxes", "labels", "path"]

    def test_float64_boxes_stay_float64(self) -> None:
        boxes = np.array([[0.1, 0.2, 0.3, 0.4]])
        out = collate_detection([with_(bboxes=boxes)])
        assert out["bboxes"].dtype == torch.float64
        assert out["bboxes"].numpy().tobytes() == boxes.tobytes()

    def test_labels_stay_exact_beyond_float32(self) -> None:
        big = np.array([2**24 + 1], np.int64)
        out = collate_detection([with_(labels=big)], targets=False)
        assert out["labels"].tolist() == [2**24 + 1]
        assert "targets" not in out

    def test_targets_refuse_labels_float32_cannot_hold(self) -> None:
        batch = [sample(1), with_(labels=np.array([2**24 + 1]))]
        with pytest.raises(ValueError, match=r"batch\[1\]\['labels'\] has the label 16777217.*"
                           "targets=False"):  # fmt: skip
            collate_detection(batch)
        assert collate_detection([with_(labels=np.array([2**24]))])["targets"][0, 1] == 2**24
        with pytest.raises(ValueError, match=r"label 0\.1, which the float32"):
            collate_detection([with_(labels=np.array([0.1]))])

    def test_float_labels_float32_holds_are_kept(self) -> None:
        out = collate_detection([with_(labels=np.array([0.5], np.float32))])
        assert out["labels"].dtype == torch.float32
        assert out["targets"][0, 1].item() == 0.5

    def test_small_integer_labels_keep_their_dtype(self) -> None:
        out = collate_detection([with_(labels=np.array([3], np.uint8))] * 2)
        assert out["labels"].dtype == torch.uint8

    @pytest.mark.parametrize("empty", [[], np.zeros((0,)), np.zeros((0, 4), np.float32)])
    def test_empty_boxes_are_zero_boxes(self, empty: Any) -> None:
        out = collate_detection([sample(1), with_(bboxes=empty, labels=[])])
        assert out["bboxes"].shape == (1, 4)
        assert out["batch_idx"].tolist() == [0]

    def test_empty_values_do_not_decide_the_dtype(self) -> None:
        # The float64 of an empty array converts no value: the filled samples decide.
        out = collate_detection([with_(bboxes=np.zeros((0, 4)), labels=np.zeros(0)), sample(1)])
        assert (out["bboxes"].dtype, out["labels"].dtype) == (torch.float32, torch.int64)

    def test_a_batch_without_boxes_keeps_the_datasets_dtypes(self) -> None:
        typed = with_(bboxes=np.zeros((0, 4), np.float64), labels=np.zeros(0, np.int32))
        out = collate_detection([typed, typed])
        assert (out["bboxes"].dtype, out["labels"].dtype) == (torch.float64, torch.int32)
        assert out["targets"].shape == (0, 6)
        lists = collate_detection([with_(bboxes=[], labels=[])])
        assert (lists["bboxes"].dtype, lists["labels"].dtype) == (torch.float32, torch.int64)
        assert lists["bboxes"].shape == (0, 4)

    def test_boxes_and_labels_as_lists_and_tensors(self) -> None:
        out = collate_detection(
            [
                with_(bboxes=[[0, 0, 2, 2]], labels=[1]),
                with_(bboxes=torch.tensor([[1, 1, 3, 3]]), labels=torch.tensor([2])),
            ]
        )
        assert out["bboxes"].tolist() == [[0, 0, 2, 2], [1, 1, 3, 3]]
        assert out["bboxes"].dtype == torch.int64
        assert out["labels"].tolist() == [1, 2]

    def test_boxes_as_lists_of_whole_numbers_join_lists_with_fractions(self) -> None:
        # numpy reads [[0, 0, 2, 2]] as int64 and [[0.5, 0, 2, 2]] as float64: lists carry
        # no dtype, so the batch is not refused for it (it was, by which samples met)
        whole, fraction = with_(bboxes=[[0, 0, 2, 2]]), with_(bboxes=[(0.5, 0, 2, 2)])
        out = collate_detection([whole, fraction])
        assert out["bboxes"].dtype == torch.float64
        assert out["bboxes"].tolist() == [[0, 0, 2, 2], [0.5, 0, 2, 2]]
        assert collate_detection([whole, whole])["bboxes"].dtype == torch.float64
        typed = with_(bboxes=np.array([[1, 1, 3, 3]], np.float32))
        assert collate_detection([whole, typed])["bboxes"].dtype == torch.float32
        rows = with_(bboxes=[torch.tensor([1.0, 1, 3, 3])])  # a list of float32 rows
        assert collate_detection([rows, rows])["bboxes"].dtype == torch.float32

    def test_boxes_as_a_list_of_fractions_are_refused_beside_integer_boxes(self) -> None:
        integers = with_(bboxes=np.array([[1, 1, 3, 3]], np.int16))
        for listed in ([[0.5, 0, 2, 2]], [[0, 0, 70000, 2]]):
            with pytest.raises(ValueError, match=r"batch\[1\]\['bboxes'\] holds (float|int)64 "
                               r"values \(a list\), which the batch's int16 boxes"):  # fmt: skip
                collate_detection([integers, with_(bboxes=listed)])

    def test_images_as_tensors_and_arrays_mixed(self) -> None:
        out = collate_detection(
            [sample(1, 5), with_(image=torch.full((4, 6, 3), 7, dtype=torch.uint8))]
        )
        assert out["image"].dtype == torch.uint8
        assert out["image"][:, 0, 0, 0].tolist() == [5, 7]

    def test_read_only_and_reversed_images(self) -> None:
        frozen = np.full((4, 6, 3), 9, np.uint8)
        frozen.flags.writeable = False
        ramp = np.arange(6, dtype=np.uint8)[None, :, None].repeat(4, 0).repeat(3, 2)
        out = collate_detection([with_(image=frozen), with_(image=ramp[:, ::-1])])
        assert (out["image"][0] == 9).all()
        assert out["image"][1, 0, :, 0].tolist() == [5, 4, 3, 2, 1, 0]

    @pytest.mark.parametrize("channels_first", [False, True])
    def test_big_endian_images_and_masks_stack_with_their_values(
        self, channels_first: bool
    ) -> None:
        # PIL gives >u2 for I;16B PNGs; any position, mixed with native ones
        values = np.arange(4 * 6 * 3, dtype=np.uint16).reshape(4, 6, 3) * 700
        big = values.astype(">u2")
        batch = [with_(image=values, mask=big[..., 0]), with_(image=big, mask=values[..., 0]),
                 with_(image=torch.from_numpy(values), mask=big[..., 1])]  # fmt: skip
        out = collate_detection(batch, channels_first=channels_first)
        expected = values.transpose(2, 0, 1) if channels_first else values
        assert out["image"].dtype == torch.uint16
        assert [np.array_equal(image, expected) for image in out["image"].numpy()] == [True] * 3
        masks = np.stack([values[..., 0], values[..., 0], values[..., 1]])
        assert np.array_equal(out["mask"].numpy(), masks)

    def test_bool_masks_stay_bool_and_uint16_images_never_meet_uint8(self) -> None:
        mask = np.arange(24).reshape(4, 6) % 3 == 0
        out = collate_detection([with_(mask=mask), with_(mask=torch.from_numpy(~mask))])
        assert out["mask"].dtype == torch.bool
        assert np.array_equal(out["mask"].numpy(), np.stack([mask, ~mask]))
        batch = [sample(1), with_(image=np.zeros((4, 6, 3), np.uint16))]
        with pytest.raises(ValueError, match=r"batch\[1\]\['image'\] has dtype uint16, .*uint8"):
            collate_detection(batch)

    def test_big_endian_boxes_and_labels_mixed_with_native_ones(self) -> None:
        boxes = np.array([[1.5, 2.0, 300.25, 4.0]], np.float32)
        batch = [with_(bboxes=boxes.astype(">f4"), labels=np.array([70000], ">i8")),
                 with_(bboxes=boxes, labels=np.array([3], np.int64))]  # fmt: skip
        out = collate_detection(batch)
        assert (out["bboxes"].dtype, out["labels"].dtype) == (torch.float32, torch.int64)
        assert out["bboxes"].tolist() == boxes.tolist() * 2
        assert out["labels"].tolist() == [70000, 3]
        assert out["targets"][:, 1].tolist() == [70000, 3]

    def test_channels_first(self) -> None:
        out = collate_detection([sample(1, 7)] * 2, channels_first=True)
        assert out["image"].shape == (2, 3, 4, 6)
        assert out["image"].is_contiguous()
        assert (out["image"] == 7).all()

    @pytest.mark.parametrize(
        "dtype", ["uint8", "int8", "uint16", "int16", "int32", "float32", "float64", "int64"]
    )
    @pytest.mark.parametrize("channels", [2, 3, 7, 128, 129, 512])
    def test_channels_first_moves_every_channel_of_every_dtype(
        self, dtype: str, channels: int
    ) -> None:
        # OpenCV's split writes the planes (up to 128 channels, all OpenCV 5.1 takes); int64,
        # 129 and 512 go through numpy
        values = np.arange(5 * 6 * channels).reshape(5, 6, channels) % 251 - 100
        images = [values.astype(dtype), (values * 2).astype(dtype)]
        out = collate_detection([with_(image=image) for image in images], channels_first=True)
        expected = np.stack(images).transpose(0, 3, 1, 2)
        assert out["image"].numpy().dtype == np.dtype(dtype)
        assert np.array_equal(out["image"].numpy(), expected)

    def test_channels_first_writes_plane_by_plane(self, monkeypatch: pytest.MonkeyPatch) -> None:
        # numpy's strided copy of the transposed view is several times slower than cv2.split
        def refused(*args: Any, **kwargs: Any) -> None:
            raise AssertionError("np.copyto called for a contiguous HxWxC image")

        image = np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3)
        batch = [{**sample(1), "image": image + k} for k in range(2)]
        for item in batch:
            del item["mask"]  # an HxW mask is copied whole by numpy
        monkeypatch.setattr(np, "copyto", refused)
        out = collate_detection(batch, channels_first=True)
        monkeypatch.undo()
        expected = np.stack([image, image + 1]).transpose(0, 3, 1, 2)
        assert np.array_equal(out["image"].numpy(), expected)

    @pytest.mark.parametrize("kind", [torch.from_numpy, np.asarray])
    @pytest.mark.parametrize("shape", [(3, 48, 64), (1, 5, 5), (4, 6, 7), (2, 9, 300)])
    def test_channels_first_refuses_images_that_are_channels_first_already(
        self, kind: Any, shape: tuple[int, int, int]
    ) -> None:
        # ToTensorV2 gives CxHxW tensors: moving "channels" first made (B, W, C, H)
        image = kind(np.zeros(shape, np.uint8))
        with pytest.raises(
            ValueError,
            match=rf"batch\[0\]\['image'\] has shape {re.escape(str(shape))}: a CxHxW image "
            r"already \(as ToTensorV2 .* pass channels_first=False, which stacks CxHxW images as "
            r"they are into \(B, C, H, W\)",
        ):
            collate_detection([with_(image=image)] * 2, channels_first=True)
        assert collate_detection([with_(image=image)] * 2)["image"].shape == (2, *shape)

    @pytest.mark.parametrize("shape", [(5, 64, 48), (4, 6, 4), (3, 48, 3), (64, 48, 300)])
    def test_channels_first_moves_the_channels_of_images_that_are_not(
        self, shape: tuple[int, int, int]
    ) -> None:
        image = torch.arange(shape[0] * shape[1] * shape[2]).reshape(shape) % 200
        out = collate_detection([with_(image=image)] * 2, channels_first=True)
        assert torch.equal(out["image"][1], image.permute(2, 0, 1))

    def test_channels_first_gives_gray_images_one_channel(self) -> None:
        gray = with_(image=np.arange(24, dtype=np.uint8).reshape(4, 6))
        out = collate_detection([gray, gray], channels_first=True)
        assert out["image"].shape == (2, 1, 4, 6)
        assert out["image"][1, 0].tolist() == gray["image"].tolist()
        assert collate_detection([gray])["image"].shape == (1, 4, 6)

    def test_a_sample_may_bring_targets_when_none_are_made(self) -> None:
        out = collate_detection([with_(targets="mine")], targets=False)
        assert out["targets"] == ["mine"]

    def test_batches_from_workers_arrive_in_shared_memory(self) -> None:
        mosaic = MosaicDataset(SyntheticDetection(8, image_size=32), seed=0, output_size=32)
        loader = DataLoader(mosaic, batch_size=4, num_workers=2, collate_fn=collate_detection)
        batches = list(loader)
        assert len(batches) == 2
        for batch in batches:
            assert batch["image"].shape == (4, 32, 32, 3)
            assert batch["image"].is_shared()
            assert batch["mask"].is_shared()
            assert batch["targets"].shape[1] == 6
            assert batch["labels"].dtype == torch.int64
            assert len(batch["mosaic"]) == 4
        here = collate_detection([mosaic[i] for i in range(4)])
        for key in ("image", "mask", "targets", "batch_idx", "bboxes", "labels"):
            assert torch.equal(batches[0][key], here[key]), key

    @pytest.mark.parametrize("shared", [False, True])
    def test_per_box_tensors_leave_a_worker_by_value_up_to_a_size(
        self, shared: bool, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # by value: no file descriptor to fetch from the worker; past BY_VALUE, shared
        if shared:
            monkeypatch.setattr(rankaug.collate._write, "BY_VALUE", 0)
        mosaic = MosaicDataset(SyntheticDetection(8, image_size=32), seed=0, output_size=32)
        loader = DataLoader(mosaic, batch_size=4, num_workers=1, collate_fn=collate_detection)
        batches = list(loader)
        here = collate_detection([mosaic[i] for i in range(4)])
        for key in ("targets", "batch_idx", "bboxes", "labels"):
            assert type(batches[0][key]) is torch.Tensor, key
            assert batches[0][key].is_shared() is shared, key
            assert torch.equal(batches[0][key], here[key]), key

    def test_a_worker_batch_passes_one_file_descriptor(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        mosaic = MosaicDataset(
            SyntheticDetection(32, image_size=32, masks=False), seed=0, output_size=32
        )
        loader = DataLoader(
            mosaic, batch_size=4, num_workers=1, collate_fn=collate_detection,
            persistent_workers=True, prefetch_factor=1,
        )  # fmt: skip
        list(loader)  # the worker is forked with torch's own rebuild function
        assert fetched_descriptors(loader, monkeypatch) == (8, 8)  # the image's alone

    @given(
        st.lists(
            st.tuples(
                st.integers(0, 3), st.integers(0, 255), st.sampled_from(["float32", "float64"])
            ),
            min_size=1,
            max_size=5,
        ),
        st.sampled_from(["int64", "int32", "uint8"]),
    )
    def test_every_box_lands_with_its_sample_and_label(
        self, shapes: list[tuple[int, int, str]], label_dtype: str
    ) -> None:
        box_dtype = shapes[0][2]
        batch = [
            {
                "image": np.full((3, 5), value, np.uint8),
                "bboxes": np.arange(count * 4, dtype=box_dtype).reshape(count, 4) + value,
                "labels": (np.arange(count) * 7 + value).astype(label_dtype),
            }
            for count, value, _ in shapes
        ]
        out = collate_detection(batch)
        assert str(out["labels"].dtype) == f"torch.{label_dtype}"
        assert str(out["bboxes"].dtype) == f"torch.{box_dtype}"
        for position, item in enumerate(batch):
            mine = out["batch_idx"].numpy() == position
            assert out["bboxes"].numpy()[mine].tobytes() == item["bboxes"].tobytes()
            assert out["labels"].numpy()[mine].tobytes() == item["labels"].tobytes()
            rows = out["targets"].numpy()[mine]
            assert (rows[:, 0] == position).all()
            assert (rows[:, 1] == item["labels"]).all()
            assert (rows[:, 2:] == item["bboxes"].astype(np.float32)).all()
            assert (out["image"][position] == item["image"][0, 0]).all()

    @pytest.mark.parametrize(
        ("batch", "error", "message"),
        [
            ([], ValueError, "non-empty batch"),
            ({"image": 1}, TypeError, "sequence of samples, got a dict"),
            ([(np.zeros((2, 2)), 0)], TypeError, r"batch\[0\] is a tuple"),
            ([{"image": np.zeros((2, 2))}], ValueError, r"batch\[0\] has no 'bboxes'"),
            ([sample(1), with_(image=np.zeros((5, 6, 3), np.uint8))], ValueError,
             r"batch\[1\]\['image'\] has shape \(5, 6, 3\)"),
            ([with_(2, labels=np.array([1]))], ValueError, "2 boxes .* but 1 labels"),
            # mixed dtypes would be promoted
            ([sample(1), sample(1), with_(image=np.zeros((4, 6, 3), np.float32))], ValueError,
             r"batch\[2\]\['image'\] has dtype float32, batch\[0\]\['image'\] has uint8"),
            ([sample(1), with_(image=torch.zeros((4, 6, 3)))], ValueError,
             r"batch\[1\]\['image'\] has dtype float32"),
            ([sample(1), with_(mask=np.zeros((4, 6), np.int32))], ValueError,
             r"batch\[1\]\['mask'\] has dtype int32, batch\[0\]\['mask'\] has uint8"),
            ([sample(1), with_(mask=np.zeros((4, 5), np.uint8))], ValueError,
             r"batch\[1\]\['mask'\] has shape \(4, 5\)"),
            ([sample(1), with_(bboxes=np.zeros((1, 4)))], ValueError,
             r"batch\[1\]\['bboxes'\] has dtype float64, batch\[0\]\['bboxes'\] has float32"),
            ([sample(1), with_(labels=np.array([1], np.int32))], ValueError,
             r"batch\[1\]\['labels'\] has dtype int32, batch\[0\]\['labels'\] has int64"),
            # boxes would be reshaped
            ([with_(2, bboxes=np.arange(8.0, dtype=np.float32))], ValueError,
             r"batch\[0\]\['bboxes'\] must be an \(N, 4\) array .*got shape \(8,\)"),
            ([sample(1), with_(4, bboxes=np.zeros((4, 5), np.float32))], ValueError,
             r"batch\[1\]\['bboxes'\] .* got shape \(4, 5\)"),
            ([with_(bboxes=np.float32(3.0), labels=[])], ValueError, r"got shape \(\)"),
            ([with_(labels=np.array([[10]]))], ValueError,
             r"'labels'\] must be an \(N,\) array of labels, got shape \(1, 1\)"),
            ([with_(bboxes=[[0, 0, 1, 1], [0, 0]], labels=[1, 2])], ValueError, "rectangular"),
            # not numbers
            ([with_(labels=["cat"])], TypeError, r"batch\[0\]\['labels'\] must hold numbers"),
            ([with_(labels=np.array([True]))], TypeError, "must hold numbers"),
            ([with_(bboxes=None)], TypeError, r"'bboxes'\] is None: .*np.zeros\(\(0, 4\)"),
            ([with_(labels=None)], TypeError, r"'labels'\] is None: .*np.zeros\(\(0,\)"),
            ([with_(image=[[0, 1], [2, 3]])], TypeError, "numpy array or a torch tensor, got list"),
            ([with_(image=np.array([["a"]]))], TypeError, "must hold numbers, got dtype <U1"),
            ([with_(image=np.zeros((4, 6, 3, 1), np.uint8))], ValueError, "HxW or HxWxC"),
            ([with_(image=np.zeros((0, 6, 3), np.uint8))], ValueError, "non-empty"),
            ([with_(image=torch.zeros((4, 6, 3), device="meta"))], ValueError, "on the CPU"),
            ([with_(mask=None)], TypeError, r"'mask'\] must be a numpy array"),
            ([sample(1), with_(image=torch.zeros((4, 6, 3), dtype=torch.complex64))], TypeError,
             r"batch\[1\]\['image'\] must hold real numbers, got dtype torch.complex64"),
            ([with_(bboxes=torch.zeros((1, 4), dtype=torch.bfloat16))], TypeError,
             r"batch\[0\]\['bboxes'\] must hold numbers numpy holds, .* torch.bfloat16"),
            # keys
            ([sample(1), {k: v for k, v in sample(1).items() if k != "mask"}], ValueError,
             r"batch\[1\] has other keys than batch\[0\] \(it lacks \['mask'\]"),
            ([sample(1), with_(extra=1)], ValueError, r"has \['extra'\] besides"),
            ([with_(batch_idx=[0])], ValueError, "the key 'batch_idx'"),
            ([with_(targets=[0])], ValueError, "the key 'targets'"),
        ],
    )  # fmt: skip
    def test_bad_batches(self, batch: Any, error: type[Exception], message: str) -> None:
        with pytest.raises(error, match=message):
            collate_detection(batch)

    @pytest.mark.skipif(np.dtype(np.longdouble).itemsize <= 8, reason="longdouble is float64")
    @pytest.mark.parametrize(
        ("batch", "where"),
        [
            ([sample(1), with_(image=np.zeros((4, 6, 3), np.longdouble))], r"1\]\['image'\]"),
            ([with_(bboxes=np.zeros((1, 4), np.longdouble))], r"0\]\['bboxes'\]"),
            ([sample(1), with_(0, labels=np.zeros(0, np.longdouble))], r"1\]\['labels'\]"),
        ],
    )
    def test_long_doubles_are_refused(self, batch: Any, where: str) -> None:
        # torch has no float128 tensors: a clear error, not torch's unnamed one
        name = np.dtype(np.longdouble).name
        with pytest.raises(TypeError, match=rf"^batch\[{where} has dtype {name}, which torch"):
            collate_detection(batch)

    @pytest.mark.parametrize(
        ("options", "error", "message"),
        [
            ({"channels_first": 1}, TypeError, "channels_first must be True or False"),
            ({"targets": "yes"}, TypeError, "targets must be True or False"),
            ({"box_field": None}, TypeError, "box_field must be a key name .*, got None"),
            ({"box_field": 3}, TypeError, "box_field must be a key name other than .*, got 3 of"),
            ({"box_field": "image"}, ValueError, "box_field must be .* other than"),
            ({"label_field": "bboxes"}, ValueError, "label_field must be .* other than"),
            ({"label_field": "batch_idx"}, ValueError, "label_field"),
        ],
    )  # fmt: skip
    def test_bad_options(
        self, options: dict[str, Any], error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error, match=message):
            collate_detection([sample(1)], **options)

    def test_other_field_names(self) -> None:
        item = {"img": 0, "image": np.zeros((2, 2), np.uint8), "boxes": [[0, 0, 1, 1]], "cls": [3]}
        out = collate_detection([item], box_field="boxes", label_field="cls")
        assert out["cls"].tolist() == [3]
        assert out["boxes"].tolist() == [[0, 0, 1, 1]]
        assert out["img"] == [0]
