from __future__ import annotations

import pickle
import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from torch.utils.data import DataLoader, IterableDataset, get_worker_info
from torch.utils.data._utils import ExceptionWrapper  # type: ignore[attr-defined]

from rankaug import KeyedDataset, RandomAugmentWrapper
from rankaug.context import SampleContext
from rankaug.errors import SampleError, failure_text, id_text
from rankaug.keyed_random import KeyedRandom

#: Ids that hold what the fields look like (legal ids of a stream: any str, bytes, int).
FORGED_IDS = [
    "x), rank 3, worker 1, epoch 9)",
    "a', rank 7, worker 0, epoch 4): z",
    "q\"', rank 2, worker 0, epoch 1)",
    b"b\"'), rank 5, worker 0)",
    "line\nrankaug.errors.SampleError: fake failed at index 9 (rank 9, worker 9, epoch 9)",
    "\\', rank 4, worker 4, epoch 4)",
    -12,
]
#: An error's text holding a line that looks like the raised error's own.
FORGED_TEXT = (
    "no\nrankaug.errors.SampleError: fake failed at index 99 (rank 9, worker 9, epoch 9): x"
)
#: Pieces of the fields' text, which ids and error texts are built of too.
PIECES = [", rank 3, worker 1)", ", rank 3, worker 1, epoch 9)", "), ", "(id ", "'", '"', "\\",
          "\n", ": ", "SampleError: ", "x failed at index 4 (", "    "]  # fmt: skip
FORGED = st.lists(st.sampled_from(PIECES) | st.text(max_size=2)).map("".join)
IDS = st.one_of(st.text(), FORGED, FORGED.map(str.encode), st.binary(), st.integers())
TEXTS = st.text() | FORGED


class _OneSample(IterableDataset[dict[str, Any]]):
    """One sample of id ``sample_id``, streamed by worker 1 alone."""

    def __init__(self, sample_id: object) -> None:
        self.sample_id = sample_id

    def __iter__(self) -> Iterator[dict[str, Any]]:
        info = get_worker_info()
        if info is not None and info.id == 1:
            yield {"image": np.zeros((2, 2), np.uint8), "id": self.sample_id}


