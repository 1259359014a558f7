"""Streaming wrappers: rankaug's keyed augmentation over iterable datasets.

``RandomAugmentWrapper(stream, ...)`` and ``MosaicDataset(stream, ...)`` return the
classes here when ``stream`` is an ``IterableDataset`` or another iterable without
``__getitem__``/``__len__`` (:mod:`rankaug.stream.detect`); they are
``IterableDataset`` objects a DataLoader iterates. Passes, epochs, keys and resume:
:mod:`rankaug.stream.base`; the mosaic's window: :mod:`rankaug.stream.mosaic`; sample
ids: :mod:`rankaug.stream.ids`.
"""

from rankaug.stream.augment import StreamingAugment
from rankaug.stream.base import StreamDataset
from rankaug.stream.detect import is_stream
from rankaug.stream.mosaic import StreamingMosaic

__all__ = ["StreamDataset", "StreamingAugment", "StreamingMosaic", "is_stream"]
