"""Reading tiles: each source sample of a mosaic, checked, as numpy arrays.

The adapter turns a sample into data (:mod:`rankaug.samples`); :class:`TileReader` (the
shared :class:`rankaug._multi.parts.PartReader`) turns that data into a :class:`Tile` and checks
it, naming the sample and the field of anything wrong (instance polygons, ``segments``,
are read too: every tile must have them when the main one has), and checks the fill
values against the main sample's dtypes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from rankaug import checks
from rankaug._multi.handed import handed_out
from rankaug._multi.parts import Part, PartReader
from rankaug.mix.classes import refuse_unmixed
from rankaug.samples import SampleAdapter

if TYPE_CHECKING:
    from rankaug.mosaic.config import MosaicConfig

__all__ = ["Tile", "TileReader"]

_NO_CLASSES = (
    "MosaicDataset has no soft targets: the mosaic of several images would keep this one's "
    "class; mix classification samples with MixUpDataset or CutMixDataset (num_classes=), "
    "and give a 'label' that is no class of the image (a dict's, a dict target's) another key"
)


Tile = Part
"""One source sample of a mosaic: its boxes are in the configured box format (float64,
or float32 as read), converted to float64 pixels by :mod:`rankaug.mosaic.targets` for all
tiles at once."""


class TileReader(PartReader):
    """Reads and checks the tiles of a mosaic (see the module docstring).

    Args:
        config: The mosaic's configuration.
        adapter: The adapter the samples were unpacked with.
    """

    def __init__(self, config: MosaicConfig, adapter: SampleAdapter) -> None:
        super().__init__(
            adapter,
            targets=config.target_keys,
            label_fields=config.targets.label_fields,
            keypoint_fields=config.targets.keypoint_fields,
            skip=() if config.record is None else (config.record,),
            group="tiles of a mosaic",
            actor="the mosaic",
            polygons=True,
            float32=True,  # cast with the others' (mosaic.targets), or read as floats
        )
        self.config = config
        self._fits: set[tuple[object, ...]] = set()  # main samples' kinds whose fill fits

    def tiles(
        self, indices: Sequence[int], views: Sequence[Mapping[str, Any]], samples: Sequence[Any]
    ) -> list[Tile]:
        """Read and check every tile (:meth:`read`, then :meth:`check`).

        A classification sample's class (an ``(image, class)`` pair's, a dict's
        ``"label"``) is refused, as the mixes refuse one without ``num_classes=``: the
        mosaic of several images would keep the main one's class. A ``"label"`` the
        adapter hands out as a target (per-box classes in ``label_fields``, or a
        ``KeyMap``'s ``labels="label"``) is no class.
        """
        label = self.class_target(samples[0], "label")
        if label is not None and not handed_out(label, views[0], self.targets):
            refuse_unmixed(label, f"dataset[{indices[0]}]", _NO_CLASSES)
        read, tiles = self.read, []  # (a loop, not a comprehension: each is a function)
        for index, data, sample in zip(indices, views, samples, strict=True):
            tiles.append(read(index, data, sample))
        self.check(tiles)
        return tiles

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
