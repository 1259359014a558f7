"""Type-only names: the records the wrappers attach, the adapter protocol, the literals.

Nothing here is called: these are for annotations (``record: rankaug.types.MosaicRecord``)
and for writing an adapter (:class:`SampleAdapter`). What users call is at the top level.

>>> from rankaug.types import BoxFormat, MosaicRecord
>>> sorted(MosaicRecord.__annotations__)[:3]
['affine', 'applied', 'cells']
"""

from __future__ import annotations

from rankaug.boxes import BoxFormat
from rankaug.hsv import ChannelOrder, HSVRecord
from rankaug.keys import Keying
from rankaug.mix import CopyPasteRecord, CopySource, CutMixRecord, MixUpRecord, PartnerFit
from rankaug.mosaic import CanvasMode, MosaicRecord, ScaleMode
from rankaug.samples import SampleAdapter

__all__ = [
    "BoxFormat",
    "CanvasMode",
    "ChannelOrder",
    "CopyPasteRecord",
    "CopySource",
    "CutMixRecord",
    "HSVRecord",
    "Keying",
    "MixUpRecord",
    "MosaicRecord",
    "PartnerFit",
    "SampleAdapter",
    "ScaleMode",
]
