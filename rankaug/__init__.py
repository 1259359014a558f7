"""rankaug: keyed, rank-aware data augmentation for distributed PyTorch training.

Every random draw comes from a key — ``(seed, rank, worker_id, epoch)`` or
``(seed, epoch, index)`` — never from global state, so augmentations differ across
GPUs, workers and epochs and repeat bit for bit across runs. The top level holds what
users call; the records, the adapter protocol and the literal types are in
:mod:`rankaug.types`.
"""

from rankaug import adapters, types
from rankaug.batch import BatchAugment
from rankaug.cache import CachedDataset
from rankaug.collate import BatchCollator, collate_detection, collate_ultralytics
from rankaug.context import SampleContext
from rankaug.epoch import EpochIndex
from rankaug.errors import RankaugWarning, SampleError
from rankaug.hsv import HSVJitter
from rankaug.keyed import KeyedDataset
from rankaug.keys import KeyedRandom, key_words, make_rng
from rankaug.mix import CopyPasteDataset, CutMixDataset, MixUpDataset
from rankaug.mosaic import MosaicAffine, MosaicDataset, MosaicGrid
from rankaug.params import Partners, Targets
from rankaug.sampler import EpochSampler
from rankaug.samples import DefaultAdapter
from rankaug.seeding import WorkerSeeder, seed_everything
from rankaug.stream import (
    StreamingAugment,
    StreamingCopyPaste,
    StreamingCutMix,
    StreamingMixUp,
    StreamingMosaic,
)
from rankaug.wrapper import RandomAugmentWrapper

__version__ = "0.1.0"  # the one source: pyproject.toml reads it

__all__ = [
    "BatchAugment",
    "BatchCollator",
    "CachedDataset",
    "CopyPasteDataset",
    "CutMixDataset",
    "DefaultAdapter",
    "EpochIndex",
    "EpochSampler",
    "HSVJitter",
    "KeyedDataset",
    "KeyedRandom",
    "MixUpDataset",
    "MosaicAffine",
    "MosaicDataset",
    "MosaicGrid",
    "Partners",
    "RandomAugmentWrapper",
    "RankaugWarning",
    "SampleContext",
    "SampleError",
    "StreamingAugment",
    "StreamingCopyPaste",
    "StreamingCutMix",
    "StreamingMixUp",
    "StreamingMosaic",
    "Targets",
    "WorkerSeeder",
    "__version__",
    "adapters",
    "collate_detection",
    "collate_ultralytics",
    "key_words",
    "make_rng",
    "seed_everything",
    "types",
]
