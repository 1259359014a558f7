"""Keyed batch augmentation: kornia on whole batches, each sample's parameters from its key.

:class:`BatchAugment` wraps a kornia augmentation or ``AugmentationSequential`` and, per
call, (1) resolves each sample's key, ``(seed, stream, epoch, index)`` or, without
indices, ``(seed, stream, rank, epoch, step, position)`` (:mod:`rankaug.batch._resolve`);
(2) draws every sample's parameters with kornia's own ``forward_parameters``, its
samplers swapped for keyed ones (:mod:`rankaug.batch._kornia`); (3) applies them in one
batched kornia call; (4) returns the output (and the parameters, on request). No global
generator is read or written, and a sample's parameters do not depend on its batch.

A torchvision v2 transform is applied one sample at a time instead, each with torch's
CPU generator seeded from the sample's key and put back afterwards
(:mod:`rankaug.batch._torchvision`).
"""

from __future__ import annotations

import copy
import threading
from typing import Any

import torch

from rankaug import checks
from rankaug.batch import _torchvision
from rankaug.batch._epoch import PlainEpoch
from rankaug.batch._kornia import (
    augmentations,
    call_keywords,
    keyed_applying,
    keyed_drawing,
)
from rankaug.batch._resolve import resolve
from rankaug.batch._stream import default_stream
from rankaug.keys import stream_id

__all__ = ["BatchAugment"]


