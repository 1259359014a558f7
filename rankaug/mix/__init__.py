"""The multi-image family beside the mosaic: MixUp, CutMix and CopyPaste, keyed.

Each wrapper combines every sample with one partner, and draws the partner, whether to
mix and how from the rankaug key, never from global state (ultralytics' ``MixUp``,
``CutMix`` and ``CopyPaste`` draw from ``random`` and ``np.random``, so every rank that
called ``torch.manual_seed(s)`` draws alike). They share one path
(:mod:`~rankaug.mix.base`):

1. **plan**: one block of uniforms from the key (mix or not, the partner, the wrapper's
   own uniforms), then the wrapper's other draws;
2. **read** (:mod:`~rankaug._multi.pairs`): the main sample through the adapter, the
   partner read only, both checked, a partner of another size refused or letterboxed;
3. **combine**, the wrapper's own step: :mod:`~rankaug.mix.mixup` blends the images,
   :mod:`~rankaug.mix.cutmix` pastes a rectangle of the partner,
   :mod:`~rankaug.mix.copypaste` pastes the partner's instances;
4. **classes** (:mod:`~rankaug.mix.classes`): soft targets for classification samples;
5. **repack**: the main sample's shape, and the record, from which ``replay(record)``
   rebuilds the sample bit for bit.

They compose with each other and with :class:`~rankaug.MosaicDataset`:
``MixUpDataset(MosaicDataset(ds, seed=0), seed=0)`` mixes two keyed mosaics, as YOLOX
does.
"""

from __future__ import annotations

from rankaug.mix.base import PairDataset
from rankaug.mix.config import PartnerFit
from rankaug.mix.copypaste import CopyPasteDataset, CopyPasteRecord, CopySource
from rankaug.mix.cutmix import CutMixDataset, CutMixRecord
from rankaug.mix.mixup import MixUpDataset, MixUpRecord

__all__ = [
    "CopyPasteDataset",
    "CopyPasteRecord",
    "CopySource",
    "CutMixDataset",
    "CutMixRecord",
    "MixUpDataset",
    "MixUpRecord",
    "PairDataset",
    "PartnerFit",
]
