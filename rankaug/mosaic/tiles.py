"""Reading tiles: each source sample's image and targets, checked, as numpy arrays.

The adapter turns a sample into data (:mod:`rankaug.samples`); :class:`TileReader`
turns that data into a :class:`Tile` and checks it, naming the sample and the field of
anything wrong: an image whose dtype or channels no resize handles, boxes that are not
``(N, 4)``, a per-box field of the wrong length (or one outside ``label_fields``, which
would go stale), masks and keypoints of the wrong shape, and tiles that disagree with
the main tile on channels, dtypes or which targets they have.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from rankaug import checks
from rankaug.boxes import as_box_array
from rankaug.context import SampleContext
from rankaug.mosaic.config import MosaicConfig
from rankaug.samples import SampleAdapter, passthrough, view

__all__ = ["Tile", "TileReader"]

_NO_BOXES: Final = np.zeros((0, 4))
_NO_FIELD: Final = np.zeros((0,), dtype=np.int64)


@dataclass(slots=True)
class Tile:
    """One source sample of a mosaic, as numpy arrays.

    Attributes:
        index: Its dataset index.
        image: ``HxW`` or ``HxWxC``.
        boxes: ``(N, 4)`` float64 in the configured box format (converted to pixels by
            :mod:`rankaug.mosaic.targets`, for all tiles at once); read, never written.
        fields: Each label field, ``N`` entries.
        mask: The semantic mask, or ``None``.
        masks: The ``(N, H, W)`` instance masks, or ``None``.
        keypoints: ``(K, 2+)`` float64 keypoints, or ``None``.
        keypoint_fields: Each keypoint field, ``K`` entries.
    """

    index: int
    image: np.ndarray
    boxes: np.ndarray
    fields: dict[str, np.ndarray]
    mask: np.ndarray | None
    masks: np.ndarray | None
    keypoints: np.ndarray | None
    keypoint_fields: dict[str, np.ndarray]

    def signature(self) -> tuple[object, ...]:
        """What must match across the tiles of one mosaic: channels, dtypes, targets."""
        image, mask, masks = self.image, self.mask, self.masks
        return (
            image.shape[2:],  # its length tells HxW from HxWxC
            image.dtype,
            None if mask is None else (mask.shape[2:], mask.dtype),
            None if masks is None else masks.dtype,
            self.keypoints is None,
        )


class TileReader:
    """Reads and checks the tiles of a mosaic (see the module docstring).

    Args:
        config: The mosaic's configuration.
        adapter: The adapter the samples were unpacked with.
    """

    def __init__(self, config: MosaicConfig, adapter: SampleAdapter) -> None:
        self.config = config
        self.adapter = adapter
        # the adapter's hooks, resolved once: they run for every tile
        hook = getattr(adapter, "view", None)
        self._view: Callable[[Any, Collection[str]], Mapping[str, Any]] = (
            hook if callable(hook) else functools.partial(view, adapter)
        )
        hook = getattr(adapter, "passthrough", None)
        self._passthrough: Callable[[Any, Collection[str]], Mapping[str, Any]] = (
            hook if callable(hook) else functools.partial(passthrough, adapter)
        )
        self._checked: set[tuple[object, ...]] = set()  # main tiles' kinds already checked
        self._fits: set[tuple[object, ...]] = set()  # main samples' kinds whose fill fits

    def unpack(
        self, context: SampleContext, indices: Sequence[int], samples: Sequence[Any]
    ) -> tuple[dict[str, Any], Any, list[Mapping[str, Any]]]:
        """Hand the samples to the adapter: the main one to rebuild, the partners to read.

        Args:
            context: The sample's context.
            indices: The samples' indices, main first.
            samples: The samples.

        Returns:
            The main sample's data and state, and every sample's data (main first).

        Raises:
            SampleError: If the adapter cannot handle a sample; it names that sample
                (``dataset[7] failed at index 3 ...``). To keep the usual path free of
                one guard per sample, a failure is found by reading the samples again,
                each under its own guard.
        """
        adapter, targets, read = self.adapter, self.config.targets, self._view
        try:
            data, state = adapter.unpack(samples[0], targets)
            views = [data, *[read(sample, targets) for sample in samples[1:]]]
        except Exception:
            for position, (index, sample) in enumerate(zip(indices, samples, strict=True)):
                with context.guard(f"dataset[{index}]"):
                    if position:
                        read(sample, targets)
                    else:
                        adapter.unpack(sample, targets)
            raise
        return data, state, views

    def tiles(
        self, indices: Sequence[int], views: Sequence[Mapping[str, Any]], samples: Sequence[Any]
    ) -> list[Tile]:
        """Read and check every tile (:meth:`read`, then :meth:`check`)."""
        tiles = [self.read(*item) for item in zip(indices, views, samples, strict=True)]
        self.check(tiles)
        return tiles

    def read(self, index: int, data: Mapping[str, Any], sample: Any) -> Tile:
        """Check one sample's data and make its tile.

        Args:
            index: Its dataset index.
            data: Its data from the adapter (``unpack``, or ``view`` for a partner).
            sample: The sample itself, for the adapter's ``passthrough``.

        Returns:
            The tile.

        Raises:
            ValueError: If anything is wrong with it (the message names
                ``dataset[index]`` and the field).
        """
        config = self.config
        where = f"dataset[{index}]"
        image = data.get("image")
        if type(image) is not np.ndarray and not isinstance(image, np.ndarray):
            raise TypeError(
                f"{where} image must be a numpy array once unpacked by the adapter, got "
                f"{type(image).__name__}"
            )
        height, width = image.shape[:2]
        if height == 0 or width == 0:
            raise ValueError(f"{where} image is empty, shape {image.shape}")
        raw = data.get("bboxes")
        if raw is None:
            boxes = _NO_BOXES
        elif type(raw) is np.ndarray and raw.dtype == np.float64 and raw.shape[1:] == (4,):
            boxes = raw  # already (N, 4) float64: read, never written
        else:
            boxes = as_box_array(raw, name=f"{where} bboxes")
        count = len(boxes)
        fields = {}
        for field in config.label_fields:
            value = data.get(field)
            if value is None:
                if count:
                    raise ValueError(
                        f"{where} has {count} boxes but no {field!r} field (label_fields="
                        f"{config.label_fields}); pass label_fields=() for boxes without labels"
                    )
                fields[field] = _NO_FIELD
                continue
            array = np.asarray(value)
            if array.ndim == 0 or len(array) != count:
                raise ValueError(
                    f"{where} {field!r} has {array.size if array.ndim else 'a scalar'} "
                    f"entries for {count} boxes"
                )
            fields[field] = array
        if count:
            others = self._passthrough(sample, config.targets)
            if others:
                self._check_stale(where, others, count)
        mask = data.get("mask")
        if mask is not None:
            mask = np.asarray(mask)
            if mask.shape[:2] != (height, width):
                raise ValueError(
                    f"{where} mask has shape {mask.shape}, its image {(height, width)}"
                )
        masks = data.get("masks")
        if masks is not None:
            masks = np.asarray(masks)
            if masks.ndim != 3 or masks.shape[0] != count or masks.shape[1:] != (height, width):
                raise ValueError(
                    f"{where} masks must have shape ({count}, {height}, {width}) (one per "
                    f"box), got {masks.shape}"
                )
        keypoints = data.get("keypoints")
        point_fields = {}
        if keypoints is not None:
            keypoints = np.asarray(keypoints, dtype=np.float64)
            if keypoints.ndim != 2 or keypoints.shape[1] < 2:
                raise ValueError(
                    f"{where} keypoints must have shape (K, 2+), got {keypoints.shape}"
                )
            for field in config.keypoint_fields:
                array = np.asarray(data.get(field, np.zeros((0,))))
                if array.ndim == 0 or len(array) != len(keypoints):
                    raise ValueError(
                        f"{where} {field!r} must have one entry per keypoint ({len(keypoints)})"
                    )
                point_fields[field] = array
        return Tile(index, image, boxes, fields, mask, masks, keypoints, point_fields)

    def check(self, tiles: list[Tile]) -> None:
        """Check the tiles of one mosaic against the main one (the first).

        The main tile's image must be one that every resize handles
        (:func:`rankaug.checks.image_layout`, checked once per kind of main tile), and
        every other tile must have the same channels, dtypes and kinds of target.

        Raises:
            TypeError: If the main image's dtype is not supported.
            ValueError: If the tiles disagree, or the main image has too many channels.
        """
        main = tiles[0]
        expected = main.signature()
        if expected not in self._checked:
            checks.image_layout(main.image, f"dataset[{main.index}] image")
            self._checked.add(expected)
        for tile in tiles[1:]:
            if tile.signature() != expected:
                _disagree(tile, main)

    def check_fill(self, index: int, data: Mapping[str, Any]) -> None:
        """Check the fill values against the main sample's dtypes, once per kind of sample.

        A configuration error, so a plain ``ValueError`` rather than a ``SampleError``;
        images that no resize handles are left to :meth:`check`, which names them.

        Args:
            index: The main sample's index.
            data: Its data from the adapter.

        Raises:
            ValueError: If ``fill`` has neither one value nor one per channel, or a fill
                value does not fit the image's (or the mask's) dtype.
        """
        image, mask = data.get("image"), data.get("mask")
        if not isinstance(image, np.ndarray):
            return  # not an image: read() names the sample
        kind = (image.dtype, image.shape[2:], getattr(mask, "dtype", mask is None))
        if kind in self._fits:
            return
        if image.dtype.name in checks.IMAGE_DTYPES and image.ndim in (2, 3):
            masks = None if mask is None else np.asarray(mask)
            self.config.check_fill(image, masks, f"dataset[{index}]")
            self._fits.add(kind)

    def _check_stale(self, where: str, others: Mapping[str, Any], count: int) -> None:
        """Refuse per-box values that are not in label_fields: they would go stale."""
        record = self.config.record
        for key, value in others.items():
            if key == record or isinstance(value, str | bytes):
                continue
            shape = getattr(value, "shape", None)
            if shape is not None:
                entries = shape[0] if len(shape) >= 1 else None
            elif isinstance(value, list | tuple):
                entries = len(value)
            else:
                continue
            if entries == count:
                raise ValueError(
                    f"{where} {key!r} looks like a per-box field ({entries} entries for "
                    f"{count} boxes) that is not in label_fields="
                    f"{self.config.label_fields}: the mosaic would leave it misaligned; add "
                    "it to label_fields or drop it"
                )


def _disagree(tile: Tile, main: Tile) -> None:
    name, main_name = f"dataset[{tile.index}]", f"the main image dataset[{main.index}]"
    image, reference = tile.image, main.image
    if image.shape[2:] != reference.shape[2:] or image.dtype != reference.dtype:
        raise ValueError(
            f"{name} image has shape {image.shape} and dtype {image.dtype}, but {main_name} "
            f"has {reference.shape} and {reference.dtype}: tiles of a mosaic need the same "
            "channels and dtype"
        )
    for kind in ("mask", "masks"):
        ours, theirs = getattr(tile, kind), getattr(main, kind)
        if ours is not None and theirs is not None and ours.dtype != theirs.dtype:
            raise ValueError(
                f"{name} {kind} has dtype {ours.dtype}, but {main_name}'s has {theirs.dtype}: "
                f"tiles of a mosaic need the same {kind} dtype (a {theirs.dtype} output "
                "cannot hold every value of another dtype)"
            )
        if ours is not None and theirs is not None and ours.shape[2:] != theirs.shape[2:]:
            raise ValueError(
                f"{name} {kind} has shape {ours.shape}, but {main_name}'s has {theirs.shape}: "
                f"tiles of a mosaic need {kind} of the same channels"
            )
    raise ValueError(
        f"{name} and dataset[{main.index}] disagree on having a mask, instance masks or "
        "keypoints: all tiles of a mosaic need the same targets"
    )