class BatchAugment:
    """Kornia (or torchvision v2) batch augmentation, keyed per sample by its index and epoch.

    Args:
        transform: A kornia augmentation or ``AugmentationSequential`` (with its
            ``data_keys`` for boxes, masks and keypoints). Every draw must be per sample:
            ``same_on_batch``, ``p_batch`` other than 0 or 1, ``random_apply``, mix
            augmentations and samplers other than Uniform and Bernoulli are refused
            with an error naming them. ``ColorJitter``'s order is drawn per sample
            (applied per group of samples with the same order; a fixed ``order=`` is
            faster). Or a torchvision v2 transform: called once per sample, with torch's
            CPU generator seeded from the sample's key and restored after; extra inputs
            are tensors with one row per sample (a ``tv_tensors.Mask`` batch; a plain
            tensor of 2 dimensions or more is refused, torchvision would pass it
            through, as inside an item's dicts, lists and tuples) or sequences of one
            item per sample (``tv_tensors.BoundingBoxes`` each, or target dicts), and
            the parameters returned are, per sample, the ``(transform name, params)``
            its transforms made.
        seed: The run's seed, ``0 <= seed < 2**64``.
        stream: The key's stream word or name (see :func:`~rankaug.stream_id`). ``None``
            derives it from the transform's ``repr`` (its augmentations and their
            arguments), so two different transforms with the same seed draw
            independently, and the same transform draws the same in every run. Two
            views of one pipeline (SimCLR) need a stream each: ``stream="view1"``,
            ``stream="view2"``.

    ``transform``, ``seed`` and ``stream`` can be set afterwards: each is checked as here
    and put to use.

    Raises:
        TypeError: If ``transform`` is not a kornia augmentation or container or a
            torchvision v2 transform, ``seed`` is not an integer, or ``stream`` is
            neither a string nor an integer.
        ValueError: If ``seed`` or ``stream`` is out of range or a draw cannot be keyed
            per sample.

    >>> import kornia.augmentation as K
    >>> aug = BatchAugment(K.RandomAffine(degrees=30.0, p=1.0), seed=0)
    >>> images = torch.rand(4, 3, 8, 8)
    >>> out = aug(images, index=[5, 6, 7, 8], epoch=0)
    >>> alone = aug(images[2:3], index=[7], epoch=0)
    >>> bool((out[2:3] - alone).abs().max() <= 1e-5)
    True
    >>> flip = BatchAugment(K.RandomHorizontalFlip(), seed=0)
    >>> flip.stream != BatchAugment(K.RandomVerticalFlip(), seed=0).stream
    True
    """

    def __init__(self, transform: Any, *, seed: int, stream: int | str | None = None) -> None:
        self._given_stream = stream is not None
        self._plain = PlainEpoch()
        self.transform = transform  # checked, and its augmentations found
        self.seed = seed
        if stream is not None:
            self.stream = stream
        self.step = 0
        self._latest = threading.local()

    @property
    def transform(self) -> Any:
        """The transform; setting another checks it and puts it to use, keyed.

        A stream derived from the transform (none given) is derived from the new one.
        """
        return self._transform

    @transform.setter
    def transform(self, transform: Any) -> None:
        # the augmentations whose draws are keyed are found here: found again, or the new
        # transform would draw from torch's global generator
        torchvision = _torchvision.is_torchvision(transform)
        if torchvision:
            _torchvision.check(transform)
        self._augs = [] if torchvision else augmentations(transform)
        self._keywords = frozenset() if torchvision else call_keywords(transform)
        self._torchvision, self._transform = torchvision, transform
        if not self._given_stream:
            self._stream = stream_id(default_stream(transform))

    @property
    def seed(self) -> int:
        """The run's seed; setting another (checked) puts it to use."""
        return self._seed

    @seed.setter
    def seed(self, seed: int) -> None:
        self._seed = checks.uint(seed, "seed", 64)

    @property
    def stream(self) -> int:
        """The key's 32-bit stream word; setting a word or name (checked) puts it to use."""
        return self._stream

    @stream.setter
    def stream(self, stream: int | str) -> None:
        self._stream = stream_id(stream)
        self._given_stream = True

    @property
    def last_params(self) -> Any:
        """The parameters of the calling thread's latest call (``None`` before one).

        Two threads calling at once each read their own call's; a copy (pickled, for a
        spawned process) starts with none.
        """
        return getattr(self._latest, "params", None)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        del state["_latest"]  # per thread and per process: not carried
        return state  # _plain: shared with a worker torch's pickler sends it to

    def __copy__(self) -> BatchAugment:
        copied = type(self).__new__(type(self))
        copied.__dict__.update(self.__getstate__(), _plain=copy.copy(self._plain))
        copied._latest = threading.local()
        return copied

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._latest = threading.local()

    @property
    def epoch(self) -> int:
        """The :meth:`set_epoch` value (0 before a call)."""
        return self._plain.value

    @epoch.setter
    def epoch(self, epoch: int) -> None:
        self._plain.set(checks.uint(epoch, "epoch", 32))

    def set_epoch(self, epoch: int) -> None:
        """The epoch of calls that give none (and whose indices carry none).

        Once called, it keys such calls, rather than the epoch of the EpochSampler pass
        being read (see ``epoch=`` of :meth:`__call__`); but inside a DataLoader fetch,
        the ``EpochIndex`` values of the batch being fetched come first. Call it before
        ``iter(loader)``: where the augmentation runs in the loader's fetch (a
        ``collate_fn``), workers fetch batches ahead, and a value that changes between
        two batches of one pass warns (``RankaugWarning``), once.
        """
        self.epoch = epoch

    def __call__(
        self,
        images: torch.Tensor,
        *inputs: Any,
        index: Any = None,
        epoch: Any = None,
        return_params: bool = False,
        **kwargs: Any,
    ) -> Any:
        """Augment a ``(B, C, H, W)`` batch (and the ``inputs`` of the ``data_keys``).

        Args:
            images: The batch, on any device.
            *inputs: Boxes, masks, keypoints... in the order of the container's
                ``data_keys`` after the image; for a torchvision transform, tensors with
                one row per sample or sequences of one item per sample.
            index: The samples' dataset indices: a sequence of ints or ``EpochIndex``
                values, or a numpy integer array or int tensor of shape ``(B,)`` (a
                tensor on the batch's device is used there, its values unchecked); one
                integer only for a batch of one (it would key every sample alike).
                Without it, the keys are ``(seed, stream, rank, epoch, step, position)``:
                ``step`` counts the calls of this wrapper (calls made at once in
                several threads take a step each) and ``rank`` is torch.distributed's
                (0 if not initialised), so the same batch differs across ranks and
                steps but not with its indices. Warned once in a DataLoader worker,
                whose copy counts steps of its own.
            epoch: The epoch: an int or one per sample. Defaults to the epoch the
                ``EpochIndex`` values carry; for plain indices (torch's
                ``default_collate`` makes an int tensor of them), inside a DataLoader
                fetch (a ``collate_fn`` that augments) to the epoch the fetched batch's
                ``EpochIndex`` values carry (:mod:`rankaug.batch._fetch`), else to
                :attr:`epoch` once :meth:`set_epoch` was called, else to the epoch of
                the :class:`~rankaug.EpochSampler` pass this thread's DataLoader is
                reading (:mod:`rankaug.sampler_read`), else 0: warned once where passes
                are read but which one cannot be told (two loaders' iterators alive,
                say), once where a CPU index comes again (every epoch would repeat),
                once for indices on a device (not read back to see that), and once in
                a DataLoader worker. Inside a fetch, a :meth:`set_epoch` value that
                changes between two batches of one pass warns once.
            return_params: Also return the kornia parameters applied. Defaults to
                ``False``.
            **kwargs: Passed on to a kornia container's call (``data_keys=`` say); a single
                augmentation takes none (it would read them as overrides of the keyed
                parameters, and ignore a misspelt name).

        Returns:
            Kornia's output, or ``(output, params)`` with ``return_params``. For a
            torchvision transform: the stacked images, or a tuple of them and each
            input's outputs (tensors stacked, sequences as lists); its params are one
            list of ``(transform name, params)`` per sample.

        Raises:
            TypeError: If ``images`` is not a tensor or ``index``/``epoch`` are not
                integers (one, a sequence, or an integer array or tensor),
                ``return_params`` is not a bool, or a keyword argument is one the
                transform's call does not take (any, for a single kornia augmentation
                or a torchvision transform).
            ValueError: If ``images`` is not 4-D or looks channels-last (its last
                dimension 1, 3 or 4 and its second larger than 4), ``index`` or
                ``epoch`` do not have one value per sample (shape ``(B,)``; two
                dimensions are refused) or are out of range, or a draw cannot be
                keyed; for a torchvision transform, if an input does not have one row per sample or
                the samples' outputs have different shapes.
            RuntimeError: If an augmentation drew from torch's global generator (its state
                is restored first; for torchvision, a CUDA generator).
        """
        return_params = checks.boolean(return_params, "return_params")  # before any step
        if kwargs and self._torchvision:
            raise TypeError(
                f"a torchvision v2 transform takes no keyword arguments, got {sorted(kwargs)}"
            )
        if kwargs and not self._keywords.issuperset(kwargs):
            raise TypeError(
                f"{type(self.transform).__name__}'s call here takes the keyword arguments "
                f"{sorted(self._keywords)}, got {sorted(kwargs)} (a single kornia augmentation "
                "takes none: it reads a keyword as an override of its keyed parameters, and "
                "ignores a name it does not know, a misspelt epoch= say)"
            )
        keys = resolve(self, images, index, epoch)  # a refused call has counted nothing
        if self._torchvision:
            output, params = _torchvision.apply(self.transform, keys, images, inputs)
            self._latest.params = params
            return (output, params) if return_params else output
        shape = images.shape
        with keyed_drawing(self._augs, keys):
            params = self.transform.forward_parameters(shape)
        with keyed_applying(self._augs):
            output = self.transform(images, *inputs, params=params, **kwargs)
        self._latest.params = params
        return (output, params) if return_params else output

    def replay(
        self, index: int, epoch: int, image: torch.Tensor, *inputs: Any, **kwargs: Any
    ) -> Any:
        """One sample's output, from its key alone: the same as in any batch it was in.

        Args:
            index: The sample's dataset index.
            epoch: The epoch.
            image: The sample's ``(C, H, W)`` image (or a ``(1, C, H, W)`` batch of it).
            *inputs: Its boxes, masks... as for a call.
            **kwargs: Passed on to the kornia call.

        Returns:
            The augmented image as a ``(1, C, H, W)`` batch (kornia's output; a
            ``tv_tensors.Image`` stays one); it is a call like any other
            (:attr:`last_params` becomes its parameters).

        Raises:
            TypeError: If ``image`` is not a tensor (or as for a call).
            ValueError: If ``image`` is neither ``(C, H, W)`` nor ``(1, C, H, W)`` (or
                as for a call).
        """
        checks.instance(image, "image", torch.Tensor, what="a tensor", optional=False)
        if not (image.dim() == 3 or (image.dim() == 4 and image.shape[0] == 1)):
            # a whole batch was refused as "index must have one value per sample"
            raise ValueError(
                "image must be one sample's (C, H, W) image or a (1, C, H, W) batch of it, "
                f"got shape {tuple(image.shape)}: replay one sample at a time"
            )
        batch = _torchvision.like(image[None], image) if image.dim() == 3 else image
        return self(batch, *inputs, index=[index], epoch=epoch, **kwargs)
