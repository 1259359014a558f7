from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from rankaug.datasets._pose import POSE_LINES, declared_pose, pose_form, sure_pose, warn_pose_form
from rankaug.errors import RankaugWarning

BOX = [0.5, 0.5, 0.4, 0.4]  # x 0.3 to 0.7, y 0.3 to 0.7


class TestDeclaredPose:
    def test_a_top_level_kpt_shape_in_a_yaml_of_the_root(self, tmp_path: Path) -> None:
        (tmp_path / "a.yml").write_text("names:\n  0: person\n")
        (tmp_path / "b.yaml").write_text("nc: 1\nkpt_shape: [17, 3]  # COCO\n")
        found = declared_pose(tmp_path)
        assert found == (tmp_path / "b.yaml", "[17, 3]")

    def test_nested_keys_other_files_and_folders_below_are_no_sign(self, tmp_path: Path) -> None:
        (tmp_path / "data.yaml").write_text("model:\n  kpt_shape: [17, 3]\n")
        (tmp_path / "kpt.txt").write_text("kpt_shape: [17, 3]\n")
        (tmp_path / "sub").mkdir()
        (tmp_path / "sub" / "data.yaml").write_text("kpt_shape: [17, 3]\n")
        assert declared_pose(tmp_path) is None

    @pytest.mark.parametrize("value", ["null", "~", "Null", "NULL", "null  # pose only"])
    def test_a_null_kpt_shape_declares_no_pose(self, tmp_path: Path, value: str) -> None:
        # a data YAML written from a dict with kpt_shape=None: it was refused as pose
        (tmp_path / "data.yaml").write_text(f"nc: 1\nkpt_shape: {value}\n")
        assert declared_pose(tmp_path) is None

    def test_a_block_list_kpt_shape_is_declared(self, tmp_path: Path) -> None:
        (tmp_path / "data.yaml").write_text("kpt_shape:\n  - 17\n  - 3\n")
        assert declared_pose(tmp_path) == (tmp_path / "data.yaml", "")


def _roboflow(tmp_path: Path, yaml: str) -> tuple[Path, Path]:
    """Roboflow's export: ``data.yaml`` beside ``train/images`` (the root read: ``train``)."""
    root = tmp_path / "ds" / "train"
    (root / "images").mkdir(parents=True)
    (tmp_path / "ds" / "data.yaml").write_text(yaml)
    return root, root / "images"


class TestDeclaredPoseInTheParent:
    @pytest.mark.parametrize(
        "train",
        ["../train/images", "train/images", "'../train/images'  # Roboflow",
         "[../valid/images, ../train/images]", "../train", "\n  - ../valid/images\n  - ../train",
         "\n- ../valid/images\n- ../train/images"],  # the last as PyYAML's safe_dump writes
    )  # fmt: skip
    def test_roboflows_data_yaml_beside_the_split_folders(self, tmp_path: Path, train: str) -> None:
        yaml = f"train: {train}\nval: ../valid/images\n\nkpt_shape: [17, 3]\nnc: 1\n"
        root, images = _roboflow(tmp_path, yaml)
        assert declared_pose(root, images) == (tmp_path / "ds" / "data.yaml", "[17, 3]")
        assert declared_pose(root) is None  # the images folder not known: the root alone

    def test_a_linked_root_is_looked_for_beside_its_link(self, tmp_path: Path) -> None:
        # ds/train a link to a folder stored elsewhere; Roboflow's data.yaml beside the link
        stored = tmp_path / "store" / "train"
        (stored / "images").mkdir(parents=True)
        (tmp_path / "ds").mkdir()
        root = tmp_path / "ds" / "train"
        root.symlink_to(stored, target_is_directory=True)
        (tmp_path / "ds" / "data.yaml").write_text("train: ../train/images\nkpt_shape: [17, 3]\n")
        found = declared_pose(root, stored / "images")
        assert found == (tmp_path / "ds" / "data.yaml", "[17, 3]")
        (tmp_path / "ds" / "data.yaml").unlink()  # the one beside the stored folder, too
        (tmp_path / "store" / "data.yaml").write_text("train: train/images\nkpt_shape: [4, 2]\n")
        assert declared_pose(root, stored / "images") == (
            tmp_path / "store" / "data.yaml",
            "[4, 2]",
        )

    @pytest.mark.parametrize("split", ["val", "test"])
    def test_each_split_named(self, tmp_path: Path, split: str) -> None:
        root, images = _roboflow(tmp_path, f"{split}: ../train/images\nkpt_shape: [4, 2]\n")
        assert declared_pose(root, images) == (tmp_path / "ds" / "data.yaml", "[4, 2]")

    def test_an_ultralytics_yaml_beside_the_dataset_folder(self, tmp_path: Path) -> None:
        root = tmp_path / "coco8-pose"
        (root / "images" / "train").mkdir(parents=True)
        yaml = f"path: {root}\ntrain: images/train\nval: images/val\nkpt_shape: [17, 3]\n"
        (tmp_path / "coco8-pose.yaml").write_text(yaml)
        found = declared_pose(root, root / "images" / "train")
        assert found == (tmp_path / "coco8-pose.yaml", "[17, 3]")
        (tmp_path / "coco8-pose.yaml").write_text(yaml.replace(str(root), "coco8-pose"))
        assert declared_pose(root, root / "images" / "train") == found  # path: relative

    @pytest.mark.parametrize(
        "yaml",
        [
            "train: ../other/images\nkpt_shape: [17, 3]\n",  # another dataset's
            "kpt_shape: [17, 3]\n",  # names no split
            "train: ../train/images\nkpt_shape: null\n",
            "train: ../train/images\nnc: 1\n",
        ],
    )
    def test_a_yaml_of_the_parent_naming_no_split_of_it_is_no_sign(
        self, tmp_path: Path, yaml: str
    ) -> None:
        root, images = _roboflow(tmp_path, yaml)
        assert declared_pose(root, images) is None

    def test_the_roots_own_yaml_first(self, tmp_path: Path) -> None:
        root, images = _roboflow(tmp_path, "train: ../train/images\nkpt_shape: [17, 3]\n")
        (root / "own.yaml").write_text("kpt_shape: [5, 2]\n")
        assert declared_pose(root, images) == (root / "own.yaml", "[5, 2]")


