"""``RandomAugmentWrapper``: keyed augmentation for any map-style dataset."""

from __future__ import annotations

from collections.abc import Callable
from threading import current_thread
from typing import Any, Final, TypeVar

from torch.utils.data import Dataset, get_worker_info

from rankaug import _process
from rankaug.checks._messages import type_error
from rankaug.context import ResolvedContext, SampleContext
from rankaug.epoch import EpochIndex, carry_epoch, drop_epoch
from rankaug.errors import SampleError
from rankaug.keyed import KeyedDataset
from rankaug.keys import KeyedRandom, Keying
from rankaug.params import check_bbox_params_format
from rankaug.sample_epoch import EpochFallback, sample_epoch
from rankaug.samples import SampleAdapter, check_adapter
from rankaug.stream.detect import Streamable
from rankaug.transforms import make_driver

__all__ = ["RandomAugmentWrapper"]

T_co = TypeVar("T_co", covariant=True)
# the steps __getitem__ writes out: a subclass or an instance that has one of its own, or
# a class patched with another, goes through them
_STEPS: Final = frozenset({"context", "key_random", "augment", "load"})


class RandomAugmentWrapper(Streamable, KeyedDataset[T_co]):
    """Apply ``transform`` to every sample of ``dataset`` with keyed randomness.

    All randomness comes from a key — ``(seed, rank, worker_id, epoch)`` with the
    default ``keying="stream"``, ``(seed, epoch, index)`` with ``keying="sample"`` — so
    augmentations differ across ranks, workers and epochs even when every rank called
    ``torch.manual_seed(0)``, and a rerun of the same configuration repeats them bit for
    bit. The wrapper never reads or changes ``random``, ``np.random`` or torch's global
    generator (torch-global transforms run under a keyed generator and the caller's
    state is put back). Several threads may call it at once, each sample drawing from its
    own key (each thread calls its own copy of an albumentations pipeline; see
    :mod:`rankaug.transforms`): key per sample there.

    Samples keep their shape: dicts stay dicts with their extra keys untouched,
    ``(image, target)`` pairs stay pairs, and numpy, PIL and tensor images come back as
    the same type (see :mod:`rankaug.samples`). ``len()`` is the wrapped dataset's.
    Assigning ``transform`` or ``adapter`` afterwards puts the new one to use (an
    albumentations pipeline is copied when given: later changes to it are not seen).

    Over an ``IterableDataset`` (or any iterable without ``__getitem__``/``__len__``)
    it is a :class:`~rankaug.stream.StreamingAugment` instead (same arguments, plus
    ``sample_id=``): see the streaming guide.

    Args:
        dataset: A map-style dataset, or a stream.
        transform: A rankaug image transform (:class:`~rankaug.HSVJitter`, its draw
            recorded under ``"hsv"``), an albumentations ``Compose`` or transform, a callable taking
            ``rng=`` (called as ``transform(sample, rng=generator)``), or a callable
            drawing from torch's global generator, such as a torchvision v2 transform
            (see :mod:`rankaug.transforms`).
        seed: The run's base seed, ``0 <= seed < 2**64``.
        keying: ``"stream"``, ``"sample"`` or ``"sample_rank"`` (see
            :mod:`rankaug.keyed`).
        rank: The rank; ``None`` resolves it from the process group, or the ``RANK``
            environment variable, or 0.
        stream: The key's stream word or name; ``None`` derives one, distinct for stacked
            wrappers.
        adapter: Converts samples for albumentations and back; ``None`` uses
            :class:`~rankaug.samples.DefaultAdapter`.
        sample_id: Over a stream only (see the streaming guide); refused here.

    Raises:
        TypeError: If ``dataset`` is not map-style, ``transform`` is not callable, or an
            argument has the wrong type.
        ValueError: If an argument is out of range, or an albumentations pipeline's
            ``A.BboxParams`` format is not the ``box_format`` the dataset declares
            (``YoloFolder``, ``CocoDetection``; also when ``transform`` is assigned).

    Example:
        >>> import numpy as np
        >>> data = [{"image": np.zeros((8, 8, 3), np.uint8)} for _ in range(4)]
        >>> def jitter(sample, rng):
        ...     return {"image": sample["image"] + rng.integers(0, 50, dtype=np.uint8)}
        >>> train = RandomAugmentWrapper(data, jitter, seed=0)
        >>> len(train), train[1]["image"].shape
        (4, (8, 8, 3))
        >>> a = RandomAugmentWrapper(data, jitter, seed=0, keying="sample")
        >>> b = RandomAugmentWrapper(data, jitter, seed=0, keying="sample")
        >>> bool((a[2]["image"] == b[2]["image"]).all())
        True
    """

    _streaming = "StreamingAugment"  # the class a stream gets (rankaug.stream.detect)

    def __init__(
        self,
        dataset: Dataset[T_co] | Any,
        transform: Any,
        *,
        seed: int,
        keying: Keying = "stream",
        rank: int | None = None,
        stream: int | str | None = None,
        adapter: SampleAdapter | None = None,
        sample_id: str | Callable[[Any], Any] | None = None,
    ) -> None:
        if sample_id is not None:
            if not isinstance(sample_id, str) and not callable(sample_id):
                raise type_error(
                    "sample_id", "None here (a key or a callable, over a stream)", sample_id
                )
            raise ValueError(
                f"sample_id={sample_id!r} is for streams (an IterableDataset): a map-style "
                "dataset's samples are keyed by their index"
            )
        super().__init__(dataset, seed=seed, keying=keying, rank=rank, stream=stream)
        self._adapter = check_adapter(adapter, dataset=dataset)
        self.transform = transform
        self._fused = self._may_fuse()  # see __getitem__
        self._worker: tuple[int, Any] | None = None  # (pid, its get_worker_info()), fixed

    @property
    def transform(self) -> Any:
        """The transform; setting another (a validation pipeline, say) puts it to use."""
        return self._transform

    @transform.setter
    def transform(self, transform: Any) -> None:
        if "_changes" not in self.__dict__:  # a subclass's, before the constructor sets it
            self._transform = transform
            return
        # the driver holds private copies: it is made again, so no stale copy stays in use
        driver = make_driver(transform, self._adapter)
        # an albumentations pipeline's A.BboxParams format, against the dataset's
        check_bbox_params_format(getattr(driver, "box_format", None), self.dataset)
        self._driver = driver
        self._transform = transform
        self._changes.changed()  # workers made before go on with the old one: refused

    @property
    def adapter(self) -> SampleAdapter:
        """The sample adapter; setting another (``None``: the default) puts it to use."""
        return self._adapter

    @adapter.setter
    def adapter(self, adapter: SampleAdapter | None) -> None:
        if "_changes" not in self.__dict__:  # a subclass's, before the constructor sets it
            self._adapter = adapter  # type: ignore[assignment]  # the constructor checks
            return
        checked = check_adapter(adapter, dataset=self.dataset)
        self._driver = make_driver(self._transform, checked)
        self._adapter = checked
        self._changes.changed()

    def augment(self, context: SampleContext, keyed: KeyedRandom) -> T_co:
        """Load the sample and apply the transform with the sample's keyed random state."""
        sample = self.load(context.index, context)
        # context.guard("transform") written out, as load() is: it runs for every sample
        try:
            out: T_co = self._driver(sample, keyed)
        except SampleError:
            raise
        except Exception as error:
            raise context.failure("transform", error) from error
        return out

    def __getitem__(self, index: int) -> T_co:
        changes = self._changes
        if changes.read() != changes.seen:  # a persistent worker's copy, made before
            raise changes.stale(self)
        dataset = self.dataset
        kind = type(index)
        steps = type(self)  # a subclass's own, or one patched on a class (mock.patch.object)
        if not (
            self._fused
            and steps.load is _LOAD
            and steps.augment is _AUGMENT
            and steps.key_random is _KEY_RANDOM
            and steps.context is _CONTEXT
            and (kind is int or isinstance(index, EpochIndex))
            and 0 <= index < len(dataset)
        ):
            context = self.context(index)
            return self.augment(context, self.key_random(context))
        # The common case: context(), key_random() (a stream drawn from last, by this
        # thread), load() and augment() written out in this one frame, with no context
        # made unless a step fails. It runs right after the transform's pixel work has
        # taken the processor's caches, where each call, object and lookup less counts.
        pid = _process._pid
        worker = self._worker  # a process's worker info is set before it loads a sample
        if worker is None or worker[0] != pid:
            worker = self._worker = (pid, get_worker_info())
        info = worker[1]
        if kind is int:
            position = index
            epoch = _sample_epoch(index, self._epoch, info is not None, self._class_name)
        else:
            position, epoch = index.real, index.epoch  # type: ignore[attr-defined]  # EpochIndex
        worker_id = 0 if info is None else info.id
        rank = self._rank
        if rank is None:
            rank = self._rank_now()
        key = (pid, worker_id, rank, epoch)
        streams = self._streams
        keyed = streams.get(key)
        if keyed is None or key != streams.last or self._drawers.get(key) is not current_thread():
            context = ResolvedContext(position, rank=rank, worker_id=worker_id, epoch=epoch)
            keyed = self.key_random(context)  # started, made the last, its drawer recorded
        token = carry_epoch(epoch)
        try:
            sample = dataset[position]
        except SampleError:
            raise
        except Exception as error:
            stage = f"dataset[{position}]"
            raise self._failure(stage, error, position, rank, worker_id, epoch) from error
        finally:
            drop_epoch(token)
        try:
            out: T_co = self._driver(sample, keyed)
        except SampleError:
            raise
        except Exception as error:
            raise self._failure("transform", error, position, rank, worker_id, epoch) from error
        return out

    def _may_fuse(self) -> bool:
        """Whether __getitem__ may write out the steps: stream keying, none the instance's own."""
        return self.keying == "stream" and vars(self).keys().isdisjoint(_STEPS)

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name in _STEPS:  # a step of the instance's own (wrapped.load = ...): used
            object.__setattr__(self, "_fused", False)

    def __delattr__(self, name: str) -> None:
        super().__delattr__(name)
        if name in _STEPS and "_fused" in vars(self):
            object.__setattr__(self, "_fused", self._may_fuse())

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["_worker"] = None  # another process's, once unpickled
        return state

    @staticmethod
    def _failure(
        stage: str, error: Exception, position: int, rank: int, worker_id: int, epoch: int
    ) -> SampleError:
        """What ``context.failure`` gives, for the context __getitem__ did not make."""
        context = ResolvedContext(position, rank=rank, worker_id=worker_id, epoch=epoch)
        return context.failure(stage, error)


def _sample_epoch(index: int, fallback: EpochFallback, in_worker: bool, owner: str) -> int:
    """``sample_epoch`` a frame below ``__getitem__``, as ``context()`` calls it.

    Its warnings (a lost epoch, ``set_epoch`` late) name the frame that many levels up:
    the line that indexed the wrapper, not the one that called that line.
    """
    return sample_epoch(index, fallback, in_worker, owner)


# the steps __getitem__ writes out, as this module defines them
_CONTEXT: Final = RandomAugmentWrapper.context
_KEY_RANDOM: Final = RandomAugmentWrapper.key_random
_AUGMENT: Final = RandomAugmentWrapper.augment
_LOAD: Final = RandomAugmentWrapper.load
