"""``rankaug.stream.state``: a streaming wrapper's passes, saved and resumed."""

from __future__ import annotations

import re
from typing import Any

import pytest
from torch.utils.data import IterableDataset, get_worker_info

from rankaug import RandomAugmentWrapper
from tests.stream.helpers import Shards, detection, noise
from tests.stream.test_augment import run


class _Uneven(IterableDataset[dict[str, Any]]):
    """Uneven shares: worker 0 streams 2 samples, worker 1 eight."""

    def __iter__(self) -> Any:
        info = get_worker_info()
        worker = 0 if info is None else info.id
        for k in range(2 if worker == 0 else 8):
            yield detection(10 * worker + k)


def _worker_state(state: dict[str, Any], worker: int) -> Any:
    return state["_snapshot"]["_worker_snapshots"][f"worker_{worker}"]["dataset_state"]


class TestSavedPasses:
    @pytest.mark.filterwarnings("ignore:'set_vital' is deprecated:UserWarning")
    def test_a_worker_whose_pass_had_ended_resumes_with_nothing_left(self) -> None:
        def build() -> Any:
            return RandomAugmentWrapper(_Uneven(), noise, seed=0)

        whole, _ = run(build())
        head, state = run(build(), batches=3)  # worker 0 has ended, worker 1 is at 4 of 8
        rest, _ = run(build(), state=state)
        assert head + rest == whole  # before, worker 0 ran epoch 1 inside the resumed epoch 0
        assert _worker_state(state, 0)["pass"] == {"epoch": 0, "ended": True}
        resumed: Any = build()
        resumed.load_state_dict(_worker_state(state, 0))
        assert (list(resumed), [s["id"] for s in resumed]) == ([], ["s0000", "s0001"])

    @pytest.mark.filterwarnings("ignore:'set_vital' is deprecated:UserWarning")
    def test_a_state_saved_at_an_epochs_end_without_workers_resumes_the_next_epoch(
        self,
    ) -> None:
        # the loader drops the iterator it restores finished and asks for another, which
        # took the loaded pass: an empty epoch, and each epoch after it one pass late
        stateful = pytest.importorskip("torchdata.stateful_dataloader")

        def loader() -> Any:
            train = RandomAugmentWrapper(Shards(4), noise, seed=0)
            return stateful.StatefulDataLoader(train, batch_size=None)

        def epoch(batches: Any) -> list[str]:
            return [f"{s['id']}:{s['noise']}" for s in batches]

        first = loader()
        whole = [epoch(first) for _ in range(3)]
        first = loader()
        epoch(first)
        resumed = loader()
        resumed.load_state_dict(first.state_dict())
        assert [epoch(resumed) for _ in range(2)] == whole[1:]

    @pytest.mark.filterwarnings("ignore:'set_vital' is deprecated:UserWarning")
    def test_a_worker_whose_pass_had_not_started_resumes_on_the_pass_epoch(self) -> None:
        def build() -> Any:
            return RandomAugmentWrapper(Shards(16), noise, seed=0)

        whole, _ = run(build())
        head, state = run(build(), batches=1)  # worker 1 has not started its pass
        rest, _ = run(build(), state=state)
        assert _worker_state(state, 1)["pass"] is None
        assert _worker_state(state, 1)["next_epoch"] == 0
        assert head + rest == whole  # before, worker 1 ran epoch 1 inside the resumed epoch 0

    def test_a_stream_keyed_state_of_another_rank_is_refused(self) -> None:
        saving: Any = RandomAugmentWrapper(Shards(8), noise, seed=0, rank=0)
        passing = iter(saving)
        head = [next(passing)["noise"] for _ in range(3)]
        state = saving.state_dict()
        rest = [s["noise"] for s in passing]
        elsewhere: Any = RandomAugmentWrapper(Shards(8), noise, seed=0, rank=1)
        elsewhere.load_state_dict(state)
        with pytest.raises(
            ValueError, match="on rank 0 for worker 0 in epoch 0, and this is rank 1"
        ):
            next(iter(elsewhere))  # before, it went on with rank 0's draws
        here: Any = RandomAugmentWrapper(Shards(8), noise, seed=0, rank=0)
        here.load_state_dict(state)
        assert (head, [s["noise"] for s in here]) == (head, rest)
        del state["pass"]["rank"]  # a state saved before the rank was: taken as this rank's
        elsewhere.load_state_dict(state)
        assert [s["noise"] for s in elsewhere] == rest

    def test_a_malformed_state_is_refused_naming_its_part(self) -> None:
        # before: KeyError 'generator', AttributeError "'int' object has no attribute 'get'"
        wrapper: Any = RandomAugmentWrapper(Shards(4), noise, seed=0)
        good = wrapper.state_dict()
        with pytest.raises(ValueError, match=r"state\['pass'\] must be a saved pass with"):
            wrapper.load_state_dict({**good, "pass": {"epoch": 0}})
        with pytest.raises(TypeError, match=r"state\['pass'\] must be a saved pass, got 5"):
            wrapper.load_state_dict({**good, "pass": 5})
        with pytest.raises(ValueError, match=r"state\['next_epoch'\] must be an integer"):
            wrapper.load_state_dict({**good, "next_epoch": -1})
        ended = {**good, "pass": {"epoch": 0, "ended": True}}
        wrapper.load_state_dict(ended)
        assert list(wrapper) == []  # an ended pass needs its epoch alone

    def test_a_state_with_another_pass_running_is_refused(self) -> None:
        # before, the state held the latest pass alone: the training pass was lost
        wrapper: Any = RandomAugmentWrapper(Shards(8), noise, seed=0)
        training = iter(wrapper)
        head = [next(training)["noise"] for _ in range(3)]
        validation = iter(wrapper)
        with pytest.raises(RuntimeError, match=re.escape(
            "StreamingAugment.state_dict() saves one pass per worker, and worker 0 of this "
            "process runs other passes beside the latest: epoch 0 at output 3 (the latest: "
            "not started, asked for by iter()); the state would hold the latest alone."
        )):  # fmt: skip
            wrapper.state_dict()
        next(validation)
        with pytest.raises(RuntimeError, match=r"epoch 0 at output 3 \(the latest: epoch 1 at"):
            wrapper.state_dict()
        list(validation)
        with pytest.raises(RuntimeError, match=r"epoch 0 at output 3 \(the latest: epoch 1, ended"):
            wrapper.state_dict()
        training.close()
        assert wrapper.state_dict()["pass"] == {"epoch": 1, "ended": True}
        again = iter(wrapper)  # the passes before have ended: one pass, saved
        assert [next(again)["noise"] for _ in range(3)] != head
        assert wrapper.state_dict()["pass"]["position"] == 3

    def test_a_dropped_pass_is_no_other_pass(self) -> None:
        wrapper: Any = RandomAugmentWrapper(Shards(8), noise, seed=0)
        next(iter(wrapper))  # a look at one sample: the pass is dropped at once
        passing = iter(wrapper)
        next(passing), next(passing)
        state = wrapper.state_dict()  # the pass that runs, not refused
        resumed: Any = RandomAugmentWrapper(Shards(8), noise, seed=0)
        resumed.load_state_dict(state)
        assert (state["pass"]["epoch"], [s["noise"] for s in resumed]) == (
            1,
            [s["noise"] for s in passing],
        )
