"""The keys of a batch: one hash state per sample, and the keyed uniforms drawn from it.

A sample's key is ``(seed, stream, epoch, index)`` (domain ``BATCH_SAMPLE``) or, for a
batch given without indices, ``(seed, stream, rank, epoch, step, position)`` (domain
``BATCH_STEP``), laid out as :mod:`rankaug.keys` specifies. The stream word tells two
``BatchAugment`` instances with the same seed apart (:mod:`rankaug.batch._stream`).
:class:`DrawKeys` absorbs the words every sample shares once, in Python, and the
per-sample words as tensors on the batch's device. A draw is named by ``(augmentation,
sampler, count)`` (:func:`draw_word`): element ``e`` of sample ``b``'s row is
``fmix32(absorb(absorb(state_b, draw), e))``, hashed with integer ops only, so it is the
same on every device and in every batch.
"""

from __future__ import annotations

import functools
import math

import torch

from rankaug.batch import _hash
from rankaug.keys import Domain, KeyTemplate


class DrawKeys:
    """The hash states of one batch's samples (a ``(B,)`` int64 tensor).

    >>> index, epoch = torch.tensor([3, 3, 4]), torch.tensor([0, 0, 0])
    >>> keys = DrawKeys.of_samples(7, 0, index, epoch, "cpu")
    >>> u = keys.uniform(torch.Size((3, 2)), (0, 0, 0), torch.device("cpu"), torch.float32)
    >>> bool((u[0] == u[1]).all()), bool((u[0] != u[2]).all()), u.shape
    (True, True, torch.Size([3, 2]))
    """

    __slots__ = ("_by_device", "states")

    def __init__(self, states: torch.Tensor) -> None:
        self.states = states
        self._by_device: dict[torch.device, torch.Tensor] = {states.device: states}

    @classmethod
    def of_samples(
        cls,
        seed: int,
        stream: int,
        index: torch.Tensor,
        epoch: torch.Tensor,
        device: torch.device | str,
    ) -> DrawKeys:
        """Per-sample keys ``(seed, stream, epoch, index)``; ``index``, ``epoch`` int64 ``(B,)``."""
        template = KeyTemplate(Domain.BATCH_SAMPLE, seed=seed, stream=stream)
        words = template.words(epoch=0, index=0).tolist()
        prefix = _hash.absorb_words(words[:5])  # magic, domain, seed lo, seed hi, stream
        index = index.to(device=device, dtype=torch.int64)
        state = torch.full(index.shape, prefix, dtype=torch.int64, device=device)
        state = _hash.absorb(state, epoch.to(device=device, dtype=torch.int64))
        state = _hash.absorb(state, index & _hash.M32)
        return cls(_hash.absorb(state, (index >> 32) & _hash.M32))

    @classmethod
    def of_step(
        cls,
        seed: int,
        stream: int,
        rank: int,
        epoch: int,
        step: int,
        size: int,
        device: torch.device | str,
    ) -> DrawKeys:
        """Keys ``(seed, stream, rank, epoch, step, position)`` for ``size`` unindexed samples."""
        template = KeyTemplate(
            Domain.BATCH_STEP, seed=seed, stream=stream, rank=rank, epoch=epoch, step=step
        )
        words = template.words(position=0).tolist()
        prefix = _hash.absorb_words(words[:-1])
        state = torch.full((size,), prefix, dtype=torch.int64, device=device)
        return cls(_hash.absorb(state, torch.arange(size, device=device)))

    def __len__(self) -> int:
        return int(self.states.shape[0])

    def uniform(
        self,
        shape: torch.Size,
        draw: tuple[int, int, int],
        device: torch.device,
        dtype: torch.dtype,
    ) -> torch.Tensor:
        """Keyed floats in ``[0, 1)`` of ``shape``, whose first dimension is the batch.

        Raises:
            ValueError: If ``shape`` does not start with the batch size (a batch-level draw).
        """
        if len(shape) == 0 or shape[0] != len(self):
            raise ValueError(unkeyed_draw(f"augmentation {draw[0]}", tuple(shape), len(self)))
        states = self._by_device.get(device)
        if states is None:
            states = self._by_device[device] = self.states.to(device)
        word = draw_word(*draw)
        hashed = _hash.absorb(states, word)[:, None]
        hashed = _hash.absorb_block(hashed, _element_blocks(math.prod(shape[1:]), device))
        return _hash.uniform(_hash.finish(hashed), dtype).reshape(shape)

    def seeds(self, draw: tuple[int, int, int]) -> list[int]:
        """One 63-bit torch seed per sample for ``draw`` (two hashed words, on the CPU).

        >>> index, epoch = torch.tensor([3, 3, 4]), torch.tensor([0, 0, 0])
        >>> keys = DrawKeys.of_samples(7, 0, index, epoch, "cpu")
        >>> a, b, c = keys.seeds((0, 0xFD, 0))
        >>> a == b != c and 0 <= a < 2**63
        True
        """
        first = _hash.finish(_hash.absorb(self.states.cpu(), draw_word(*draw)))
        second = _hash.finish(_hash.absorb(first, 0x5EC0_4D00))
        return ((first << 31) | (second >> 1)).tolist()


def unkeyed_draw(label: str, shape: tuple[int, ...], size: int) -> str:
    """Why a draw of ``shape`` cannot be keyed in a batch of ``size`` (the error's message).

    A first dimension that is a multiple of the batch is a draw per patch of each sample
    (``PatchSequential``); any other is a draw for the whole batch.

    >>> unkeyed_draw("augmentation 0", (12,), 3)[:68]
    'augmentation 0 drew 12 values for a batch of 3, 4 per sample: kornia'
    """
    if shape and size > 0 and shape[0] > size and shape[0] % size == 0:
        return (
            f"{label} drew {shape[0]} values for a batch of {size}, {shape[0] // size} per "
            "sample: kornia draws it per patch (PatchSequential with patchwise_apply=False "
            f"augments a batch of {shape[0]} patches, every patch of every image); "
            "BatchAugment keys one draw per sample of the batch it is given (use "
            "patchwise_apply=True, one augmentation per patch position, or leave it out)"
        )
    return (
        f"{label} drew a batch-level value of shape {shape} for a batch of {size} (kornia "
        "draws it once for the whole batch): BatchAugment keys every draw per sample"
    )


def draw_word(augmentation: int, sampler: int, count: int) -> int:
    """The 32-bit word of a draw: augmentation (10 bits), sampler (8), count (14).

    Fixed-width fields, so two draws never share a word.

    Raises:
        ValueError: If a field does not fit (over 1024 augmentations, 256 samplers, or
            16384 draws of one sampler in one call).
    """
    if not (augmentation < 1 << 10 and sampler < 1 << 8 and count < 1 << 14):
        raise ValueError(
            f"BatchAugment keys up to 1024 augmentations, 256 samplers each and 16384 draws "
            f"of a sampler per call, got draw {(augmentation, sampler, count)}"
        )
    return augmentation << 22 | sampler << 14 | count


@functools.lru_cache(maxsize=256)
def _element_blocks(count: int, device: torch.device) -> torch.Tensor:
    """The hash blocks of the element numbers ``0..count-1`` (the same for every call)."""
    return _hash.block(torch.arange(count, device=device))[None, :]
