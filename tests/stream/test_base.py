from __future__ import annotations

from typing import Any

import torch

from rankaug.stream.base import Window, _resumable, forward_epoch


class detshuffle:
    def __init__(self) -> None:
        self.epoch = -1


class _Pipeline:
    def __init__(self) -> None:
        self.pipeline: list[Any] = [object(), detshuffle()]


class TestForwardEpoch:
    def test_set_epoch_or_webdataset_detshuffle(self) -> None:
        calls: list[int] = []

        class WithSetEpoch:
            def set_epoch(self, epoch: int) -> None:
                calls.append(epoch)

        forward_epoch(WithSetEpoch(), 4)
        assert calls == [4]
        pipeline = _Pipeline()
        forward_epoch(pipeline, 4)  # detshuffle adds one before shuffling: epoch 4
        assert pipeline.pipeline[1].epoch == 3
        forward_epoch(object(), 4)  # nothing to tell: nothing happens

    def test_hugging_faces_shared_epoch_is_written_whole(self) -> None:
        class HuggingFaceLike:
            """``set_epoch`` as datasets 5.2's: a read-modify-write of a shared tensor."""

            def __init__(self) -> None:
                self._epoch = torch.tensor(0).share_memory_()
                self.calls = 0

            def set_epoch(self, epoch: int) -> None:
                self.calls += 1
                self._epoch += epoch - self._epoch  # two workers at once: epoch 2, not 1

        dataset = HuggingFaceLike()
        forward_epoch(dataset, 1)
        forward_epoch(dataset, 1)  # a second worker: still 1
        assert int(dataset._epoch) == 1
        assert dataset.calls == 0


class TestWindow:
    def test_maps_positions_to_the_samples_at_hand(self) -> None:
        window = Window(2)
        window.entries, window.offset = [(5, "a", "A"), (6, "b", "B")], 5
        assert (len(window), window[6]) == (2, "B")


class TestOwnState:
    def test_only_a_state_dict_without_arguments_is_the_streams_own(self) -> None:
        class HuggingFaceLike:
            def state_dict(self) -> dict[str, int]:
                return {}

            def load_state_dict(self, state: dict[str, int]) -> None:
                pass

        class LitdataLike(HuggingFaceLike):
            def state_dict(self, num_samples_yielded: int) -> dict[str, int]:  # type: ignore[override]
                return {}

        assert _resumable(HuggingFaceLike())
        assert not _resumable(LitdataLike())
        assert not _resumable(object())
