"""Streaming wrappers: rankaug's keyed augmentation over iterable datasets.

``RandomAugmentWrapper(stream, ...)``, ``MosaicDataset(stream, ...)`` and the mix family return the
classes here when ``stream`` is an ``IterableDataset`` or another iterable without
``__getitem__``/``__len__`` (:mod:`rankaug.stream.detect`); they are
``IterableDataset`` objects a DataLoader iterates. Passes, epochs and keys:
:mod:`rankaug.stream.base` (what a pass asks of the wrapped stream:
:mod:`rankaug.stream.source`); each worker's pass and its saved state (resume):
:mod:`rankaug.stream.state`; the multi-sample wrappers' window:
:mod:`rankaug.stream.window`; sample ids: :mod:`rankaug.stream.ids`; accelerate dealing
again a stream split by rank: :mod:`rankaug.stream.readers`.
"""

from rankaug.stream.augment import StreamingAugment
from rankaug.stream.base import StreamDataset
from rankaug.stream.detect import is_stream
from rankaug.stream.mix import StreamingCopyPaste, StreamingCutMix, StreamingMixUp
from rankaug.stream.mosaic import StreamingMosaic
from rankaug.stream.window import WindowStream

__all__ = [
    "StreamDataset",
    "StreamingAugment",
    "StreamingCopyPaste",
    "StreamingCutMix",
    "StreamingMixUp",
    "StreamingMosaic",
    "WindowStream",
    "is_stream",
]
