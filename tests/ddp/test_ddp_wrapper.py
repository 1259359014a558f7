"""RandomAugmentWrapper and WorkerSeeder under real DDP: 2 gloo ranks, each having
called ``torch.manual_seed(0)``, DataLoaders with 2 workers, fork and spawn, persistent
workers on and off — the seeds' scenario — plus the controls that show the bug.

One launch: each rank runs every configuration, then runs the forked ones again from
new objects (fresh worker processes, the rank's global state moved on). Spawned
workers are fresh interpreters (own hash seed, nothing inherited but the pickle), so
"spawn gives what fork gives" is itself the check across processes; spawn is run with
persistent workers only (non-persistent spawned workers only repeat the pickling that
persistent ones do, at four worker starts a rank).
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from pathlib import Path
from typing import Any

import albumentations as A
import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, Dataset, DistributedSampler, get_worker_info

from rankaug import RandomAugmentWrapper, WorkerSeeder
from tests import ahead
from tests.ddp.harness import digest, launch

pytestmark = [pytest.mark.ddp, pytest.mark.timeout(600)]
ALBUMENTATIONS_X = tuple(int(part) for part in A.__version__.split(".")[:2]) >= (2, 1)

WORLD = 2
LENGTH = 16  # 8 samples per rank and epoch, 4 per worker
EPOCHS = 2
CONFIGS = [("fork", True), ("fork", False), ("spawn", True)]
# The spawned configuration runs the wrapper and the seeder ("seeder": global-random
# partners, worker_init_fn=WorkerSeeder) in one loader: its workers start once for both.


def pipeline(seed: int | None = None) -> A.Compose:
    return A.Compose(
        [
            A.Affine(rotate=(-30, 30), translate_percent=(-0.1, 0.1), scale=(0.8, 1.2), p=1),
            A.RandomBrightnessContrast(p=1),
        ],
        seed=seed,
    )


class FixedImage(Dataset[dict[str, Any]]):
    """The same image at every index: any difference in the outputs is randomness."""

    def __len__(self) -> int:
        return LENGTH

    def __getitem__(self, index: int) -> dict[str, Any]:
        ramp = np.arange(40 * 40 * 3, dtype=np.int64).reshape(40, 40, 3)
        return {"image": (ramp * 7 % 251).astype(np.uint8), "index": index}


class Probe(Dataset[tuple[int, int, str]]):
    """Record (index, worker id, fingerprint of the image) for each sample."""

    def __init__(self, dataset: Any) -> None:
        self.dataset = dataset

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: int) -> tuple[int, int, str]:
        sample = self.dataset[index]
        info = get_worker_info()
        return index, -1 if info is None else info.id, digest(sample["image"])


class AlbumentationsOnly(Dataset[dict[str, Any]]):
    """The usual pipeline without rankaug: a Compose called inside __getitem__."""

    def __init__(self, transform: A.Compose) -> None:
        self.source = FixedImage()
        self.transform = transform

    def __len__(self) -> int:
        return LENGTH

    def __getitem__(self, index: int) -> dict[str, Any]:
        return self.transform(**self.source[index])


class GlobalRandomPartners(Dataset[tuple[int, int, str]]):
    """YOLOv5's load_mosaic draws its partner indices from the global ``random``."""

    def __len__(self) -> int:
        return LENGTH

    def __getitem__(self, index: int) -> tuple[int, int, str]:
        partners = [random.randint(0, LENGTH - 1) for _ in range(3)]
        info = get_worker_info()
        return index, -1 if info is None else info.id, str(partners)


def additive_worker_init(worker_id: int) -> None:
    """The seeds' recipe: seed every library with rank + seed (worker id ignored)."""
    import torch.distributed as dist

    seed = dist.get_rank() + 0
    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 - the recipe under test
    torch.manual_seed(seed)


def run_epochs(
    dataset: Any,
    sampled: Any,
    *,
    num_workers: int,
    ctx: str | None,
    persistent: bool,
    worker_init_fn: Any = None,
    set_epoch: bool = True,
) -> list[list[Any]]:
    sampler = DistributedSampler(sampled, seed=0)
    loader = DataLoader(
        sampled,
        sampler=sampler,
        batch_size=None,
        num_workers=num_workers,
        persistent_workers=persistent and num_workers > 0,
        multiprocessing_context=ctx if num_workers > 0 else None,
        worker_init_fn=worker_init_fn,
    )
    records = []
    torch.manual_seed(0)  # each configuration plays a program that has just started
    for epoch in range(EPOCHS):
        sampler.set_epoch(epoch)
        if set_epoch:
            dataset.set_epoch(epoch)
        for step, (index, worker, *values) in enumerate(loader):
            records.append([epoch, step, int(index), int(worker), *values])
    return records


