"""``--keys`` and ``--adapter``: ``show`` and ``audit`` on ultralytics' sample layout.

The foreign samples are :class:`tests.cli_targets.UltralyticsStyle`: the layout
ultralytics' ``YOLODataset`` returns (``img`` a CHW RGB tensor, ``cls`` an (N, 1) float
tensor, ``bboxes`` normalised xywh), of constant-colour scenes whose filled boxes sit
on whole pixels, so a sheet read through the adapter must equal, pixel for pixel, the
sheet of the same scenes in rankaug's own layout.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
import torch

import rankaug.adapters
from rankaug.cli.adapter import KeyMap, build_adapter, parse_keys
from rankaug.cli.sheet import TITLE_HEIGHT, caption, contact_sheet, render_tile, sheet_size
from rankaug.cli.target import TargetError
from rankaug.cli.views import sample_view
from tests import cli_targets
from tests.cli_helpers import T, read_png, run_main

pytestmark = [pytest.mark.ddp, pytest.mark.timeout(300)]

ULTRALYTICS_KEYS = "image=img,bboxes=bboxes,labels=cls"


class TestParseKeys:
    def test_names_to_keys_in_order(self) -> None:
        assert parse_keys(" image = img , labels=cls") == {"image": "img", "labels": "cls"}

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ("", "--keys must be NAME=KEY entries"),
            ("image=img,", "--keys must be NAME=KEY entries"),
            ("image=", "--keys must be NAME=KEY entries"),
            ("2d=img", "--keys must be NAME=KEY entries"),
            ("labels=cls", "--keys must name the image (image=KEY), got 'labels=cls'"),
            ("image=a,image=b", "--keys names 'image' twice"),
        ],
    )
    def test_malformed(self, text: str, message: str) -> None:
        with pytest.raises(ValueError, match=re.escape(message)):
            parse_keys(text)


class TestKeyMap:
    adapter = KeyMap(**parse_keys(ULTRALYTICS_KEYS))

    def test_unpack_reads_ultralytics_as_rankaug_does_its_own(self) -> None:
        sample = cli_targets.UltralyticsStyle()[3]
        data, _ = self.adapter.unpack(sample, ("image", "bboxes", "labels"))
        own = cli_targets.AlbumentationsStyle()[3]
        assert sorted(data) == ["bboxes", "image", "labels"]
        np.testing.assert_array_equal(data["image"], own["image"])  # CHW tensor -> HWC
        assert data["labels"].tolist() == [[0.0], [1.0]]

    def test_repack_restores_the_layout_and_keeps_other_keys(self) -> None:
        sample = cli_targets.UltralyticsStyle()[2]
        data, state = self.adapter.unpack(sample, ("image", "bboxes"))
        data["image"] = data["image"][:, ::-1]  # a horizontal flip
        out = self.adapter.repack(data, state)
        assert sorted(out) == sorted(sample)
        assert out["img"].dtype == torch.uint8
        assert torch.equal(out["img"], sample["img"].flip(2))
        assert out["cls"] is sample["cls"]
        assert out["im_file"] == "images/000002.jpg"

    def test_refuses_other_shapes(self) -> None:
        with pytest.raises(TypeError, match=r"\) reads dict samples, got a sample of type"):
            self.adapter.unpack((np.zeros((2, 2)), 1), ("image",))
        with pytest.raises(
            ValueError, match=re.escape("image='img' matches nothing in the sample, which has")
        ):
            self.adapter.unpack({"image": np.zeros((2, 2))}, ("image",))

    def test_is_the_public_key_map(self) -> None:
        assert KeyMap is rankaug.adapters.KeyMap
        with pytest.raises(ValueError, match="--keys must be NAME=KEY entries"):
            parse_keys("image=img,box_format=coco")


class TestBuildAdapter:
    def test_a_factory_a_class_or_an_object(self) -> None:
        made = build_adapter(T + "ultralytics_adapter", None)
        assert isinstance(made, cli_targets.UltralyticsAdapter)
        assert isinstance(build_adapter(T + "UltralyticsAdapter", None), type(made))

    def test_errors(self) -> None:
        with pytest.raises(ValueError, match="give --adapter or --keys, not both"):
            build_adapter(T + "ultralytics_adapter", "image=img")
        with pytest.raises(
            TargetError, match=re.escape(f"--adapter '{T}raising': calling it raised RuntimeError")
        ):
            build_adapter(T + "raising", None)
        with pytest.raises(TargetError, match="--adapter 'nomodule' must be 'module:factory'"):
            build_adapter("nomodule", None)


def expected_sheet(ranks: int, samples: int, workers: int, thumb: int) -> np.ndarray:
    """The sheet ``show --sampler same`` draws of the scenes in rankaug's own layout."""
    own = cli_targets.AlbumentationsStyle()
    rows = []
    for rank in range(ranks):
        tiles = []
        for index in range(samples):
            view = sample_view(own[index])
            tiles.append(
                render_tile(view, caption(rank, index % workers, index, view, None), thumb)
            )
        rows.append(tiles)
    return contact_sheet(rows, [f"rank {r}" for r in range(ranks)], "", thumb)


