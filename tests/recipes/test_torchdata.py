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


def save_and_resume(folder: Path, workers: int) -> Path:
    """One uninterrupted run that saves the loader on its way (saving changes nothing),
    in this process (a fresh interpreter would cost torch's, albumentations' and
    torchdata's imports again), then the resume from that state in a new process."""
    import torch

    from tests.recipes import stateful_train  # (imports torchdata: a framework test)

    # (the suite may run it beside any test, whose warnings are errors)
    with torch.random.fork_rng(devices=[]), warnings.catch_warnings():  # (run seeds torch)
        # torchdata 0.11 calls torch.set_vital, which torch 2.13 deprecates
        warnings.filterwarnings("ignore", "'set_vital' is deprecated", UserWarning)
        stateful_train.run(folder, "save", workers)
    python("stateful_train.py", str(folder), "resume", "--workers", str(workers))
    return folder


def save_and_resume_0(folder: Path) -> Path:
    """With no workers (a job of tests.ahead)."""
    return save_and_resume(folder, 0)


def save_and_resume_2(folder: Path) -> Path:
    """With 2 workers (a job of tests.ahead)."""
    return save_and_resume(folder, 2)


@pytest.mark.parametrize("workers", [0, 2])
class TestStatefulDataLoaderRecipe:
    def test_a_mid_epoch_resume_in_a_new_process_is_exact(
        self, tmp_path: Path, workers: int
    ) -> None:
        out = ahead.result(f"torchdata-{workers}", lambda: tmp_path)
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