class Both(Dataset[tuple[int, int, str, str]]):
    """A wrapper's probe and the global-random partners, from one index."""

    def __init__(self, probe: Probe) -> None:
        self.probe, self.partners = probe, GlobalRandomPartners()

    def __len__(self) -> int:
        return LENGTH

    def __getitem__(self, index: int) -> tuple[int, int, str, str]:
        index, worker, fingerprint = self.probe[index]
        return index, worker, fingerprint, self.partners[index][2]


def spawned() -> dict[str, Any]:
    """The spawned persistent workers: the rank must travel with the pickled wrapper
    and seeder (WorkerSeeder does not change the keyed wrapper's draws)."""
    wrapped = RandomAugmentWrapper(FixedImage(), pipeline(), seed=0)
    records = run_epochs(
        wrapped, Both(Probe(wrapped)), num_workers=2, ctx="spawn", persistent=True,
        worker_init_fn=WorkerSeeder(0),
    )  # fmt: skip
    return {
        "stream/spawn/True": [record[:5] for record in records],
        "seeder": [[*record[:4], record[5]] for record in records],
    }


RERUN = ("stream/fork/False", "sample/2", "seeder/fresh")  # forked: cheap to run again


def rank_main(rank: int, world_size: int) -> dict[str, Any]:
    """Every configuration, then ``RERUN`` again under the prefix ``rerun/``."""
    results = configurations(None)
    results.update({f"rerun/{key}": value for key, value in configurations(RERUN).items()})
    return results


def configurations(only: tuple[str, ...] | None) -> dict[str, Any]:
    """Every configuration, or only those named."""
    results: dict[str, Any] = {}
    wanted = (lambda key: True) if only is None else (lambda key: key in only)
    if only is None:
        results.update(spawned())
    for ctx, persistent in CONFIGS:
        if ctx == "spawn" or not wanted(f"stream/{ctx}/{persistent}"):
            continue
        wrapped = RandomAugmentWrapper(FixedImage(), pipeline(), seed=0)
        results[f"stream/{ctx}/{persistent}"] = run_epochs(
            wrapped, Probe(wrapped), num_workers=2, ctx=ctx, persistent=persistent
        )
    for workers in (0, 2):
        if not wanted(f"sample/{workers}"):
            continue
        wrapped = RandomAugmentWrapper(FixedImage(), pipeline(), seed=0, keying="sample")
        results[f"sample/{workers}"] = run_epochs(
            wrapped, Probe(wrapped), num_workers=workers, ctx="fork", persistent=True
        )
    partners = GlobalRandomPartners()
    if wanted("seeder/fresh"):
        results["seeder/fresh"] = run_epochs(
            partners,
            partners,
            num_workers=2,
            ctx="fork",
            persistent=False,
            set_epoch=False,
            worker_init_fn=WorkerSeeder(0),
        )
    if only is None:
        control = Probe(AlbumentationsOnly(pipeline(seed=0)))
        results["control/compose_seed"] = run_epochs(
            control, control, num_workers=2, ctx="fork", persistent=False, set_epoch=False
        )
        results["control/additive"] = run_epochs(
            partners,
            partners,
            num_workers=2,
            ctx="fork",
            persistent=False,
            set_epoch=False,
            worker_init_fn=additive_worker_init,
        )
    return results


def launch_once(tmp: Path) -> list[Any]:
    """The one launch of this file (a job of tests.ahead)."""
    return launch(rank_main, WORLD, tmp)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Any], list[Any]]:
    first = ahead.result("ddp-wrapper", lambda: tmp_path_factory.mktemp("ddp-wrapper"))
    second = [{key: result[f"rerun/{key}"] for key in RERUN} for result in first]
    return first, second


def rows(run: list[dict[str, Any]], key: str) -> list[tuple[Any, ...]]:
    """(rank, epoch, step, index, worker, fingerprint) for every sample of one config."""
    return [(rank, *record) for rank, result in enumerate(run) for record in result[key]]


