"""``rankaug.datasets._loading``: how a folder dataset loads an image, for
:class:`~rankaug.datasets.YoloFolder` and :class:`~rankaug.datasets.CocoDetection` alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import pytest
import torch

from rankaug.datasets import CocoDetection, SyntheticDetection, YoloFolder, write_yolo_folder
from tests.datasets.helpers import write_coco

BAD_LOADS: list[tuple[str, Any, type[Exception], str]] = [
    ("image_size", "x", TypeError, r"^image_size must be an integer >= 1, got 'x' of type str"),
    ("image_size", 0, ValueError, r"^image_size must be an integer >= 1, got 0"),
    ("reduced_decode", 1, TypeError, r"^reduced_decode must be True or False, got 1"),
    ("interpolation", "cubic", ValueError, r"^interpolation must be one of 'auto', 'linear'"),
    ("as_tuple", "yes", TypeError, r"^as_tuple must be True or False, got 'yes'"),
    ("tensors", True, ValueError, r"^tensors=True needs as_tuple=True"),
]
"""How an image is loaded, assigned wrong: ``(name, value, error, match)``, each refused as
the constructor refuses it."""


class Folder(NamedTuple):
    """A folder dataset's class and the arguments that read one written for the test."""

    kind: type[Any]
    args: tuple[Any, ...]

    def make(self, **options: Any) -> Any:
        return self.kind(*self.args, **options)


@pytest.fixture(params=["YoloFolder", "CocoDetection"])
def folder(request: pytest.FixtureRequest, tmp_path: Path) -> Folder:
    synthetic = SyntheticDetection(4, image_size=(40, 56), seed=2)
    if request.param == "YoloFolder":
        return Folder(YoloFolder, (write_yolo_folder(synthetic, tmp_path / "ds"),))
    annotation, _ = write_coco(synthetic, tmp_path / "ds")
    return Folder(CocoDetection, (annotation, annotation.parent / "images"))


class TestLoadSettings:
    @pytest.mark.parametrize(("name", "value", "error", "match"), BAD_LOADS)
    def test_how_an_image_is_loaded_is_checked_when_assigned(
        self, folder: Folder, name: str, value: Any, error: type[Exception], match: str
    ) -> None:
        # before: ds.image_size = "x" failed at the next read with a bare "unsupported
        # operand" TypeError, ds.interpolation = "cubic" was accepted
        ds = folder.make()
        before = getattr(ds, name)
        with pytest.raises(error, match=match):
            setattr(ds, name, value)
        assert getattr(ds, name) == before
        assert ds[0]["image"].shape == ds[1]["image"].shape

    def test_how_an_image_is_loaded_takes_effect_when_assigned(self, folder: Folder) -> None:
        ds = folder.make()
        ds.image_size, ds.interpolation, ds.reduced_decode = 24, "linear", False
        assert (ds.image_size, ds.interpolation, ds.reduced_decode) == (24, "linear", False)
        assert max(ds[0]["image"].shape[:2]) == 24
        ds.as_tuple = True
        ds.tensors = True
        image, target = ds[0]
        assert isinstance(image, torch.Tensor)
        assert isinstance(target["boxes"], torch.Tensor)
        assert max(image.shape[1:]) == 24
        assert "image_size=24" in repr(ds)
        assert "interpolation='linear'" in repr(ds)