class TestPoseForm:
    def test_keypoints_with_a_visibility_inside_the_box(self) -> None:
        assert pose_form([*BOX, 0.4, 0.4, 2.0, 0.0, 0.0, 0.0], 1e-3) == 3

    def test_keypoints_without_a_visibility_inside_the_box(self) -> None:
        assert pose_form([*BOX, 0.4, 0.4, 0.0, 0.0, 0.6, 0.69], 1e-3) == 2

    @pytest.mark.parametrize(
        "values",
        [
            [*BOX, 0.8, 0.4],  # a keypoint outside the box
            [*BOX, 0.0, 0.0, 0.0, 0.0],  # none labelled
            [0.1, 0.5, 0.4, 0.4, 0.2, 0.2],  # the box reaches out of the image
            [0.5, 0.5, 0.0, 0.4, 0.5, 0.5],  # a box of no width
            [*BOX],  # no keypoint
            [0.1, 0.1, 0.9, 0.1, 0.5, 0.9],  # a triangle
        ],
    )
    def test_what_is_no_pose_line(self, values: list[float]) -> None:
        assert pose_form(values, 1e-3) is None

    def test_a_visibility_other_than_0_1_2_leaves_the_xy_reading(self) -> None:
        # x y v with v = 0.5 is no visibility: read as x y pairs, (0.5, 0.5) is inside
        assert pose_form([*BOX, 0.4, 0.4, 0.5, 0.5, 0.6, 0.6], 1e-3) == 2


class TestSurePose:
    def test_a_visibility_column_or_an_unlabelled_0_0_keypoint(self) -> None:
        assert sure_pose([*BOX, 0.4, 0.4, 1.0], 3)
        assert sure_pose([*BOX, 0.4, 0.4, 0.0, 0.0], 2)

    @pytest.mark.parametrize(
        "values",
        [
            [0.4, 0.4, 0.6, 0.4, 0.6, 0.6, 0.4, 0.6],  # a square's corners
            [0.5, 0.4, 0.6, 0.6, 0.4, 0.6],  # a triangle
        ],
    )
    def test_x_y_keypoints_alone_are_not_sure(self, values: list[float]) -> None:
        assert pose_form(values, 1e-3) == 2  # they read as pose lines
        assert not sure_pose(values, 2)


class TestWarnPoseForm:
    def test_warns_when_every_file_of_lines_reads_as_pose_of_one_length(self) -> None:
        paths = [Path("a.txt"), Path("b.txt"), Path("c.txt")]
        with pytest.warns(RankaugWarning, match=r"every label line has 11 fields .*b\.txt"):
            warn_pose_form([0, 11, 11], paths, sure=True, lines=2)

    def test_without_a_sure_line_warns_from_pose_lines_lines(self) -> None:
        paths = [Path("a.txt"), Path("b.txt")]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            warn_pose_form([9, 9], paths, sure=False, lines=POSE_LINES - 1)
        assert caught == []
        with pytest.warns(RankaugWarning, match="every label line has 9 fields"):
            warn_pose_form([9, 9], paths, sure=False, lines=POSE_LINES)

    @pytest.mark.parametrize("poses", [[0, 0], [11, -1], [11, 9], [-1, -1]])
    def test_quiet_otherwise(self, poses: list[int]) -> None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            warn_pose_form(poses, [Path("a.txt"), Path("b.txt")], sure=True, lines=100)
        assert caught == []
