"""Read detection datasets in the YOLO folder layout (written by ``yolo_writer``).

The layout::

    root/images/<any/sub/dirs>/name.jpg
    root/labels/<any/sub/dirs>/name.txt     one line per object: class cx cy w h

with ``cx cy w h`` the box centre and size divided by the image width and height, or,
for instance segmentation (YOLO-seg, ``segments=True``), ``class x1 y1 ... xk yk``: a
polygon of ``k >= 3`` points divided by the image width and height. An image without a
label file has no objects (YOLO's convention). The label files are parsed by
:mod:`rankaug.datasets._yolo_labels`.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from torch.utils.data import Dataset

from rankaug import checks
from rankaug._fixed import FixedSettings
from rankaug.boxes import (
    BoxFormat,
    to_xyxy,
)
from rankaug.datasets._file_stat import FileStat
from rankaug.datasets._image_io import Interpolation, read_rgb, read_rgb_resized
from rankaug.datasets._loading import LoadSettings
from rankaug.datasets._pose import refuse_declared_pose, warn_pose_form
from rankaug.datasets._sample import build_sample
from rankaug.datasets._walk import walk_files
from rankaug.datasets._yolo_labels import read_label_file, warn_duplicates
from rankaug.errors import RankaugWarning

__all__ = ["YoloFolder"]

_DEFAULT_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")


class YoloFolder(LoadSettings, FixedSettings, Dataset[Any]):
    """A YOLO detection dataset on disk (``images/`` and ``labels/`` folders).

    Images are found recursively under ``root / image_dir`` (extensions matched
    case-insensitively; symbolic links to folders are followed, a link back to a
    folder it lies in is warned about and not entered; hidden files and folders, whose
    names start with a dot, are skipped as ultralytics skips them: macOS's
    ``._name.jpg`` are not images) and sorted by relative path;
    the label file of ``images/a/b.jpg`` is ``labels/a/b.txt``. All label files are read and checked
    when the dataset is built, so a bad line fails at once, not hours into
    training; images are decoded (OpenCV, returned RGB) on access.

    Label files are UTF-8 (a byte-order mark is skipped). Lines hold ``class cx cy w h``:
    a class read exactly as an integer from 0 to 2**63 - 1 (``3``, or ``3.0``; never
    rounded through a float) and four finite numbers. Box edges (``cx - w/2`` etc.) may lie outside
    ``[0, 1]`` by at most ``tolerance`` (float rounding in label writers); those are
    clipped to the image, anything further out is an error. Zero-size boxes are kept
    (filter them with :func:`rankaug.boxes.keep_mask`). Blank lines are skipped, and so
    is a line that repeats an earlier one of its file (as ultralytics; one warning).
    Segment (polygon) lines are refused unless ``segments=True``, and so are pose
    (keypoint) lines, which rankaug does not read. With ``segments=True`` a pose line
    ``class cx cy w h x1 y1 [v1] ...`` may have a polygon line's form (ultralytics tells
    them apart by the ``kpt_shape`` of the data YAML): a data YAML that declares
    ``kpt_shape`` (in ``root``, or in its parent naming the images folder: Roboflow's
    ``data.yaml`` beside ``train/images``) is refused, so is a line that reads as a pose
    line and not as a polygon (a visibility of 2), and a dataset whose every line reads
    as a pose line (its first four numbers a box, the keypoints after them inside it),
    all of one length, is warned about where one line surely is a pose line (a
    visibility column, an unlabelled ``0 0`` keypoint) or 8 lines at least read so (many
    small polygons read as ``x y`` pose lines: :mod:`rankaug.datasets._pose`); never
    pass ``segments=True`` for pose labels.

    Samples are those of :class:`~rankaug.datasets.SyntheticDetection`:
    ``{"image": HxWx3 uint8 RGB, "bboxes": float32 (N, 4) in box_format,
    "labels": int64 (N,)}``, or ``(image, {"boxes", "labels"})`` with ``as_tuple``.

    Instance polygons: with ``segments=True`` every label line is a YOLO-seg polygon
    ``class x1 y1 x2 y2 ... xk yk`` (``k >= 3`` points, normalised like boxes; points
    within ``tolerance`` of ``[0, 1]`` are clipped to it, further out is an error). A box
    line in such a dataset is an error (ultralytics silently drops every polygon when
    some lines are boxes; rankaug refuses). Each sample then also has ``"segments"``
    (``target["segments"]`` with ``as_tuple``): a list of ``N`` float32 ``(K_i, 2)``
    arrays, one per box and in the same order, of PIXEL ``(x, y)`` points of the image
    as returned (``x`` from 0 to its width, like ``pascal_voc`` boxes), whatever
    ``box_format`` is; with ``tensors=True`` a list of float32 tensors. Each box is its
    polygon's bounds (converted to ``box_format``), so in ``pascal_voc`` they are equal.

    Resize on load: with ``image_size``, every image comes back with its long side
    ``image_size`` and its aspect ratio kept (each side ``min(ceil(side * r),
    image_size)`` with ``r = image_size / max(height, width)``, as ultralytics'
    ``load_image``; smaller images grow), and the boxes are scaled with it, by
    ``new_width / width`` and ``new_height / height``. A JPEG that shrinks by 2x or more
    is decoded at 1/2, 1/4 or 1/8 size by the JPEG decoder, then resized to the exact
    size: much faster, but its pixels differ slightly (a few levels) from a full decode
    and resize; ``reduced_decode=False`` decodes in full. The final resize is
    ``INTER_LINEAR`` for changes under 2x and ``INTER_AREA`` for shrinks of 2x or more;
    ``interpolation="linear"`` makes it ``INTER_LINEAR`` always: with
    ``reduced_decode=False``, ultralytics' ``load_image`` pixel for pixel.

    Args:
        root: The dataset folder (kept resolved: absolute, links followed).
        box_format: Format of the dict sample's ``"bboxes"``.
        image_dir: Image folder, relative to ``root``.
        label_dir: Label folder, relative to ``root``.
        extensions: Image file extensions to include (default ``.bmp``, ``.jpeg``,
            ``.jpg``, ``.png``, ``.tif``, ``.tiff``, ``.webp``; OpenCV decodes them all).
        tolerance: How far (normalised) box edges or polygon points may stick out of
            ``[0, 1]``.
        segments: Read YOLO-seg polygon labels and add ``"segments"`` to each sample.
        as_tuple: Give torchvision-style ``(image, target)`` pairs.
        tensors: With ``as_tuple``, give torch tensors.
        image_size: Resize on load to this long side (``>= 1``); ``None`` keeps every
            image at its own size.
        reduced_decode: With ``image_size``, let the JPEG decoder shrink by 2, 4 or 8
            where the target size allows (pixels differ slightly from a full decode).
        interpolation: With ``image_size``, ``"auto"`` (``INTER_AREA`` for shrinks of
            2x or more, else ``INTER_LINEAR``) or ``"linear"`` (``INTER_LINEAR`` for
            every resize, as ultralytics' ``load_image``).

    Attributes:
        image_paths: The image files, in dataset order.
        label_paths: The label file of each image (which may not exist). They,
            ``root``, ``image_dir``, ``label_dir``, ``extensions``, ``segments`` and
            ``tolerance`` are fixed when the labels are read, and ``box_format`` when the
            dataset is made (the wrappers read the format it declares once): assigning
            one raises an ``AttributeError``. How an image is loaded (``image_size``,
            ``reduced_decode``, ``interpolation``, ``as_tuple``, ``tensors``) may be
            assigned: checked as when the dataset is made. A subclass may set any of
            them before calling the constructor, to the value it gives the constructor.

    Raises:
        TypeError: If ``root``, ``image_dir`` or ``label_dir`` is not a path (a ``str`` or
            an ``os.PathLike``), or another argument has the wrong type.
        FileNotFoundError: If ``root / image_dir`` or ``root / label_dir`` is missing.
        ValueError: If no image is found, a name with an image extension is not a
            readable file (a dangling link), two images share a label file (``a.jpg`` and
            ``a.png``), or a label file has a bad line (the message names the file and
            line number), or with ``segments=True`` a YAML in ``root`` declares
            ``kpt_shape`` (pose labels) or a line reads as a pose line only.

    Warns:
        RankaugWarning: If label files belong to no image read (an image of another
            extension, a misnamed file): their objects would be lost silently.
        RankaugWarning: If with ``segments=True`` every label line reads as a YOLO pose
            line, all of one length, one surely (a visibility column, an unlabelled
            ``0 0`` keypoint) or 8 lines at least.

    >>> import tempfile
    >>> from rankaug.datasets import SyntheticDetection, write_yolo_folder
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     root = write_yolo_folder(SyntheticDetection(3, image_size=32), tmp)
    ...     ds = YoloFolder(root)
    ...     print(len(ds), ds[0]["image"].shape, ds.image_paths[0].name)
    ...     print(YoloFolder(root, image_size=64)[0]["image"].shape)
    3 (32, 32, 3) 000000.png
    (64, 64, 3)

    Polygons (here a triangle in a 20x10 image, read at twice the size):

    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     triangle = np.array([[2.0, 1.0], [18.0, 1.0], [10.0, 9.0]], np.float32)
    ...     sample = {"image": np.zeros((10, 20, 3), np.uint8), "labels": np.array([0]),
    ...               "bboxes": np.array([[2.0, 1.0, 18.0, 9.0]]), "segments": [triangle]}
    ...     seg = YoloFolder(write_yolo_folder([sample], tmp), segments=True, image_size=40)[0]
    >>> seg["segments"]
    [array([[ 4.,  2.],
           [36.,  2.],
           [20., 18.]], dtype=float32)]
    >>> seg["bboxes"]
    array([[ 4.,  2., 36., 18.]], dtype=float32)
    """

    fixed_settings = frozenset({"root", "image_dir", "label_dir", "extensions", "segments",
                                "tolerance", "image_paths", "label_paths",
                                "box_format"})  # fmt: skip
    made_with = "_label_stats"  # set last: a subclass may have set root and the others before

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        box_format: BoxFormat = "pascal_voc",
        image_dir: str | os.PathLike[str] = "images",
        label_dir: str | os.PathLike[str] = "labels",
        extensions: Sequence[str] = _DEFAULT_EXTENSIONS,
        tolerance: float = 1e-3,
        segments: bool = False,
        as_tuple: bool = False,
        tensors: bool = False,
        image_size: int | None = None,
        reduced_decode: bool = True,
        interpolation: Interpolation = "auto",
    ) -> None:
        # checked (LoadSettings), as when assigned
        self.set_loading(box_format, as_tuple, tensors, image_size, reduced_decode, interpolation)
        self.segments = checks.boolean(segments, "segments")
        suffixes = _check_extensions(extensions)
        root = checks.path(root, "root")
        image_dir = checks.path(image_dir, "image_dir")
        label_dir = checks.path(label_dir, "label_dir")
        self.image_dir, self.label_dir = image_dir, label_dir
        self.extensions = tuple(sorted(suffixes))
        if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)):
            raise TypeError(f"tolerance must be a real number, got {tolerance!r}")
        if not 0.0 <= tolerance < 0.5:
            raise ValueError(f"tolerance must be in [0, 0.5), got {tolerance!r}")
        self.root = Path(root).resolve()  # one folder, one name (and repr, the cache key)
        self.tolerance = float(tolerance)
        images = self.root / image_dir
        labels = self.root / label_dir
        for folder, arg in ((images, "image_dir"), (labels, "label_dir")):
            if not folder.is_dir():
                raise FileNotFoundError(
                    f"{arg}: folder {folder} does not exist (a YOLO dataset has "
                    f"{self.root}/{image_dir} and {self.root}/{label_dir}; make an empty "
                    "label folder if no image has objects)"
                )
        self.image_paths: tuple[Path, ...] = tuple(
            sorted(
                (Path(path) for path in walk_files(images, suffixes, what="image")),
                key=lambda path: path.relative_to(images).as_posix(),
            )
        )
        if not self.image_paths:
            raise ValueError(
                f"no images with extensions {', '.join(sorted(suffixes))} found under {images}"
            )
        self.label_paths: tuple[Path, ...] = tuple(
            (labels / path.relative_to(images)).with_suffix(".txt") for path in self.image_paths
        )
        _check_pairs(self.image_paths, self.label_paths, labels, suffixes)
        if self.segments:
            refuse_declared_pose(Path(os.path.abspath(root)), images)  # a link's own parent
        parsed = [
            read_label_file(path, self.tolerance, segments=self.segments)
            for path in self.label_paths
        ]
        warn_duplicates(self.label_paths, parsed)
        if self.segments:
            warn_pose_form(
                [labels.pose for labels in parsed],
                self.label_paths,
                sure=any(labels.pose_sure for labels in parsed),
                lines=sum(len(labels.classes) for labels in parsed),
            )
        self._labels = [labels.classes for labels in parsed]
        self._boxes = [labels.boxes for labels in parsed]  # normalised xyxy, float64
        # normalised (K, 2) float64 points per object, or None without segments
        self._polygons = [labels.polygons for labels in parsed]
        self._label_stats: tuple[FileStat, ...] = tuple(labels.stat for labels in parsed)

    def __len__(self) -> int:
        """Return the number of images."""
        return len(self.image_paths)

    def __getitem__(self, index: int) -> Any:
        """Return sample ``index`` (negative indices count from the end).

        Raises:
            TypeError: If ``index`` is not an integer.
            IndexError: If ``index`` is out of range.
            ValueError: If the image file cannot be decoded.
        """
        position = checks.index(index, len(self.image_paths))
        path = self.image_paths[position]
        if self.image_size is None:
            image = read_rgb(path)
        else:
            image, _ = read_rgb_resized(
                path,
                self.image_size,
                reduced_decode=self.reduced_decode,
                interpolation=self.interpolation,
            )
        height, width = image.shape[0], image.shape[1]
        # normalised boxes times the new size: the resize's own scale in each axis
        xyxy = to_xyxy(self._boxes[position], "albumentations", (height, width))
        polygons = self._polygons[position]
        segments = None
        if polygons is not None:  # the same scale as the boxes, so they stay the bounds
            scale = np.array([width, height], dtype=np.float64)
            segments = [(points * scale).astype(np.float32) for points in polygons]
        return build_sample(
            image,
            xyxy,
            self._labels[position].copy(),
            box_format=self.box_format,
            as_tuple=self.as_tuple,
            tensors=self.tensors,
            segments=segments,
        )

    def source_files(self) -> tuple[Path, ...]:
        """The files the samples come from: every image, then every label file.

        Label files that do not exist (images without objects) are listed too, so
        that one appearing changes what :class:`~rankaug.CachedDataset` sees.

        >>> import tempfile
        >>> from rankaug.datasets import SyntheticDetection, write_yolo_folder
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     ds = YoloFolder(write_yolo_folder(SyntheticDetection(2, image_size=16), tmp))
        ...     [path.name for path in ds.source_files()]
        ['000000.png', '000001.png', '000000.txt', '000001.txt']
        """
        return self.image_paths + self.label_paths

    def source_stats(self) -> dict[str, FileStat]:
        """The ``(size, mtime_ns)`` of each label file as it was parsed (``None``: none).

        The labels are parsed when the dataset is built, so
        :class:`~rankaug.CachedDataset` keys its cache by these, not by the label
        files' stats when the cache is made: labels edited in between key a new
        cache instead of being stored under the edited files' stats.
        """
        return {
            os.fspath(path): stat
            for path, stat in zip(self.label_paths, self._label_stats, strict=True)
        }

    def __repr__(self) -> str:
        return (
            f"YoloFolder({str(self.root)!r}, box_format={self.box_format!r}, "
            f"image_dir={self.image_dir!r}, label_dir={self.label_dir!r}, "
            f"extensions={self.extensions!r}, tolerance={self.tolerance!r}, "
            f"segments={self.segments!r}, as_tuple={self.as_tuple!r}, tensors={self.tensors!r}, "
            f"image_size={self.image_size!r}, reduced_decode={self.reduced_decode!r}, "
            f"interpolation={self.interpolation!r})"
        )


def _check_pairs(
    image_paths: tuple[Path, ...],
    label_paths: tuple[Path, ...],
    labels: Path,
    suffixes: frozenset[str],
) -> None:
    """Refuse two images on one label file; warn of label files no image reads."""
    owners: dict[str, Path] = {}  # strings: they hash far faster than paths
    for image, label in zip(image_paths, label_paths, strict=True):
        other = owners.setdefault(str(label), image)
        if other is not image:
            raise ValueError(
                f"images {other} and {image} share the label file {label} (a label file is "
                "named after its image without the extension): rename one, or pass "
                "extensions= to read one kind"
            )
    unread = sorted(
        path
        for path in walk_files(labels, frozenset({".txt"}), what="label")
        if path != os.path.join(labels, "classes.txt")  # LabelImg's class names
        and path not in owners
    )
    if unread:
        warnings.warn(
            f"{len(unread)} label file(s) under {labels} belong to no image read (first: "
            f"{unread[0]}), so their objects are not read: an image's extension must be one "
            f"of extensions={tuple(sorted(suffixes))} and its label file named "
            "<image stem>.txt (lower-case)",
            RankaugWarning,
            stacklevel=3,
        )


def _check_extensions(extensions: object) -> frozenset[str]:
    """Return the lower-cased extensions after checking they look like ``.jpg``."""
    if isinstance(extensions, str) or not isinstance(extensions, (tuple, list, set, frozenset)):
        raise TypeError(
            f"extensions must be a tuple of strings like ('.jpg', '.png'), got {extensions!r}"
        )
    for ext in extensions:
        if not isinstance(ext, str):
            raise TypeError(
                f"extensions must hold strings like '.jpg', got {ext!r} ({type(ext).__name__}) "
                f"in {extensions!r}"
            )
        if not ext.startswith(".") or len(ext) < 2:
            raise ValueError(f"extensions must look like '.jpg', got {ext!r} in {extensions!r}")
    if not extensions:
        raise ValueError("extensions must not be empty")
    return frozenset(ext.lower() for ext in extensions)
