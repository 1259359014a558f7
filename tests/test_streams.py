from __future__ import annotations

import threading

import numpy as np
import pytest

from rankaug import streams
from rankaug.keys import KeyedRandom, make_seed_sequence


def key(rank: int, worker_id: int, epoch: int) -> np.random.SeedSequence:
    return make_seed_sequence(0, rank=rank, worker_id=worker_id, epoch=epoch)


def stream(epoch: int) -> KeyedRandom:
    return KeyedRandom(key(0, 0, epoch))


class TestKeep:
    def test_each_worker_keeps_its_latest_streams(self) -> None:
        live = streams.Streams()
        others = {(7, 1, 0, 0): stream(0), (8, 0, 0, 0): stream(0)}  # another worker, pid
        live.update(others)
        for epoch in range(streams.KEPT + 2):
            streams.keep(live, (7, 0, 0, epoch), stream(epoch))
        mine = [key[3] for key in live if key[:2] == (7, 0)]
        assert mine == list(range(2, streams.KEPT + 2))  # the least recently used went first
        assert all(live[key] is value for key, value in others.items())
        assert live.dropped == {(7, 0, 0, 0), (7, 0, 0, 1)}  # started again, they warn

    def test_drops_the_least_recently_used_not_the_oldest_started(self) -> None:
        live = streams.Streams()
        for epoch in range(streams.KEPT):
            streams.keep(live, (7, 0, 0, epoch), stream(epoch))
        assert live.last == (7, 0, 0, streams.KEPT - 1)
        streams.used(live, (7, 0, 0, 0), threading.Lock())  # the first, drawn from again
        assert live.last == (7, 0, 0, 0)
        streams.keep(live, (7, 0, 0, 9), stream(9))
        assert [key[3] for key in live] == [2, 3, 0, 9]  # epoch 1 went
        assert live.dropped == {(7, 0, 0, 1)}
        streams.used(live, (7, 0, 0, 1), threading.Lock())  # dropped: nothing to move
        assert (7, 0, 0, 1) not in live
        assert live.last == (7, 0, 0, 9)

    def test_returns_the_stream_it_keeps(self) -> None:
        live = streams.Streams()
        keyed = stream(3)
        assert streams.keep(live, (1, 0, 0, 3), keyed) is keyed
        assert live == {(1, 0, 0, 3): keyed}


class TestRestored:
    def entry(self, rank: int) -> dict[str, object]:
        keyed = stream(1)
        keyed.generator.random()
        live = {(5, 0, rank, 0): stream(0), (5, 0, rank, 1): keyed}
        return {"class": "Probe", "stream": 0, "streams": streams.positions(live, 5)}

    def test_rebuilds_every_stream_least_recently_used_first(self) -> None:
        saved = self.entry(rank=2)
        live = streams.restored(saved, key, 9)
        assert list(live) == [(9, 0, 2, 0), (9, 0, 2, 1)]
        assert streams.positions(live, 9) == saved["streams"]


class TestEntries:
    LAYOUT = (("Aug", 7),)

    @staticmethod
    def state(wrappers: object) -> dict[str, object]:
        return {"format": streams.FORMAT, "wrappers": wrappers}

    def test_gives_the_entries_of_a_matching_state(self) -> None:
        saved = streams.saved([("Aug", 7, [])])
        assert streams.entries(saved, self.LAYOUT) == [{"class": "Aug", "stream": 7, "streams": []}]

    def test_names_the_part_of_a_malformed_state(self) -> None:
        # before: KeyError 'wrappers', "'int' object is not iterable", KeyError 'rank'
        with pytest.raises(TypeError, match=r"state\['wrappers'\] must be a list of entries"):
            streams.entries({"format": streams.FORMAT}, self.LAYOUT)
        with pytest.raises(TypeError, match=r"state\['wrappers'\]\[0\] must be a wrapper's"):
            streams.entries(self.state([3]), self.LAYOUT)
        entry = {"class": "Aug", "stream": 7, "streams": 4}
        with pytest.raises(TypeError, match=r"\['streams'\] must be a list, got 4"):
            streams.entries(self.state([entry]), self.LAYOUT)
        entry["streams"] = [{"worker_id": 0}]
        with pytest.raises(ValueError, match=r"\['streams'\]\[0\] must be a stream's position"):
            streams.entries(self.state([entry]), self.LAYOUT)
        entry["streams"] = [{"worker_id": 0, "rank": -1, "epoch": 0, "generator": {},
                             "py_random": None}]  # fmt: skip
        with pytest.raises(ValueError, match=r"\['rank'\] must be an integer >= 0, got -1"):
            streams.entries(self.state([entry]), self.LAYOUT)


class TestCheckPass:
    def test_checks_a_running_or_ended_pass(self) -> None:
        running = {"epoch": 2, "position": 3, "generator": None, "py_random": None,
                   "source": None}  # fmt: skip
        assert streams.check_pass(running) == running
        assert streams.check_pass({"epoch": 1, "ended": True}) == {"epoch": 1, "ended": True}
        assert streams.check_pass(None) is None
        with pytest.raises(ValueError, match=r"state\['pass'\]\['position'\] must be an integer"):
            streams.check_pass({**running, "position": -1})
        with pytest.raises(TypeError, match=r"state\['pass'\]\['epoch'\] must be an integer"):
            streams.check_pass({"epoch": "0", "ended": True})


class TestCheckRank:
    def test_refuses_to_start_over_where_another_rank_stood(self) -> None:
        saved = streams.ranks({(5, 1, 0, 3): stream(3)})
        with pytest.raises(
            ValueError,
            match=r"into Probe holds its keying='stream' position on rank 0 for worker 1 in "
            r"epoch 3, and this is rank 1: .*each rank's own loader state, or use "
            r"keying='sample'",
        ):
            streams.check_rank(saved, (5, 1, 1, 3), "Probe")

    def test_lets_other_epochs_workers_and_the_same_rank_start(self) -> None:
        saved = streams.ranks({(5, 1, 0, 3): stream(3)})
        for key in ((5, 1, 1, 4), (5, 0, 1, 3), (6, 1, 1, 3), (5, 1, 0, 3)):
            streams.check_rank(saved, key, "Probe")
