"""Read a COCO detection annotation file and its images.

The file is read and checked by :mod:`rankaug.datasets._coco_json`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
from torch.utils.data import Dataset

from rankaug import checks
from rankaug._fixed import FixedSettings
from rankaug.boxes import BoxFormat
from rankaug.datasets._coco_json import (
    as_boxes,
    load_json,
    read_annotations,
    read_categories,
    read_images,
)
from rankaug.datasets._file_stat import FileStat
from rankaug.datasets._image_io import Interpolation, read_rgb, read_rgb_resized
from rankaug.datasets._loading import LoadSettings
from rankaug.datasets._sample import build_sample

__all__ = ["CocoDetection"]


class CocoDetection(LoadSettings, FixedSettings, Dataset[Any]):
    """A COCO-format detection dataset: one JSON file plus an image folder.

    Reads ``images`` (``id``, ``file_name``, ``width``, ``height``), ``categories``
    (``id``, optional ``name``) and ``annotations`` (``id``, ``image_id``,
    ``category_id``, ``bbox = [x, y, w, h]`` in pixels, optional ``iscrowd``); other
    keys (segmentations, keypoints, areas) are ignored. A file without
    ``annotations`` (a test split) gives images without objects. The whole file is
    checked when the dataset is built; images are decoded on access and must have
    the size the file gives.

    Crowd annotations (``iscrowd`` 1) are checked as every other annotation (their
    image, category and box must be valid), then skipped, as detection training usually
    does; :attr:`num_crowd_skipped` counts them. ``iscrowd`` is ``0`` or ``1``, written
    as an integer, a boolean or a float (``1.0``); anything else is an error. Boxes may
    stick out of their image by at most ``tolerance`` pixels (rounding in annotation
    tools) and are clipped to it; anything further out is an error. Zero-size boxes are
    kept (``A.BboxParams(filter_invalid_bboxes=True)`` drops them). UTF-8 (a BOM is skipped).

    Labels are the positions of the category ids in sorted order, ``0`` to
    ``len(category_ids) - 1``. Samples are in order of image id and look like those
    of :class:`~rankaug.datasets.SyntheticDetection`: ``{"image": HxWx3 uint8 RGB,
    "bboxes": float32 (N, 4) in box_format, "labels": int64 (N,)}``, or
    ``(image, {"boxes", "labels"})`` with ``as_tuple``.

    Resize on load: with ``image_size``, every image comes back with its long side
    ``image_size`` and its aspect ratio kept (each side ``min(ceil(side * r),
    image_size)`` with ``r = image_size / max(height, width)``, as ultralytics'
    ``load_image``; smaller images grow), and the boxes (given in the annotation file's
    pixels) are scaled by ``new_width / width`` and ``new_height / height``. A JPEG that
    shrinks by 2x or more is decoded at 1/2, 1/4 or 1/8 size by the JPEG decoder, then
    resized to the exact size: much faster, but its pixels differ slightly (a few
    levels) from a full decode and resize; ``reduced_decode=False`` decodes in full. The
    final resize is ``INTER_LINEAR`` for changes under 2x and ``INTER_AREA`` for shrinks
    of 2x or more (``interpolation="linear"``: ``INTER_LINEAR`` always, as ultralytics'
    ``load_image``). The full-size image must still have the size the file gives.

    Args:
        annotation_file: The COCO JSON file.
        image_root: The folder that ``file_name`` values are relative to.
        box_format: Format of the dict sample's ``"bboxes"``.
        tolerance: How many pixels a box may stick out of its image.
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
        image_ids: COCO image id of each sample.
        category_ids: COCO category id of each label (label ``i``: ``category_ids[i]``).
        category_names: Name of each label (the id as text where a name is missing).
        category_to_label: COCO category id to label.
        num_crowd_skipped: Number of crowd annotations skipped. These, ``annotation_file``
            and ``tolerance`` are fixed when the file is read, and ``box_format`` when the
            dataset is made (the wrappers read the format it declares once): assigning
            one raises an ``AttributeError``. ``image_root`` and how an image is loaded
            (``image_size``, ``reduced_decode``, ``interpolation``, ``as_tuple``,
            ``tensors``) may be assigned: checked (and resolved) as when made. A subclass
            may set any of them before calling the constructor, to the value it gives it.

    Raises:
        TypeError: If an argument has the wrong type (a path that is not a ``str`` or an
            ``os.PathLike``, say).
        FileNotFoundError: If ``annotation_file`` or the folder ``image_root`` does not
            exist.
        ValueError: If an argument is out of range, or the file is not valid COCO
            detection JSON; the message names the file and the offending image,
            category or annotation id.

    Warns:
        RankaugWarning: If two image ids have the same file: each is its own sample,
            with only its own annotations.

    >>> import json, tempfile
    >>> from pathlib import Path
    >>> import cv2, numpy as np
    >>> coco = {"images": [{"id": 7, "file_name": "a.png", "height": 20, "width": 30}],
    ...         "categories": [{"id": 3, "name": "cat"}, {"id": 1, "name": "dog"}],
    ...         "annotations": [{"id": 1, "image_id": 7, "category_id": 3,
    ...                          "bbox": [2, 4, 10, 5], "iscrowd": 0}]}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = Path(tmp, "coco.json").write_text(json.dumps(coco))
    ...     _ = cv2.imwrite(str(Path(tmp, "a.png")), np.zeros((20, 30, 3), np.uint8))
    ...     ds = CocoDetection(Path(tmp, "coco.json"), tmp)
    ...     sample = ds[0]
    >>> sample["bboxes"], sample["labels"], ds.category_names
    (array([[ 2.,  4., 12.,  9.]], dtype=float32), array([1]), ('dog', 'cat'))
    """

    fixed_settings = frozenset({"annotation_file", "tolerance", "image_ids", "category_ids",
                                "category_names", "category_to_label",
                                "num_crowd_skipped", "box_format"})  # fmt: skip
    made_with = "_labels"  # set last: a subclass may have set annotation_file and others before

    def __init__(
        self,
        annotation_file: str | os.PathLike[str],
        image_root: str | os.PathLike[str],
        *,
        box_format: BoxFormat = "pascal_voc",
        tolerance: float = 1.0,
        as_tuple: bool = False,
        tensors: bool = False,
        image_size: int | None = None,
        reduced_decode: bool = True,
        interpolation: Interpolation = "auto",
    ) -> None:
        # checked (LoadSettings), as when assigned
        self.set_loading(box_format, as_tuple, tensors, image_size, reduced_decode, interpolation)
        self.tolerance = checks.real(tolerance, "tolerance", low=0.0)
        # resolved (absolute, links followed): one file or folder, one name (and repr,
        # which is the cache's key)
        self.annotation_file = Path(checks.path(annotation_file, "annotation_file")).resolve()
        self.set_by_constructor("image_root", image_root)  # resolved, checked: as assigned
        data, self._annotation_stat = load_json(self.annotation_file)
        source = str(self.annotation_file)
        images = read_images(data, source)
        categories = read_categories(data, source)
        self.image_ids: tuple[int, ...] = tuple(sorted(images))
        self.category_ids: tuple[int, ...] = tuple(sorted(categories))
        self.category_names: tuple[str, ...] = tuple(categories[c] for c in self.category_ids)
        self.category_to_label: dict[int, int] = {c: i for i, c in enumerate(self.category_ids)}
        self._files = [images[i][0] for i in self.image_ids]
        self._sizes = [(images[i][1], images[i][2]) for i in self.image_ids]
        boxes, labels, self.num_crowd_skipped = read_annotations(
            data, source, images, self.category_to_label, self.tolerance
        )
        self._boxes = [as_boxes(boxes.get(i, [])) for i in self.image_ids]
        self._labels = [np.array(labels.get(i, []), dtype=np.int64) for i in self.image_ids]

    @property
    def image_root(self) -> Path:
        """The image folder, resolved; setting another (resolved, checked) loads from it."""
        return self._image_root

    @image_root.setter
    def image_root(self, image_root: str | os.PathLike[str]) -> None:
        self._image_root = checks.folder(image_root, "image_root")

    def __len__(self) -> int:
        """Return the number of images."""
        return len(self.image_ids)

    def __getitem__(self, index: int) -> Any:
        """Return sample ``index`` (negative indices count from the end).

        Raises:
            TypeError: If ``index`` is not an integer.
            IndexError: If ``index`` is out of range.
            ValueError: If the image cannot be decoded or its size differs from the
                annotation file's.
        """
        position = checks.index(index, len(self.image_ids))
        path = self.image_root / self._files[position]
        boxes = self._boxes[position].copy()
        if self.image_size is None:
            image = read_rgb(path)
            original = (image.shape[0], image.shape[1])
        else:
            image, original = read_rgb_resized(
                path,
                self.image_size,
                reduced_decode=self.reduced_decode,
                interpolation=self.interpolation,
            )
        height, width = self._sizes[position]
        if original != (height, width):
            raise ValueError(
                f"{path}: the image is {original[0]}x{original[1]} (height x width) "
                f"but {self.annotation_file} gives {height}x{width} for image id "
                f"{self.image_ids[position]}"
            )
        if self.image_size is not None:  # the resize's own scale in each axis
            scale_x, scale_y = image.shape[1] / width, image.shape[0] / height
            boxes *= np.array([scale_x, scale_y, scale_x, scale_y])
        return build_sample(
            image,
            boxes,
            self._labels[position].copy(),
            box_format=self.box_format,
            as_tuple=self.as_tuple,
            tensors=self.tensors,
        )

    def source_files(self) -> tuple[Path, ...]:
        """The files the samples come from: the annotation file, then every image."""
        return (self.annotation_file, *(self.image_root / name for name in self._files))

    def source_stats(self) -> dict[str, FileStat]:
        """The ``(size, mtime_ns)`` of the annotation file as it was parsed.

        The file is parsed when the dataset is built, so :class:`~rankaug.CachedDataset`
        keys its cache by this, not by the file's stat when the cache is made: an
        annotation file edited in between keys a new cache instead of being stored
        under the edited file's stat.
        """
        return {os.fspath(self.annotation_file): self._annotation_stat}

    def __repr__(self) -> str:
        return (
            f"CocoDetection({str(self.annotation_file)!r}, {str(self.image_root)!r}, "
            f"box_format={self.box_format!r}, tolerance={self.tolerance!r}, "
            f"as_tuple={self.as_tuple!r}, tensors={self.tensors!r}, "
            f"image_size={self.image_size!r}, reduced_decode={self.reduced_decode!r}, "
            f"interpolation={self.interpolation!r})"
        )
