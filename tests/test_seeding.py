from __future__ import annotations

import random
from collections.abc import Iterator

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, Dataset

from rankaug.seeding import WorkerSeeder, seed_everything


@pytest.fixture
def restore_global_state() -> Iterator[None]:
    states = (random.getstate(), np.random.get_state(), torch.get_rng_state())  # noqa: NPY002
    deterministic = torch.are_deterministic_algorithms_enabled()
    yield
    random.setstate(states[0])
    np.random.set_state(states[1])  # noqa: NPY002
    torch.set_rng_state(states[2])
    torch.use_deterministic_algorithms(deterministic)


class GlobalDraws(Dataset[tuple[float, float, float]]):
    def __len__(self) -> int:
        return 4

    def __getitem__(self, index: int) -> tuple[float, float, float]:
        return random.random(), float(np.random.random()), float(torch.rand(()))  # noqa: NPY002


def draws(seeder: WorkerSeeder, loader_seed: int, **kwargs: object) -> list[tuple[float, ...]]:
    loader = DataLoader(
        GlobalDraws(),
        batch_size=None,
        num_workers=2,
        worker_init_fn=seeder,
        generator=torch.Generator().manual_seed(loader_seed),
        **kwargs,  # type: ignore[arg-type]
    )
    return [tuple(float(x) for x in row) for row in loader]


@pytest.mark.usefixtures("restore_global_state")
class TestSeedEverything:
    def test_seeds_all_three_libraries(self) -> None:
        seed_everything(7)
        first = (random.random(), np.random.random(), torch.rand(()))  # noqa: NPY002
        seed_everything(7)
        assert (random.random(), np.random.random(), torch.rand(())) == first  # noqa: NPY002

    def test_deterministic_flag(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
        monkeypatch.setattr(torch.backends.cudnn, "benchmark", True)
        monkeypatch.setattr(torch.backends.cudnn, "deterministic", False)
        seed_everything(1, deterministic=True)
        assert torch.are_deterministic_algorithms_enabled()
        assert torch.backends.cudnn.deterministic
        assert not torch.backends.cudnn.benchmark
        import os

        assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"

    def test_bad_arguments(self) -> None:
        with pytest.raises(ValueError, match=r"seed must be an integer in \[0, 2\*\*32\)"):
            seed_everything(2**32)
        with pytest.raises(TypeError, match="seed must be an integer"):
            seed_everything(1.0)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="deterministic must be True or False"):
            seed_everything(1, deterministic=1)  # type: ignore[arg-type]


class TestWorkerSeeder:
    def test_workers_ranks_and_loader_seeds_differ_and_repeat(self) -> None:
        base = draws(WorkerSeeder(0, rank=0), 1)
        assert draws(WorkerSeeder(0, rank=0), 1) == base
        assert len(set(base)) == len(base)  # the two workers differ
        for other in (
            draws(WorkerSeeder(0, rank=1), 1),
            draws(WorkerSeeder(1, rank=0), 1),
            draws(WorkerSeeder(0, rank=0), 2),  # next iterator (epoch): new loader seed
        ):
            assert not set(other) & set(base)

    def test_a_seed_set_afterwards_is_used(self) -> None:
        # before: the key's template kept the seed it was made with
        seeder = WorkerSeeder(0, rank=0)
        seeder.seed = 1
        assert seeder.seed == 1
        assert draws(seeder, 1) == draws(WorkerSeeder(1, rank=0), 1)
        with pytest.raises(ValueError, match="seed must be"):
            seeder.seed = -1

    def test_a_rank_set_afterwards_is_checked_and_used(self) -> None:
        # before: seeder.rank = "1" was accepted, and failed in every worker at the key
        seeder = WorkerSeeder(0, rank=0)
        with pytest.raises(TypeError, match=r"^rank must be an integer.*got '1'"):
            seeder.rank = "1"  # type: ignore[assignment]
        with pytest.raises(ValueError, match=r"^rank must be .*got -1"):
            seeder.rank = -1
        assert seeder.rank == 0
        seeder.rank = 1
        assert draws(seeder, 1) == draws(WorkerSeeder(0, rank=1), 1)
        seeder.rank = None
        assert seeder.rank is None

    def test_a_then_set_afterwards_is_checked(self) -> None:
        # before: seeder.then = 3 was accepted, and failed in every worker
        seeder = WorkerSeeder(0)
        with pytest.raises(TypeError, match=r"^then must be a callable taking the worker id"):
            seeder.then = 3  # type: ignore[assignment]
        assert seeder.then is None
        seeder.then = _reseed_python_random
        assert seeder.then is _reseed_python_random

    def test_not_additive(self) -> None:
        words = {
            WorkerSeeder(s, rank=r).state_words(0, 5, rank=r).tobytes() for s, r in ((0, 1), (1, 0))
        }
        assert len(words) == 2

    def test_chains_another_worker_init_fn(self) -> None:
        loader = DataLoader(
            GlobalDraws(),
            batch_size=None,
            num_workers=1,
            worker_init_fn=WorkerSeeder(0, then=_reseed_python_random),
        )
        assert next(row[0] for row in loader) == random.Random(99).random()

    def test_outside_a_worker(self) -> None:
        with pytest.raises(RuntimeError, match="runs inside DataLoader workers"):
            WorkerSeeder(0)(0)

    def test_bad_arguments(self) -> None:
        with pytest.raises(ValueError, match="seed must be"):
            WorkerSeeder(-1)
        with pytest.raises(TypeError, match="rank must be"):
            WorkerSeeder(0, rank="0")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="then must be a callable"):
            WorkerSeeder(0, then=3)  # type: ignore[arg-type]


def _reseed_python_random(worker_id: int) -> None:
    random.seed(99)
