from __future__ import annotations

import pickle

import pytest
from torch.utils.data._utils import ExceptionWrapper  # type: ignore[attr-defined]

from rankaug.errors import SampleError


class TestSampleError:
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