@pytest.mark.parametrize(
    "reader",
    [["--keys", ULTRALYTICS_KEYS], ["--adapter", T + "ultralytics_adapter"]],
    ids=["keys", "adapter"],
)
def test_show_draws_ultralytics_samples_like_its_own(tmp_path: Path, reader: list[str]) -> None:
    output = tmp_path / "sheet.png"
    code, text, err = run_main(
        "show", T + "ultralytics_style", *reader, "--box-format", "yolo", "--sampler", "same",
        "--samples", "4", "--thumb", "64", "--output", str(output), "-q",
    )  # fmt: skip
    assert code == 0, err
    height, width = sheet_size(2, 4, 64)
    assert text.strip() == f"wrote {output} ({width}x{height}: 2 rank rows, 4 columns)"
    sheet = cv2.cvtColor(read_png(output), cv2.COLOR_BGR2RGB)
    expected = expected_sheet(2, 4, 2, 64)
    # Below the title: images, boxes (colour per label), captions, pixel for pixel.
    np.testing.assert_array_equal(sheet[TITLE_HEIGHT:], expected[TITLE_HEIGHT:])


def test_show_without_keys_says_how_to_read_the_layout(tmp_path: Path) -> None:
    code, out, err = run_main(
        "show", T + "ultralytics_style", "--ranks", "1", "--workers", "0", "--sampler", "same",
        "--output", str(tmp_path / "x.png"), "-q",
    )  # fmt: skip
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith(
        f"rankaug show: error: {T}ultralytics_style: reading dataset[0] failed at index 0 "
        "(rank 0, worker 0, epoch 0): ValueError: a dict sample needs an 'image' key"
    )
    assert err.rstrip().endswith(
        "for samples of another layout pass --keys NAME=KEY,... (ultralytics': --keys "
        "image=img,bboxes=bboxes,labels=cls --box-format yolo) or --adapter module:factory"
    )
    assert not (tmp_path / "x.png").exists()


@pytest.fixture(scope="module")
def keyed_audit(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, dict[str, Any]]:
    report = tmp_path_factory.mktemp("keyed") / "report.json"
    code, text, _ = run_main(
        "audit", T + "ultralytics_stamped", T + "ultralytics_jittered", "--keys",
        ULTRALYTICS_KEYS, "--no-rerun", "--output", str(report), "-q",
    )  # fmt: skip
    return code, text, json.loads(report.read_text())


class TestAuditWithKeys:
    def test_fingerprints_only_what_the_keys_read(self, keyed_audit: Any) -> None:
        code, _, report = keyed_audit
        assert code == 1
        assert report["config"]["keys"] == ULTRALYTICS_KEYS
        stamped, jittered = report["reports"]
        # The load time is outside the keys: the scenes themselves never change.
        assert stamped["failed"] == []
        assert stamped["verdicts"][2]["summary"].startswith("no randomness detected")
        # Brightness from global random, seeded alike on both ranks: the seeds' bug.
        assert jittered["failed"] == ["ranks"]
        assert jittered["samples"] == 2 * 2 * 2 * 16  # epochs x ranks x workers x positions

    def test_the_report_says_so(self, keyed_audit: Any) -> None:
        _, text, _ = keyed_audit
        line = f"  fingerprints what --keys {ULTRALYTICS_KEYS} reads of every sample"
        assert text.count(line) == 2  # one per target
        assert f"verdict on {T}ultralytics_jittered: FAIL (ranks)" in text


HF_KEYS = "image=image,bboxes=objects.bbox,labels=objects.category"


def hf_scene(index: int) -> dict[str, Any]:
    """A constant-colour scene with one filled box, in Hugging Face's nested layout."""
    image = np.full((32, 48, 3), 40, np.uint8)
    x, y = 4 + 4 * index, 6 + 2 * index
    image[y : y + 10, x : x + 12] = (200, 90, 30)
    objects = {"bbox": [[float(x), float(y), 12.0, 10.0]], "category": [index % 3], "id": [7]}
    return {"image": image, "image_id": index, "objects": objects}


def hf_scenes() -> list[dict[str, Any]]:
    """``show``'s factory: eight nested scenes."""
    return [hf_scene(i) for i in range(8)]


class TestNestedKeys:
    def test_show_draws_nested_boxes_like_its_own(self, tmp_path: Path) -> None:
        output = tmp_path / "sheet.png"
        code, _, err = run_main(
            "show", "tests.test_cli_adapter:hf_scenes", "--keys", HF_KEYS, "--box-format",
            "coco", "--sampler", "same", "--samples", "4", "--thumb", "64", "--output",
            str(output), "-q",
        )  # fmt: skip
        assert code == 0, err
        sheet = cv2.cvtColor(read_png(output), cv2.COLOR_BGR2RGB)
        rows = []
        for rank in range(2):
            tiles = []
            for index in range(4):
                scene = hf_scene(index)
                (x, y, w, h), = scene["objects"]["bbox"]  # fmt: skip
                own = {"image": scene["image"], "bboxes": [[x, y, x + w, y + h]],
                       "labels": scene["objects"]["category"]}  # fmt: skip
                view = sample_view(own)
                tiles.append(render_tile(view, caption(rank, index % 2, index, view, None), 64))
            rows.append(tiles)
        expected = contact_sheet(rows, ["rank 0", "rank 1"], "", 64)
        np.testing.assert_array_equal(sheet[TITLE_HEIGHT:], expected[TITLE_HEIGHT:])

    def test_a_key_that_matches_nothing_is_an_error_naming_the_keys(self, tmp_path: Path) -> None:
        code, out, err = run_main(
            "show", "tests.test_cli_adapter:hf_scenes", "--keys",
            "image=image,bboxes=nope,labels=alsonope", "--ranks", "1", "--workers", "0",
            "--output", str(tmp_path / "x.png"), "-q",
        )  # fmt: skip
        assert code == 2
        assert out == ""
        assert "bboxes='nope' matches nothing in the sample, which has keys [image, " in err
        assert "objects (bbox, category, id)]" in err
        assert not (tmp_path / "x.png").exists()
