"""``StreamingAugment``: :class:`~rankaug.RandomAugmentWrapper` over a stream.

``RandomAugmentWrapper(stream, transform, ...)`` makes one (see
:mod:`rankaug.stream.detect` for which datasets are streams). Each sample read is
handed, as it comes, to the map-style wrapper's ``augment`` with its key's random
state: outputs come in the stream's order, one per sample, nothing read ahead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from rankaug.keys import Keying
from rankaug.samples import SampleAdapter, check_adapter
from rankaug.stream.access import NoRandomAccess
from rankaug.stream.base import StreamDataset, default_stream
from rankaug.stream.state import Pass
from rankaug.stream.view import Window

if TYPE_CHECKING:
    from rankaug.wrapper import RandomAugmentWrapper


__all__ = ["StreamingAugment"]

T_co = TypeVar("T_co", covariant=True)


class StreamingAugment(NoRandomAccess, StreamDataset[T_co]):
    """Keyed augmentation of every sample of an iterable dataset, itself iterable.

    The arguments of :class:`~rankaug.RandomAugmentWrapper`, plus ``sample_id``. Errors
    name the sample's position in its worker's pass as its index, and its id.

    Args:
        dataset: An ``IterableDataset`` or another re-iterable of samples.
        transform: As :class:`~rankaug.RandomAugmentWrapper`'s.
        seed: The run's base seed, ``0 <= seed < 2**64``.
        keying: ``"stream"`` (``(seed, rank, worker, epoch)`` continued through the
            pass) or ``"sample"`` (``(seed, epoch, sample id)``). Defaults to ``"stream"``.
        rank: The rank; ``None`` resolves it. Defaults to ``None``.
        stream: The key's stream word or name; ``None`` derives the map-style
            wrapper's, distinct for stacked wrappers. Defaults to ``None``.
        adapter: As :class:`~rankaug.RandomAugmentWrapper`'s. Defaults to ``None``.
        sample_id: A key of the samples holding their id, or a callable
            ``sample -> str | int``; needed by ``keying="sample"``. Defaults to ``None``.

    Example:
        >>> import numpy as np
        >>> from torch.utils.data import IterableDataset
        >>> from rankaug import RandomAugmentWrapper
        >>> class Stream(IterableDataset):
        ...     def __iter__(self):
        ...         for i in range(3):
        ...             yield {"image": np.zeros((4, 4), np.uint8), "id": f"s{i}"}
        >>> def noise(sample, rng):
        ...     return {**sample, "image": sample["image"] + rng.integers(0, 9, (4, 4), np.uint8)}
        >>> train = RandomAugmentWrapper(Stream(), noise, seed=0, keying="sample", sample_id="id")
        >>> type(train).__name__, [s["id"] for s in train]
        ('StreamingAugment', ['s0', 's1', 's2'])
        >>> first, second = list(train), list(train)  # the next passes: epochs 1 and 2
        >>> bool((first[0]["image"] == second[0]["image"]).all())
        False
    """

    _keyed: RandomAugmentWrapper[Any]  # the map-style wrapper each sample goes through

    def __init__(
        self,
        dataset: Any,
        transform: Any,
        *,
        seed: int,
        keying: Keying = "stream",
        rank: int | None = None,
        stream: int | str | None = None,
        adapter: SampleAdapter | None = None,
        sample_id: str | Callable[[Any], Any] | None = None,
    ) -> None:
        from rankaug.wrapper import RandomAugmentWrapper  # it imports this package

        _check_box_format(transform, dataset)  # the stream's, not the window's
        self._window = Window()
        if stream is None:
            stream = default_stream(RandomAugmentWrapper, dataset)
        keyed: RandomAugmentWrapper[Any] = RandomAugmentWrapper(
            self._window, transform, seed=seed, keying="sample", rank=rank, stream=stream,
            adapter=check_adapter(adapter, dataset=dataset),  # the stream's, not the window's
        )  # fmt: skip
        super().__init__(dataset, keyed, keying=keying, sample_id=sample_id)

    @property
    def transform(self) -> Any:
        """The transform; setting another puts it to use (on the samples drawn afterwards)."""
        return self._keyed.transform

    @transform.setter
    def transform(self, transform: Any) -> None:
        _check_box_format(transform, self.dataset)
        self._keyed.transform = transform

    @property
    def adapter(self) -> SampleAdapter:
        """The sample adapter; setting another (``None``: the default) puts it to use."""
        return self._keyed.adapter

    @adapter.setter
    def adapter(self, adapter: SampleAdapter | None) -> None:
        self._keyed.adapter = check_adapter(adapter, dataset=self.dataset)

    def outputs(self, live: Pass, samples: Iterator[Any], skip: int) -> Iterator[T_co]:
        """Each sample augmented in turn (the first ``skip`` passed over)."""
        window, augment = self._window, self._keyed.augment
        for sample in samples:
            position = live.position
            live.position = position + 1
            if position < skip:
                continue
            sample_id = self.sample_id(live, position, sample)
            window.entries, window.offset = ((position, sample_id, sample),), position
            context = live.context(position, sample_id)
            out: T_co = augment(context, self.key_random(live, sample_id))
            window.entries = ()
            yield out


def _check_box_format(transform: Any, dataset: object) -> None:
    """Refuse an ``A.BboxParams`` format other than the one the stream declares.

    What :class:`~rankaug.RandomAugmentWrapper` checks against its dataset: the map-style
    wrapper here reads a window, which declares none.

    Raises:
        ValueError: If ``dataset`` (or the datasets inside it) declares another format.
    """
    from rankaug._albumentations import bbox_params_format  # (OpenCV: when one is used)
    from rankaug.params import check_bbox_params_format

    check_bbox_params_format(bbox_params_format(transform), dataset)
