"""torchdata's StatefulDataLoader, run for real: a mid-epoch resume in a new process.

stateful_train.py builds, saves and restores the loader with the code of
docs/guides/frameworks.md (``make_loader``, ``save``, ``resume``).

The loader saves EpochSampler's state (the epoch and the position in the pass) and,
in each worker, the pipeline's state (each stream's generator position, nested
wrappers included). The resumed run must continue exactly as the uninterrupted one.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from tests import ahead
from tests.recipes.conftest import lines, python
from tests.recipes.pipeline import KEYINGS

pytestmark = [pytest.mark.framework, pytest.mark.timeout(300)]


def save_and_resume(folder: Path) -> Path:
    """For 0 and 2 workers (``folder/0``, ``folder/2``), one uninterrupted run that saves
    the loader on its way (saving changes nothing), in this process (a fresh interpreter
    would cost torch's, albumentations' and torchdata's imports again), then the resumes
    from those states in one new process, which saw neither save: 0 workers, then 2 (a
    job of tests.ahead; a new process for each resume cost its imports twice)."""
    import torch

    from tests.recipes import stateful_train  # (imports torchdata: a framework test)

    # (the suite may run it beside any test, whose warnings are errors)
    with torch.random.fork_rng(devices=[]), warnings.catch_warnings():  # (run seeds torch)
        # torchdata 0.11 calls torch.set_vital, which torch 2.13 deprecates
        warnings.filterwarnings("ignore", "'set_vital' is deprecated", UserWarning)
        for workers in WORKERS:
            stateful_train.run(folder / str(workers), "save", workers)
    first, *others = WORKERS
    also = [
        part for workers in others for part in ("--also", str(folder / str(workers)), str(workers))
    ]
    python("stateful_train.py", str(folder / str(first)), "resume", "--workers", str(first), *also)
    return folder


WORKERS = (0, 2)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ahead.result("torchdata", lambda: tmp_path_factory.mktemp("torchdata"))


@pytest.mark.parametrize("workers", WORKERS)
class TestStatefulDataLoaderRecipe:
    def test_a_mid_epoch_resume_in_a_new_process_is_exact(self, runs: Path, workers: int) -> None:
        out = runs / str(workers)
        uninterrupted = lines(out, 0)
        resumed = [json.loads(line) for line in (out / "resumed.jsonl").read_text().splitlines()]
        assert len(uninterrupted) == 24  # 3 epochs of 8 batches
        assert len(resumed) == 13  # from the save (after batch 11) to the end
        for keying in KEYINGS:
            assert [r["rows"][keying] for r in resumed] == [
                r["rows"][keying] for r in uninterrupted[11:]
            ], keying
        assert [r["epoch"] for r in resumed] == [r["epoch"] for r in uninterrupted[11:]]
        epochs = [{row["epoch"] for row in r["rows"]["stream"]} for r in uninterrupted]
        assert epochs == [{0}] * 8 + [{1}] * 8 + [{2}] * 8  # no set_epoch needed
