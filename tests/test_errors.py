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
