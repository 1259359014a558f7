from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from torch.utils.data import ConcatDataset, DataLoader, SequentialSampler, Subset

from rankaug import (
    EpochIndex,
    EpochSampler,
    KeyedDataset,
    MosaicDataset,
    RandomAugmentWrapper,
    SampleContext,
    make_rng,
    nesting,
)
from rankaug.context import pinning_rank
from rankaug.keys import KeyedRandom


def identity(sample: Any, rng: np.random.Generator) -> Any:
    return sample


DATA = [{"image": np.zeros((4, 4, 3), np.uint8)}] * 6


class TestKeyedDataset:
    @pytest.mark.parametrize("keying", ["stream", "sample", "sample_rank"])
    def test_keys_follow_the_published_specification(self, keying: str) -> None:
        # The wrappers build their words themselves, for speed: they must be make_rng's.
        wrapped = RandomAugmentWrapper(DATA, identity, seed=2**40 + 3, keying=keying)  # type: ignore[arg-type]
        ours = wrapped.key_random(SampleContext(5, rank=2, worker_id=1, epoch=7)).generator
        if keying == "stream":
            spec = make_rng(2**40 + 3, rank=2, worker_id=1, epoch=7, stream=wrapped.stream)
        else:
            rank = 2 if keying == "sample_rank" else None
            spec = make_rng(2**40 + 3, epoch=7, index=5, rank=rank, stream=wrapped.stream)
        assert ours.integers(0, 2**63, size=4).tolist() == spec.integers(0, 2**63, size=4).tolist()

    def test_default_stream_names_the_class_and_depth(self) -> None:
        inner = MosaicDataset(DATA, seed=0, output_size=8)
        outer = RandomAugmentWrapper(inner, identity, seed=0)
        again = RandomAugmentWrapper(outer, identity, seed=0)
        assert (inner.depth, outer.depth, again.depth) == (1, 2, 3)
        assert len({inner.stream, outer.stream, again.stream}) == 3
        assert RandomAugmentWrapper(DATA, identity, seed=0, stream="mine").stream == (
            RandomAugmentWrapper(DATA, identity, seed=1, stream="mine").stream
        )

    def test_a_pinned_rank_wins_over_the_wrappers(self) -> None:
        # a replay pins the record's rank for the wrappers it loads from
        wrapped = RandomAugmentWrapper(DATA, identity, seed=0, keying="sample_rank", rank=1)
        streamed = RandomAugmentWrapper(DATA, identity, seed=0, keying="stream", rank=1)
        with pinning_rank(4):
            assert wrapped.context(2).rank == 4
            assert streamed.context(2).rank == 1  # its streams stay this process's
        assert wrapped.context(2).rank == 1

    @pytest.mark.parametrize(
        ("name", "value"), [("seed", 1), ("keying", "sample"), ("stream", "other"), ("dataset", [])]
    )
    def test_a_setting_the_key_is_made_from_cannot_be_assigned(self, name: str, value: Any) -> None:
        # before: the attribute changed and the key's template, made from it, did not
        wrapped = RandomAugmentWrapper(DATA, identity, seed=0, keying="stream")
        before = getattr(wrapped, name)
        with pytest.raises(
            AttributeError,
            match=rf"RandomAugmentWrapper\.{name} cannot be "
            rf"assigned.*make a new RandomAugmentWrapper with the {name}",
        ):
            setattr(wrapped, name, value)
        with pytest.raises(AttributeError, match=rf"\.{name} cannot be deleted"):
            delattr(wrapped, name)
        assert getattr(wrapped, name) == before
        wrapped.rank = 3  # the rank is read with every sample: it can be set
        assert wrapped.context(0).rank == 3

    @pytest.mark.parametrize("keying", ["stream", "sample_rank"])
    def test_a_rank_set_afterwards_is_checked_and_used(
        self, keying: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # before: rank="1" or 1.5 was taken (stream keying), -1 and 2**40 too (sample_rank)
        wrapped = RandomAugmentWrapper(DATA, identity, seed=0, keying=keying)  # type: ignore[arg-type]
        for bad, error in (
            (-1, ValueError),
            (2**40, ValueError),
            ("1", TypeError),
            (1.5, TypeError),
        ):
            with pytest.raises(error, match=r"^rank must be an integer"):
                wrapped.rank = bad  # type: ignore[assignment]
            assert wrapped.rank is None
        wrapped.rank = 2
        assert (wrapped.rank, wrapped.context(0).rank) == (2, 2)
        monkeypatch.delenv("RANK", raising=False)
        wrapped.rank = None  # resolved again: no process group here, no RANK, so 0
        assert wrapped.context(0).rank == 0

    def test_a_rank_set_before_the_constructor_follows_the_fixed_settings_rule(self) -> None:
        # before: a subclass's self.rank = 1, then the constructor's rank=None: the
        # constructor's None replaced it without a word (its samples keyed as rank 0)
        class Ranked(RandomAugmentWrapper[Any]):
            def __init__(self, rank: int | None, given: int | None) -> None:
                self.rank = rank
                super().__init__(DATA, identity, seed=0, rank=given)

        class Mosaic(MosaicDataset[Any]):
            def __init__(self, rank: int | None) -> None:
                self.rank = rank  # given to the constructor as its rank: taken
                super().__init__(DATA, seed=0, rank=rank)

        assert (Ranked(1, 1).rank, Ranked(None, None).rank, Mosaic(2).rank) == (1, None, 2)
        for rank, given in ((1, None), (1, 2), (None, 1)):
            with pytest.raises(
                AttributeError,
                match=rf"^Ranked\.rank cannot be assigned: it was set before the constructor, "
                rf"which sets rank itself, to another value \(set: {rank}; the constructor's: "
                rf"{given}\).*give the constructor rank={rank}, or assign it after",
            ):
                Ranked(rank, given)
        ranked = Mosaic(2)
        ranked.rank = 3  # after the constructor: assigned, as ever
        assert (ranked.rank, ranked.context(0).rank) == (3, 3)

    def test_a_fixed_setting_survives_pickling_and_copies(self) -> None:
        wrapped = RandomAugmentWrapper(DATA, identity, seed=5, keying="sample")
        for copied in (pickle.loads(pickle.dumps(wrapped)), copy.deepcopy(wrapped)):
            assert copied.seed == 5
            with pytest.raises(AttributeError, match="seed cannot be assigned"):
                copied.seed = 6

    def test_is_abstract(self) -> None:
        with pytest.raises(NotImplementedError):
            KeyedDataset(DATA, seed=0)[0]

    def test_repr(self) -> None:
        wrapped = RandomAugmentWrapper(DATA, identity, seed=3, keying="sample")
        wrapped.set_epoch(2)
        assert repr(wrapped) == (
            "RandomAugmentWrapper(list of 6, seed=3, keying='sample', epoch=2)"
        )


class TestInnerDatasets:
    def test_walks_subsets_and_concats_and_stops_at_keyed(self) -> None:
        deepest = RandomAugmentWrapper(DATA, identity, seed=0)
        keyed = RandomAugmentWrapper(Subset(deepest, [0]), identity, seed=0)
        top = ConcatDataset([Subset(keyed, [0]), DATA])  # type: ignore[list-item]
        found = list(nesting.walk(top, KeyedDataset))
        assert keyed in found
        assert deepest not in found  # keyed's own set_epoch goes on from there
        assert DATA in found


class Draws(KeyedDataset[tuple[int, int, int]]):
    """(index, epoch, first draw): what the key gave this sample."""

    def augment(self, context: SampleContext, keyed: KeyedRandom) -> tuple[int, int, int]:
        inner = self.load(context.index, context)
        first = int(keyed.generator.integers(2**62))
        return context.index, context.epoch, first if inner is None else first ^ inner[2]


class Leaf:
    def __len__(self) -> int:
        return 6

    def __getitem__(self, index: int) -> None:
        return None


class TestEpochFromTheIndex:
    @pytest.mark.parametrize("keying", ["stream", "sample", "sample_rank"])
    def test_the_index_epoch_wins_over_set_epoch(self, keying: str) -> None:
        keyed = Draws(Leaf(), seed=0, keying=keying)  # type: ignore[arg-type]
        keyed.set_epoch(9)
        assert keyed[EpochIndex(2, epoch=3)][1] == 3
        assert keyed[2][1] == 9
        reference = Draws(Leaf(), seed=0, keying=keying)  # type: ignore[arg-type]
        reference.set_epoch(3)
        reference[2]  # a stream goes on where epoch 3 stood
        assert keyed[EpochIndex(4, epoch=3)] == reference[4]

    def test_its_context_holds_the_plain_position(self) -> None:
        keyed = Draws(Leaf(), seed=0)
        for index, position in ((EpochIndex(2, epoch=3), 2), (EpochIndex(-1, epoch=3), 5)):
            context = keyed.context(index)
            assert (type(context.index), context.index, context.epoch) == (int, position, 3)
        with pytest.raises(IndexError, match="index 6 is out of range for a dataset of length 6"):
            keyed.context(EpochIndex(6, epoch=3))

    def test_inner_wrappers_get_the_epoch_through_plain_wrappers(self) -> None:
        deepest = Draws(Leaf(), seed=1, keying="sample")
        middle = Draws(ConcatDataset([Subset(deepest, [5, 4, 3]), Subset(deepest, [0, 1, 2])]),
                       seed=1, keying="sample")  # fmt: skip
        top = Draws(Subset(middle, list(range(6))), seed=1, keying="sample")
        top_epoch = {top[EpochIndex(i, epoch=7)] for i in range(6)}
        again = {top[EpochIndex(i, epoch=7)] for i in range(6)}
        assert top_epoch == again
        # the same as setting epoch 7 on every wrapper by hand
        for wrapper in (deepest, middle, top):
            wrapper.set_epoch(7)
        assert {top[i] for i in range(6)} == top_epoch
        deepest.set_epoch(0)  # an inner wrapper left behind: the index still wins
        assert {top[EpochIndex(i, epoch=7)] for i in range(6)} == top_epoch

    def test_mosaic_schedule_follows_the_index(self) -> None:
        from rankaug.datasets import SyntheticDetection

        data = SyntheticDetection(8, image_size=32)
        mosaic = MosaicDataset(data, seed=0, output_size=32, epochs=4, close_mosaic=1)
        assert mosaic[EpochIndex(1, epoch=2)]["mosaic"]["applied"]
        assert not mosaic[EpochIndex(1, epoch=3)]["mosaic"]["applied"]
        assert mosaic[EpochIndex(1, epoch=3)]["mosaic"]["epoch"] == 3
        ramp = MosaicDataset(data, seed=0, output_size=32, p=epoch_is_even)
        assert [ramp[EpochIndex(0, epoch=e)]["mosaic"]["applied"] for e in range(4)] == [
            True, False, True, False,
        ]  # fmt: skip


def epoch_is_even(epoch: int) -> float:
    return 1.0 if epoch % 2 == 0 else 0.0


# torchdata 0.11 calls torch.set_vital, which torch 2.13 deprecates
SET_VITAL = pytest.mark.filterwarnings("ignore:'set_vital' is deprecated:UserWarning")


def stateful_loader(dataset: Any, **options: Any) -> Any:
    """torchdata's ``StatefulDataLoader`` (an optional extra)."""
    stateful = pytest.importorskip("torchdata.stateful_dataloader")
    return stateful.StatefulDataLoader(dataset, **options)


class TestState:
    def test_stream_positions_round_trip_for_nested_wrappers(self) -> None:
        inner = RandomAugmentWrapper(DATA, noise, seed=4)
        outer = RandomAugmentWrapper(inner, noise, seed=4)
        for i in range(3):
            outer[EpochIndex(i, epoch=1)]
        state = outer.state_dict()
        assert [w["class"] for w in state["wrappers"]] == ["RandomAugmentWrapper"] * 2
        expected = [outer[EpochIndex(i, epoch=1)]["image"] for i in range(3, 6)]
        fresh_inner = RandomAugmentWrapper(DATA, noise, seed=4)
        fresh = RandomAugmentWrapper(fresh_inner, noise, seed=4)
        fresh.load_state_dict(pickle.loads(pickle.dumps(state)))
        resumed = [fresh[EpochIndex(i, epoch=1)]["image"] for i in range(3, 6)]
        assert all((a == b).all() for a, b in zip(expected, resumed, strict=True))
        cold = RandomAugmentWrapper(RandomAugmentWrapper(DATA, noise, seed=4), noise, seed=4)
        assert not (cold[EpochIndex(3, epoch=1)]["image"] == expected[0]).all()

    def test_python_random_state_is_kept_too(self) -> None:
        keyed = PyRandom(Leaf(), seed=0)
        for i in range(2):
            keyed[i]
        state = keyed.state_dict()
        expected = [keyed[i] for i in range(2, 4)]
        fresh = PyRandom(Leaf(), seed=0)
        fresh.load_state_dict(state)
        assert [fresh[i] for i in range(2, 4)] == expected

    def test_per_sample_keyings_need_no_state(self) -> None:
        keyed = RandomAugmentWrapper(DATA, noise, seed=0, keying="sample")
        keyed[0]
        assert keyed.state_dict()["wrappers"][0]["streams"] == []

    def test_a_state_from_another_structure_is_refused(self) -> None:
        outer = RandomAugmentWrapper(RandomAugmentWrapper(DATA, noise, seed=0), noise, seed=0)
        alone = RandomAugmentWrapper(DATA, noise, seed=0)
        with pytest.raises(ValueError, match="state does not match this wrapper"):
            alone.load_state_dict(outer.state_dict())
        with pytest.raises(ValueError, match=r"state must be a dict from KeyedDataset\.state_dict"):
            alone.load_state_dict({"streams": []})

    def test_every_live_stream_is_kept(self) -> None:
        keyed = Draws(Leaf(), seed=0)
        draws = [keyed[EpochIndex(i, epoch=e)][2] for e, i in ((0, 0), (1, 0), (1, 1))]
        state = keyed.state_dict()
        assert [s["epoch"] for s in state["wrappers"][0]["streams"]] == [0, 1]
        expected = [keyed[EpochIndex(i, epoch=e)][2] for e, i in ((1, 2), (0, 1))]
        fresh = Draws(Leaf(), seed=0)
        fresh.load_state_dict(state)
        assert [fresh[EpochIndex(i, epoch=e)][2] for e, i in ((1, 2), (0, 1))] == expected
        assert len(set(draws + expected)) == 5

    def test_a_state_from_another_rank_is_refused_where_it_would_start_over(self) -> None:
        saving = Draws(Leaf(), seed=0, rank=0)
        saving[EpochIndex(0, epoch=2)]
        loading = Draws(Leaf(), seed=0, rank=1)
        loading.load_state_dict(saving.state_dict())
        for _ in range(2):  # refused at every try
            with pytest.raises(ValueError, match="on rank 0 for worker 0 in epoch 2, and th"):
                loading[EpochIndex(1, epoch=2)]
        # the next epoch starts afresh, as it would have (a checkpoint at an epoch's end)
        assert (
            loading[EpochIndex(0, epoch=3)] == Draws(Leaf(), seed=0, rank=1)[EpochIndex(0, epoch=3)]
        )

    @SET_VITAL
    @pytest.mark.parametrize("workers", [0, 2])
    def test_a_loader_state_from_another_rank_is_refused(self, workers: int) -> None:
        """What PyTorch Lightning does: every rank loads the loader state rank 0 saved."""

        def loader(rank: int) -> Any:
            return stateful_loader(Draws(Leaf(), seed=0, rank=rank), batch_size=2,
                                   num_workers=workers)  # fmt: skip

        saving = loader(0)
        batches = iter(saving)
        next(batches)
        state = saving.state_dict()
        for _ in batches:  # to the end: its workers stop now, not when collected (10 s)
            pass
        resuming = loader(1)
        resuming.load_state_dict(state)
        # worker 1 had not started when the state was saved: worker 0 is refused
        with pytest.raises(ValueError, match="on rank 0 for worker 0 in epoch 0, and this is"):
            list(resuming)

    @SET_VITAL
    @pytest.mark.parametrize("workers", [0, 2])
    def test_a_resume_with_a_validation_pass_mid_epoch_is_exact(self, workers: int) -> None:
        def run(state: dict[str, Any] | None) -> tuple[list[tuple[int, ...]], dict[str, Any]]:
            keyed = Draws([None] * 16, seed=0)
            val = halves(keyed)[1]
            # the wrapper itself, whose state the loader saves (not a Subset of it)
            loader = stateful_loader(keyed, sampler=EpochSampler(list(range(12))),
                                     batch_size=3, num_workers=workers)  # fmt: skip
            val_loader = DataLoader(val, batch_size=2, num_workers=workers)
            if state is not None:
                loader.load_state_dict(state)
            got: list[tuple[int, ...]] = []
            saved: dict[str, Any] = {}
            for epoch in range(0 if state is None else 1, 3):
                first = 2 if (state is not None and epoch == 1) else 0
                for step, batch in enumerate(loader, start=first):
                    got += rows(batch)
                    if step == 1:
                        got += [row for pair in val_loader for row in rows(pair)]
                    if (epoch, step) == (1, 1) and state is None:
                        saved = loader.state_dict()  # after the validation pass
            return got, saved

        uninterrupted, state = run(None)
        train = [row for row in uninterrupted if row[0] < 12]
        assert len({draw for _, _, draw in train}) == len(train) == 36
        resumed, _ = run(state)
        assert resumed == uninterrupted[16 + 6 + 4 :]


def halves(keyed: KeyedDataset[Any]) -> tuple[Subset[Any], Subset[Any]]:
    """A training and a validation part of one augmented dataset."""
    return Subset(keyed, list(range(12))), Subset(keyed, list(range(12, len(keyed))))


def rows(batch: list[Any]) -> list[tuple[int, ...]]:
    return list(zip(*(column.tolist() for column in batch), strict=True))


class TestStreamKeying:
    @pytest.mark.parametrize("workers", [0, 2])
    def test_a_validation_pass_mid_epoch_leaves_the_training_stream_going(
        self, workers: int
    ) -> None:
        def run(validate: bool) -> list[tuple[int, ...]]:
            train, val = halves(Draws([None] * 16, seed=0))
            loader = DataLoader(train, sampler=EpochSampler(SequentialSampler(train)),
                                batch_size=3, num_workers=workers)  # fmt: skip
            val_loader = DataLoader(val, batch_size=2, num_workers=workers)
            got = []
            for _ in range(2):
                for step, batch in enumerate(loader):
                    got += rows(batch)
                    if validate and step == 1:  # val_check_interval=0.5
                        list(val_loader)
            return got

        train, alone = run(validate=True), run(validate=False)
        assert [epoch for _, epoch, _ in train] == [0] * 12 + [1] * 12
        assert len({draw for _, _, draw in train}) == len(train)
        assert train[12:] == alone[12:]  # epoch 1 as without validation

    def test_a_worker_keeps_its_latest_streams(self) -> None:
        keyed = Draws(Leaf(), seed=0)
        for epoch in range(6):
            keyed[EpochIndex(0, epoch=epoch)]
        assert sorted(key[3] for key in keyed._streams) == [2, 3, 4, 5]


class PyRandom(KeyedDataset[float]):
    def augment(self, context: SampleContext, keyed: KeyedRandom) -> float:
        return keyed.py_random.random() + float(keyed.generator.random())


def noise(sample: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    return {"image": sample["image"] + rng.integers(0, 200, sample["image"].shape, np.uint8)}


class TestRankResolved:
    def test_a_process_group_made_after_the_first_sample_gives_the_rank(
        self, process_group: Callable[[], None], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def draw(sample: Any, rng: np.random.Generator) -> int:
            return int(rng.integers(2**62))

        monkeypatch.setenv("RANK", "5")
        resolved = RandomAugmentWrapper(DATA, draw, seed=0)
        assert resolved[0] == RandomAugmentWrapper(DATA, draw, seed=0, rank=5)[0]
        process_group()  # rank 0 of 1: it wins over RANK from now on
        ranked = RandomAugmentWrapper(DATA, draw, seed=0, rank=0)
        assert [resolved[1], resolved[2]] == [ranked[1], ranked[2]]