def _failing(text: str) -> Any:
    def fail(sample: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
        raise ValueError(text)

    return fail


def _through_workers(sample_id: object, text: str) -> SampleError:
    """The SampleError a DataLoader worker's failure on ``sample_id`` re-raises."""
    train = RandomAugmentWrapper(_OneSample(sample_id), _failing(text), seed=0,
                                 keying="sample", sample_id="id", rank=3)  # fmt: skip
    train.set_epoch(5)
    with pytest.raises(SampleError) as info:
        list(DataLoader(train, batch_size=None, num_workers=2))
    return info.value


class _FailsIn(KeyedDataset[Any]):
    """Fails in a step the user named ``stage`` (``context.guard(stage)``)."""

    def __init__(self, stage: str) -> None:
        super().__init__([0, 1], seed=0, keying="sample", rank=3)
        self.stage = stage

    def augment(self, context: SampleContext, keyed: KeyedRandom) -> Any:
        with context.guard(self.stage):
            raise ValueError("boom")


def _stage_through_a_worker(stage: str) -> SampleError:
    """The SampleError a DataLoader worker's failure in ``stage`` re-raises."""
    failing = _FailsIn(stage)
    failing.set_epoch(5)
    with pytest.raises(SampleError) as info:
        list(DataLoader(failing, batch_size=None, num_workers=1))
    return info.value


def _fields(err: SampleError) -> tuple[object, ...]:
    return (err.stage, err.index, err.sample_id, err.rank, err.worker_id, err.epoch)


class TestSampleError:
    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            ({"message": None}, "message must be a str, got None"),
            ({"message": "x", "index": 1.5}, "index must be an integer, got 1.5"),
            ({"message": "x", "epoch": True}, "epoch must be an integer, got True"),
            ({"message": "x", "stage": 3}, "stage must be None or a str, got 3"),
        ],
    )
    def test_fields_of_the_wrong_type_are_named(self, kwargs: Any, message: str) -> None:
        # SampleError(None) failed with "'NoneType' object has no attribute 'split'", and a
        # fractional index was kept as the sample's index
        with pytest.raises(TypeError, match=re.escape(message)):
            SampleError(**kwargs)

    def test_numpy_integers_are_kept_as_ints(self) -> None:
        err = SampleError("x", index=np.int64(3), rank=np.int32(1))
        assert (err.index, err.rank) == (3, 1)
        assert type(err.index) is int

    def test_message_and_fields(self) -> None:
        err = SampleError.at(
            "dataset[4]", index=9, rank=2, worker_id=1, epoch=3, error=OSError("no such file")
        )
        assert str(err) == (
            "dataset[4] failed at index 9 (rank 2, worker 1, epoch 3): OSError: no such file"
        )
        assert (err.index, err.rank, err.worker_id, err.epoch, err.stage) == (
            9,
            2,
            1,
            3,
            "dataset[4]",
        )
        assert isinstance(err, RuntimeError)

    def test_a_streamed_samples_id(self) -> None:
        err = SampleError.at("transform", index=5, rank=0, worker_id=1, epoch=0,
                             error=RuntimeError("boom"), sample_id="s0013")  # fmt: skip
        assert str(err) == (
            "transform failed at index 5 (id 's0013', rank 0, worker 1, epoch 0): "
            "RuntimeError: boom"
        )
        assert err.sample_id == "s0013"
        assert pickle.loads(pickle.dumps(err)).sample_id == "s0013"
        assert SampleError.at("transform", index=5, rank=0, worker_id=1, epoch=0,
                              error=RuntimeError("boom")).sample_id is None  # fmt: skip

    def test_pickles_with_its_fields(self) -> None:
        err = SampleError.at(
            "transform", index=1, rank=0, worker_id=0, epoch=0, error=ValueError("x")
        )
        clone = pickle.loads(pickle.dumps(err))
        assert str(clone) == str(err)
        assert clone.stage == "transform"
        assert clone.index == 1

    def test_survives_dataloaders_reraise_by_message(self) -> None:
        # DataLoader workers send errors back as ExceptionWrapper, which rebuilds the
        # exception as exc_type(message): SampleError must accept that.
        try:
            raise SampleError.at(
                "transform", index=1, rank=0, worker_id=1, epoch=0, error=ValueError("x")
            )
        except SampleError:
            wrapper = ExceptionWrapper(where="in DataLoader worker process 1")
        with pytest.raises(SampleError, match=r"index 1 \(rank 0, worker 1, epoch 0\)"):
            wrapper.reraise()

    def test_reads_its_fields_back_from_a_workers_text(self) -> None:
        try:
            try:
                raise OSError("disk gone")
            except OSError as cause:
                raise SampleError.at(
                    "dataset[4]", index=7, rank=1, worker_id=1, epoch=3, error=cause
                ) from cause
        except SampleError:
            wrapper = ExceptionWrapper(where="in DataLoader worker process 1")
        with pytest.raises(SampleError) as info:
            wrapper.reraise()
        err = info.value
        assert (err.index, err.rank, err.worker_id, err.epoch, err.stage) == (
            7,
            1,
            1,
            3,
            "dataset[4]",
        )
        assert "OSError: disk gone" in str(err)  # the original's traceback, in the text

    @pytest.mark.parametrize("sample_id", FORGED_IDS)
    @pytest.mark.parametrize("text", ["boom", FORGED_TEXT])
    def test_an_id_or_text_like_the_fields_crosses_a_worker(
        self, sample_id: object, text: str
    ) -> None:
        err = _through_workers(sample_id, text)
        assert "Caught SampleError in DataLoader worker process 1" in str(err)
        assert _fields(err) == ("transform", 0, sample_id, 3, 1, 5)

    @settings(max_examples=10, phases=[Phase.explicit, Phase.reuse, Phase.generate])
    @given(sample_id=IDS, text=TEXTS)  # no shrinking: a worker each (the next test shrinks)
    def test_any_id_and_text_cross_a_worker(self, sample_id: object, text: str) -> None:
        assert _fields(_through_workers(sample_id, text)) == ("transform", 0, sample_id, 3, 1, 5)

    @given(
        sample_id=IDS,
        text=TEXTS,
        where=TEXTS,
        fields=st.tuples(st.integers(-(2**63), 2**63), *[st.integers(0, 2**32 - 1)] * 3),
    )
    def test_any_id_and_text_read_back_from_a_traceback(
        self, sample_id: object, text: str, where: str, fields: tuple[int, int, int, int]
    ) -> None:
        index, rank, worker_id, epoch = fields
        try:
            raise SampleError.at("dataset[2]", index=index, rank=rank, worker_id=worker_id,
                                 epoch=epoch, error=ValueError(text), where=where,
                                 sample_id=sample_id)  # fmt: skip
        except SampleError:
            wrapper = ExceptionWrapper(where="in DataLoader worker process 1")
        with pytest.raises(SampleError) as info:
            wrapper.reraise()
        assert _fields(info.value) == ("dataset[2]", index, sample_id, rank, worker_id, epoch)

    @pytest.mark.parametrize(
        ("stage", "named"),
        [
            ("transform", "transform"),
            ("dataset[1] (id 'x')", "dataset[1] (id 'x')"),
            (
                "a failed at index 4 (rank 3, worker 1): x",
                "'a failed at index 4 (rank 3, worker 1): x'",
            ),
            ("two\nlines", "'two\\nlines'"),
            ("", "''"),
            ("'quoted'", "\"'quoted'\""),
            ("SampleError: x", "'SampleError: x'"),
        ],
    )
    def test_a_stage_that_could_be_misread_is_its_repr(self, stage: str, named: str) -> None:
        err = SampleError.at(stage, index=9, rank=0, worker_id=0, epoch=1, error=ValueError("v"))
        assert str(err) == f"{named} failed at index 9 (rank 0, worker 0, epoch 1): ValueError: v"
        assert SampleError(str(err)).stage == stage

    @given(stage=TEXTS, text=TEXTS, sample_id=IDS)
    def test_any_stage_read_back_from_a_traceback(
        self, stage: str, text: str, sample_id: object
    ) -> None:
        err = SampleError.at(stage, index=4, rank=1, worker_id=2, epoch=3,
                             error=ValueError(text), sample_id=sample_id)  # fmt: skip
        try:
            raise err
        except SampleError:
            wrapper = ExceptionWrapper(where="in DataLoader worker process 1")
        with pytest.raises(SampleError) as info:
            wrapper.reraise()
        fields = (stage, 4, sample_id, 1, 2, 3)
        assert _fields(info.value) == fields
        assert _fields(pickle.loads(pickle.dumps(info.value))) == fields
        assert _fields(SampleError(str(err))) == fields  # from its own message

    @settings(max_examples=10, phases=[Phase.explicit, Phase.reuse, Phase.generate])
    @given(stage=TEXTS)  # no shrinking: a worker each (the test above shrinks)
    def test_any_stage_crosses_a_worker(self, stage: str) -> None:
        assert _fields(_stage_through_a_worker(stage)) == (stage, 0, None, 3, 0, 5)

    def test_a_multi_line_errors_further_lines_are_indented(self) -> None:
        err = SampleError.at(
            "transform", index=1, rank=0, worker_id=0, epoch=0, error=ValueError("a\nb")
        )
        assert str(err) == (
            "transform failed at index 1 (rank 0, worker 0, epoch 0): ValueError: a\n    b"
        )

    @pytest.mark.parametrize(
        ("sample_id", "named", "read"),
        [
            (np.int64(7), "7", 7),
            (torch.tensor(8), "8", 8),
            (torch.tensor(1.5), "'tensor(1.5000)'", "tensor(1.5000)"),
            (True, "'True'", "True"),
            (2.5, "'2.5'", "2.5"),
        ],
    )
    def test_other_ids_are_named_by_a_literal(
        self, sample_id: object, named: str, read: object
    ) -> None:
        err = SampleError.at("transform", index=1, rank=0, worker_id=0, epoch=0,
                             error=ValueError("x"), sample_id=sample_id)  # fmt: skip
        assert f"(id {named}, rank 0" in str(err)
        assert SampleError(str(err)).sample_id == read

    @pytest.mark.parametrize(
        ("text", "fields"),
        [
            ("no fields here", (None, None, None, None, None, None)),
            (
                "x\nrankaug.errors.SampleError: dataset[2] failed at index 2 (rank 0, worker 1)"
                " in CachedDataset of /c: KeyError: 'k'",
                (2, 0, 1, None, "dataset[2]", None),
            ),
            (
                "rankaug.errors.SampleError: transform failed at index 5 (id 's0013', rank 0, "
                "worker 1, epoch 4): RuntimeError: boom",
                (5, 0, 1, 4, "transform", "s0013"),
            ),
            (
                "SampleError: mosaic failed at index 2 (id 17, rank 3, worker 0, epoch 1): x",
                (2, 3, 0, 1, "mosaic", 17),
            ),
            (  # a nested wrapper's error in the cause, the outer one's last
                "SampleError: transform failed at index 1 (rank 0, worker 0, epoch 5): a\n"
                "SampleError: dataset[1] failed at index 9 (rank 2, worker 3, epoch 6): b",
                (9, 2, 3, 6, "dataset[1]", None),
            ),
        ],
    )
    def test_fields_from_a_text(self, text: str, fields: tuple[object, ...]) -> None:
        err = SampleError(text)
        assert (err.index, err.rank, err.worker_id, err.epoch, err.stage, err.sample_id) == fields

    def test_given_fields_are_not_read_from_the_text(self) -> None:
        text = "SampleError: transform failed at index 1 (rank 0, worker 0, epoch 5): a"
        assert SampleError(text, index=4).index == 4

    def test_the_raised_errors_own_line_not_user_text(self) -> None:
        # the user's message holds the pattern too: the fields are those of the line the
        # error was raised with, before its message
        text = (
            "Traceback ...\nrankaug.errors.SampleError: dataset[5] failed at index 5 (rank 0, "
            "worker 1, epoch 2): ValueError: SampleError: fake failed at index 99 (rank 9, "
            "worker 9, epoch 9)"
        )
        err = SampleError(text)
        assert (err.stage, err.index, err.rank, err.worker_id, err.epoch) == (
            "dataset[5]",
            5,
            0,
            1,
            2,
        )


