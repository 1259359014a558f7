"""litdata recipe, for real: ``optimize`` into a local directory, ``StreamingDataset``
over it, 2 gloo ranks x 2 workers (litdata splits by rank and worker itself).

litdata requires torchvision, which has no wheel for the project's torch 2.13 CPU: it
runs in ``.venv-tv`` (``constraints-tv.txt``), where ``.ci/run`` runs this file.
"""

from __future__ import annotations

import functools
import multiprocessing
from pathlib import Path
from typing import Any

import pytest

from rankaug import RandomAugmentWrapper
from tests.ddp.harness import launch
from tests.stream.ddp_checks import check_reports, drawn, rank_report, torchrun_environment
from tests.stream.helpers import detection, noise

litdata = pytest.importorskip(
    "litdata",
    reason="litdata is not installed here: it pulls torchvision, whose wheel does not fit "
    "torch 2.13 CPU, so it lives in .venv-tv (constraints-tv.txt), where .ci/run runs "
    "tests/stream/test_ddp_litdata.py",
)

pytestmark = [
    pytest.mark.ddp,
    pytest.mark.filterwarnings("ignore:'set_vital' is deprecated:UserWarning"),
]
SAMPLES = 32


def row(k: int) -> dict[str, Any]:
    sample = detection(k)
    return {"image": sample["image"], "id": sample["id"]}


def write_chunks(directory: Path) -> str:
    output = str(directory / "optimized")
    before = multiprocessing.get_start_method(allow_none=True)
    try:  # optimize sets the process-wide start method (to spawn unless told)
        litdata.optimize(fn=row, inputs=list(range(SAMPLES)), output_dir=output, chunk_size=4,
                         num_workers=1, start_method="fork")  # fmt: skip
    finally:
        multiprocessing.set_start_method(before, force=True)
    return output


def make(path: str, keying: str) -> Any:
    """The recipe: litdata's dataset as it comes (it reads the rank and the worker)."""
    stream = litdata.StreamingDataset(path)
    return RandomAugmentWrapper(stream, noise, seed=0, keying=keying, sample_id="id")


def on_rank(rank: int, world_size: int, path: str) -> dict[str, Any]:
    torchrun_environment(rank, world_size)
    return rank_report(functools.partial(make, path))


class TestLitdata:
    def test_two_ranks_two_workers(self, tmp_path: Path) -> None:
        path = write_chunks(tmp_path)
        reference = drawn(make(path, "sample"), workers=0)
        reports = launch(on_rank, 2, tmp_path, path=path)
        check_reports(reports, reference, sized=True)
        # litdata's own resume needs its StreamingDataLoader: rankaug re-reads the pass
        assert [r["resumes"] for r in reports] == [True, True]
        assert len(reference[0]) == SAMPLES
