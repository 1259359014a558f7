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
    """A folder dataset's class and the paths, by argument name, that read one written for
    the test (relative to the folder the test runs in)."""

    kind: type[Any]
    paths: dict[str, str]

    def make(self, **options: Any) -> Any:
        return self.kind(*self.paths.values(), **options)

    def subclass(self, before: dict[str, Any]) -> type[Any]:
        """A subclass that sets ``before`` as attributes, then calls the constructor."""

        class Mine(self.kind):  # type: ignore[name-defined,misc]
            def __init__(self, *args: Any, **options: Any) -> None:
                for name, value in before.items():
                    setattr(self, name, value)
                super().__init__(*args, **options)

        return Mine


@pytest.fixture(params=["YoloFolder", "CocoDetection"])
def folder(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Folder:
    synthetic = SyntheticDetection(4, image_size=(40, 56), seed=2)
    monkeypatch.chdir(tmp_path)
    if request.param == "YoloFolder":
        write_yolo_folder(synthetic, tmp_path / "ds")
        return Folder(YoloFolder, {"root": "ds"})
    write_coco(synthetic, tmp_path / "ds")
    return Folder(CocoDetection, {"annotation_file": "ds/instances.json",
                                  "image_root": "ds/images"})  # fmt: skip


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

    @pytest.mark.parametrize("spelled", [str, Path, lambda path: Path(path).resolve()])
    def test_a_subclass_may_set_its_settings_before_the_constructor(
        self, folder: Folder, spelled: Any
    ) -> None:
        # before: refused (YoloFolder.root cannot be assigned: it is fixed, raised by the
        # constructor's own assignment), or, for as_tuple and tensors, an AttributeError
        # for a box_format not set yet
        loads = {"box_format": "pascal_voc", "image_size": 24, "interpolation": "linear",
                 "reduced_decode": False, "as_tuple": True, "tensors": True}  # fmt: skip
        paths = {name: spelled(path) for name, path in folder.paths.items()}
        mine = folder.subclass({**paths, **loads})
        ds = mine(*paths.values(), **loads)
        image, _ = ds[0]
        assert isinstance(image, torch.Tensor)
        assert max(image.shape[1:]) == 24
        assert ds[0][1]["boxes"].tolist() == folder.make(**loads)[0][1]["boxes"].tolist()
        assert all(getattr(ds, name) == Path(path).resolve() for name, path in paths.items())
        assert repr(ds).partition("(")[2] == repr(folder.make(**loads)).partition("(")[2]
        first = next(iter(paths))  # what the labels were read from: fixed once made
        with pytest.raises(AttributeError, match=rf"^Mine\.{first} cannot be assigned: it is"):
            setattr(ds, first, paths[first])
        with pytest.raises(AttributeError, match=r"^Mine\.box_format cannot be assigned: it is"):
            ds.box_format = "coco"
        ds.image_size = 32  # how an image is loaded: assigned, and put to use
        assert max(ds[0][0].shape[1:]) == 32

    @pytest.mark.parametrize(("name", "value", "given"), [
        ("image_size", 24, None), ("as_tuple", True, False), ("interpolation", "linear", "auto"),
        ("reduced_decode", False, True), ("box_format", "coco", "pascal_voc"),
    ])  # fmt: skip
    def test_a_setting_set_before_the_constructor_to_another_value_is_refused(
        self, folder: Folder, name: str, value: Any, given: Any
    ) -> None:
        # the constructor sets each again, to its argument: the subclass's value would be
        # replaced without a word (image_size set to 24 and the images read at full size)
        mine = folder.subclass({name: value})
        with pytest.raises(AttributeError, match=(
            rf"^Mine\.{name} cannot be assigned: it was set before the constructor, which "
            rf"sets {name} itself, to another value \(set: {value!r}; the constructor's: "
            rf"{given!r}\)"
        )):  # fmt: skip
            mine(*folder.paths.values())
        assert getattr(mine(*folder.paths.values(), **{name: value}), name) == value

    def test_another_path_set_before_the_constructor_is_refused(
        self, folder: Folder, tmp_path: Path
    ) -> None:
        name = next(iter(folder.paths))
        mine = folder.subclass({name: tmp_path / "elsewhere"})
        with pytest.raises(
            AttributeError, match=rf"^Mine\.{name} cannot be assigned: it was set before"
        ):
            mine(*folder.paths.values())