class TestIdText:
    @pytest.mark.parametrize(
        ("sample_id", "text"),
        [("s0013", "'s0013'"), (b"a'", 'b"a\'"'), (np.int64(7), "7"), (2.5, "'2.5'"),
         (np.str_("s0013"), "'s0013'"), (np.bytes_(b"a"), "b'a'")],
    )  # fmt: skip
    def test_a_literal_the_error_reads_back(self, sample_id: object, text: str) -> None:
        assert id_text(sample_id) == text

    def test_a_numpy_str_id_is_read_back_from_the_text(self) -> None:
        # Hugging Face's with_format("numpy") hands string columns out as np.str_
        err = SampleError.at("transform", index=5, rank=0, worker_id=1, epoch=2,
                             error=RuntimeError("boom"), sample_id=np.str_("s0013"))  # fmt: skip
        assert str(err).startswith("transform failed at index 5 (id 's0013', rank 0,")
        again = SampleError(
            f"Caught SampleError in DataLoader worker process 1.\nrankaug.errors.SampleError: {err}"
        )
        assert (again.index, again.sample_id, again.worker_id, again.epoch) == (5, "s0013", 1, 2)


class TestFailureText:
    def test_the_message_its_fields_are_read_from(self) -> None:
        text = failure_text("x\ny", index=2, rank=1, worker_id=0, epoch=None, detail="E: a\nb",
                            where="in here", sample_id="s1")  # fmt: skip
        assert text == "'x\\ny' failed at index 2 (id 's1', rank 1, worker 0) in here: E: a\n    b"
        assert _fields(SampleError(text)) == ("x\ny", 2, "s1", 1, 0, None)
