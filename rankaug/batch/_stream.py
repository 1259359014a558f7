"""The default stream of a :class:`~rankaug.BatchAugment`: the name its transform prints.

Two ``BatchAugment`` instances with the same seed key their draws by the same
``(seed, epoch, index)``, and kornia numbers a draw by the augmentation's position and
sampler alone, so without a stream word a flip and a jitter, both at position 0, would
gate the same samples. The stream tells them apart. By default it is the transform's
``repr`` (kornia's and torchvision's name every augmentation and its arguments), read
so that the same pipeline gives the same name in every process and run:

* tensors print with torch's default print options, whatever the caller set, and
  without their device (a pipeline moved to the GPU keeps its stream);
* numpy arrays print with numpy's default options;
* memory addresses (``<function f at 0x7f...>``, an object's default ``repr``) are
  left out: they change from run to run.

Two transforms that print alike (one pipeline built twice, or used twice) share the
stream, on purpose: the draws of a key must follow from the pipeline, not from the
order in which objects were made, so that a fresh ``BatchAugment(transform, seed=s)``
replays a run's samples. Two views of one pipeline (SimCLR) need ``stream=`` of their
own.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any, Final

import numpy as np
import torch

__all__ = ["default_stream"]

_ADDRESS: Final = re.compile(r" at 0x[0-9A-Fa-f]+")
_DEVICE: Final = re.compile(r", device='[^']*'")
_TORCH_OPTIONS: Final = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")
_NUMPY_DEFAULTS: Final[dict[str, Any]] = {
    "precision": 8,
    "threshold": 1000,
    "edgeitems": 3,
    "linewidth": 75,
    "suppress": False,
    "nanstr": "nan",
    "infstr": "inf",
    "sign": "-",
    "floatmode": "maxprec",
    "formatter": None,
    "legacy": False,
}


def default_stream(transform: Any) -> str:
    """The stream name of ``transform``: ``"rankaug.BatchAugment/"`` and its ``repr``.

    >>> import kornia.augmentation as K
    >>> default_stream(K.RandomHorizontalFlip(p=0.5))
    'rankaug.BatchAugment/RandomHorizontalFlip(p=0.5, p_batch=1.0, same_on_batch=False)'
    >>> default_stream(K.RandomVerticalFlip(p=0.5)) != default_stream(K.RandomHorizontalFlip(p=0.5))
    True
    """
    with _default_printing():
        text = repr(transform)
    return "rankaug.BatchAugment/" + _DEVICE.sub("", _ADDRESS.sub("", text))


@contextlib.contextmanager
def _default_printing() -> Iterator[None]:
    """Torch's and numpy's default print options inside the block; the caller's after."""
    options = torch._tensor_str.PRINT_OPTS  # what set_printoptions sets, in every torch 2
    saved = {name: getattr(options, name) for name in _TORCH_OPTIONS}
    torch.set_printoptions(profile="default", sci_mode=None)  # type: ignore[no-untyped-call]
    try:
        with np.printoptions(**_NUMPY_DEFAULTS):
            yield
    finally:
        torch.set_printoptions(**saved)  # type: ignore[no-untyped-call]