class TestStreamKeyingUnderDDP:
    @pytest.mark.parametrize(("ctx", "persistent"), CONFIGS)
    def test_every_rank_worker_and_epoch_draws_differently(
        self, runs: Any, ctx: str, persistent: bool
    ) -> None:
        samples = rows(runs[0], f"stream/{ctx}/{persistent}")
        assert len(samples) == LENGTH * EPOCHS
        groups = {(r[0], r[4]) for r in samples}
        assert groups == set(itertools.product(range(WORLD), range(2)))
        # The image is fixed, so equal fingerprints would mean equal random draws.
        fingerprints = [r[5] for r in samples]
        assert len(set(fingerprints)) == len(fingerprints)

    def test_fork_spawn_persistent_or_not_give_the_same_samples(self, runs: Any) -> None:
        reference = rows(runs[0], "stream/fork/True")
        for ctx, persistent in CONFIGS:
            assert rows(runs[0], f"stream/{ctx}/{persistent}") == reference

    def test_second_run_is_bit_identical(self, runs: Any) -> None:
        first, second = runs
        for key in RERUN:
            assert rows(second, key) == rows(first, key)


class TestSampleKeyingUnderDDP:
    def test_zero_and_two_workers_give_the_same_output_per_index(self, runs: Any) -> None:
        def by_index(key: str) -> dict[tuple[int, int], str]:
            return {(r[1], r[3]): r[5] for r in rows(runs[0], key)}

        zero, two = by_index("sample/0"), by_index("sample/2")
        assert len(zero) == LENGTH * EPOCHS
        assert zero == two

    def test_epochs_differ(self, runs: Any) -> None:
        samples = rows(runs[0], "sample/2")
        epoch0 = {r[5] for r in samples if r[1] == 0}
        epoch1 = {r[5] for r in samples if r[1] == 1}
        assert len(epoch0) == LENGTH
        assert len(epoch1) == LENGTH
        assert not epoch0 & epoch1


class TestControlsShowTheBug:
    def test_compose_seed_repeats_across_ranks(self, runs: Any) -> None:
        # Both albumentations 2.0.x and AlbumentationsX (whose worker-aware reseeding
        # uses the per-worker torch seed, equal on every rank) repeat each output on
        # every rank at the same step.
        samples = rows(runs[0], "control/compose_seed")
        by_rank = [[r[1:] for r in samples if r[0] == rank] for rank in range(WORLD)]
        assert len(by_rank[0]) == LENGTH * EPOCHS // WORLD
        fingerprints = [[(r[0], r[1], r[3], r[4]) for r in mine] for mine in by_rank]
        assert all(f == fingerprints[0] for f in fingerprints)

    @pytest.mark.skipif(ALBUMENTATIONS_X, reason="AlbumentationsX reseeds copies per worker")
    def test_compose_seed_repeats_across_workers_and_epochs(self, runs: Any) -> None:
        samples = rows(runs[0], "control/compose_seed")
        counts = Counter(r[5] for r in samples)
        # Every worker of every rank starts from the same copied state: each output
        # appears on both ranks x 2 workers, and epoch 1 replays epoch 0.
        assert len(counts) == LENGTH * EPOCHS // (WORLD * 2 * EPOCHS)
        assert set(counts.values()) == {WORLD * 2 * EPOCHS}

    def test_additive_worker_init_repeats_across_workers_and_epochs(self, runs: Any) -> None:
        samples = rows(runs[0], "control/additive")
        for rank in range(WORLD):
            mine = [r for r in samples if r[0] == rank]
            by_worker = [[r[5] for r in mine if r[4] == w] for w in (0, 1)]
            assert by_worker[0] == by_worker[1]  # worker id ignored
            epochs = [[r[5] for r in mine if r[1] == e] for e in (0, 1)]
            assert epochs[0] == epochs[1]  # reseeded identically every epoch


class TestWorkerSeederUnderDDP:
    @pytest.mark.parametrize("key", ["seeder", "seeder/fresh"])
    def test_global_random_draws_differ_across_ranks_workers_and_epochs(
        self, runs: Any, key: str
    ) -> None:
        samples = rows(runs[0], key)
        streams: dict[tuple[int, int, int], list[str]] = {}
        for rank, epoch, _step, _index, worker, partners in samples:
            streams.setdefault((rank, epoch, worker), []).append(partners)
        assert len(streams) == WORLD * EPOCHS * 2
        firsts = [draws[0] for draws in streams.values()]
        assert len(set(firsts)) == len(firsts)

    def test_is_reproducible(self, runs: Any) -> None:
        assert rows(runs[0], "seeder/fresh") == rows(runs[1], "seeder/fresh")
        # Epoch 0 has the same loader seed in both: spawned persistent workers draw what
        # forked fresh ones draw (later epochs differ: persistent workers seed once).
        spawned = [r for r in rows(runs[0], "seeder") if r[1] == 0]
        forked = [r for r in rows(runs[0], "seeder/fresh") if r[1] == 0]
        assert len(spawned) == LENGTH
        assert spawned == forked
