"""Adapters for the sample layouts people bring: nested keys, Hugging Face, ultralytics.

Give one as ``adapter=`` to any wrapper (``RandomAugmentWrapper``, ``MosaicDataset``,
``MixUpDataset``, ``CutMixDataset``, ``CopyPasteDataset``); the CLI's ``--keys`` builds a
:class:`KeyMap` too. Samples come back in their own layout. An adapter that knows its
layout's box format says so (``adapter.box_format``): the multi-sample wrappers take it
from there (``rankaug.Targets(box_format=None)``, the default); give ``A.BboxParams`` the
same; a wrapper given another refuses.

* :class:`KeyMap`: targets under other keys or dotted paths (``"objects.bbox"``).
* :class:`HuggingFace`: ``{"image", "objects": {"bbox", "category", ...}}``, COCO boxes.
* :class:`Ultralytics`: ``YOLODataset`` samples (``img``, ``cls``, ``bboxes``), collated
  by :func:`rankaug.collate_ultralytics`.

torchvision's ``(image, {"boxes", "labels", ...})`` pairs need no adapter (see
:mod:`rankaug.samples`).
"""

from __future__ import annotations

from rankaug.adapters.keymap import KeyMap
from rankaug.adapters.presets import HuggingFace, Ultralytics

__all__ = ["HuggingFace", "KeyMap", "Ultralytics"]
