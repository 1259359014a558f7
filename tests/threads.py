"""Helpers of the thread-safety tests: threads that meet between a wrapper's steps.

A race between threads that share a wrapper shows only when one thread runs between
another's "set the random state" and "draw from it". :class:`Meeting` makes that happen
every time: each of ``parties`` threads waits at :meth:`Meeting.wait` until all have
arrived, so every thread has set its state before any draws. Copies of a transform
holding it (the wrappers deep-copy albumentations pipelines) share the one meeting.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import albumentations as A
import numpy as np

T = TypeVar("T")

PARTIES = 4


class Meeting:
    """A barrier that deep copies and pickles share (``None`` once pickled: no meeting)."""

    def __init__(self, parties: int = PARTIES) -> None:
        self.barrier: threading.Barrier | None = None
        self.parties = parties

    def __deepcopy__(self, memo: dict[int, Any]) -> Meeting:
        return self

    def __getstate__(self) -> dict[str, Any]:
        return {"barrier": None, "parties": self.parties}

    def wait(self) -> None:
        """Wait for the other threads, while a :meth:`run` is on; return at once otherwise."""
        barrier = self.barrier
        if barrier is not None:
            barrier.wait()

    def run(self, call: Callable[[int], T], items: Sequence[int]) -> list[T]:
        """``call`` on every item from ``parties`` threads at once, meeting on every call.

        ``len(items)`` must be a multiple of ``parties``: each round of the meeting takes
        one call of each thread (a thread waiting there takes no other item).
        """
        assert len(items) % self.parties == 0
        self.barrier = threading.Barrier(self.parties, timeout=10)
        try:
            with ThreadPoolExecutor(self.parties) as pool:
                return list(pool.map(call, items))
        finally:
            self.barrier = None


class MeetingTransform(A.ImageOnlyTransform):  # type: ignore[misc]
    """An albumentations transform that draws nothing and meets the other threads.

    Put first in a pipeline, it holds each thread after the wrapper has handed the
    pipeline its random state and before any later transform draws from it.
    """

    def __init__(self, meeting: Meeting) -> None:
        super().__init__(p=1.0)
        self.meeting = meeting

    def apply(self, img: np.ndarray, **params: Any) -> np.ndarray:
        self.meeting.wait()
        return img

    def get_transform_init_args_names(self) -> tuple[str, ...]:
        return ("meeting",)


def meeting_pipeline(meeting: Meeting) -> A.Compose:
    """A pipeline whose every draw comes after the meeting."""
    return A.Compose(
        [
            MeetingTransform(meeting),
            A.Affine(rotate=(-30, 30), translate_percent=(-0.1, 0.1), p=1),
            A.RandomBrightnessContrast(p=1),
            A.HorizontalFlip(p=0.5),
        ]
    )


class MeetingId(str):
    """A sample id whose key is made only once the other threads' ids are too.

    A streaming wrapper keys a sample by its id after setting the sample at hand and
    before loading it: meeting there, every thread has set its own before any loads.
    """

    meeting: Meeting

    def encode(self, encoding: str = "utf-8", errors: str = "strict") -> bytes:
        self.meeting.wait()
        return super().encode(encoding, errors)


class ThreadStreams:
    """An iterable whose every pass streams its own samples: pass ``p`` has ids ``p-0``...

    Sample ``i`` of pass ``p`` is a ``32x32x3`` image of value ``10 * p + i`` with one box.
    """

    def __init__(self, n: int, meeting: Meeting) -> None:
        self.n, self.meeting = n, meeting
        self._passes = 0
        self._lock = threading.Lock()

    def __iter__(self) -> Any:
        with self._lock:
            p, self._passes = self._passes, self._passes + 1
        for i in range(self.n):
            sample_id = MeetingId(f"{p}-{i}")
            sample_id.meeting = self.meeting
            yield {
                "image": np.full((32, 32, 3), 10 * p + i, np.uint8),
                "bboxes": np.array([[2.0, 2.0, 20.0, 20.0]], np.float32),
                "labels": np.array([i % 5], np.int64),
                "id": sample_id,
            }

    def run(self, wrapper: Any) -> list[list[Any]]:
        """Each of the meeting's threads iterates ``wrapper`` once, all at once."""
        return self.meeting.run(lambda _: list(wrapper), range(self.meeting.parties))


def passes_named(outputs: list[list[Any]], ids: Callable[[Any], Any]) -> list[set[str]]:
    """The passes whose samples each thread's outputs name (``ids(output)``), sorted.

    Threads that each read only their own pass give ``[{"0"}, {"1"}, ...]``.
    """
    named = [{str(i).split("-")[0] for output in thread for i in ids(output)} for thread in outputs]
    return sorted(named, key=sorted)
