"""mosaicml-streaming recipe, for real: ``MDSWriter`` into a local directory,
``StreamingDataset(local=...)`` over it, 2 gloo ranks x 2 workers (it splits the
samples over the ranks and the workers itself).

mosaicml-streaming 0.13 pins ``numpy<2.2`` and imports torchvision (``streaming.vision``)
and transformers at ``import streaming``; neither fits the project's environment
(numpy 2.4, torch 2.13 CPU). It runs in ``.venv-tv`` (``constraints-tv.txt``: torch
2.14.1 with its own torchvision, numpy<2.2), where ``.ci/run`` runs this file.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rankaug import RandomAugmentWrapper
from tests.ddp.harness import launch
from tests.stream.ddp_checks import check_reports, drawn, rank_report, torchrun_environment
from tests.stream.helpers import detection, noise

streaming = pytest.importorskip(
    "streaming",
    reason="mosaicml-streaming is not installed here: it pins numpy<2.2 and imports "
    "torchvision and transformers, so it lives in .venv-tv (constraints-tv.txt), where "
    ".ci/run runs tests/stream/test_ddp_mosaicml.py",
)

pytestmark = [
    pytest.mark.ddp,
    pytest.mark.timeout(900),  # each rank imports streaming (torchvision, transformers)
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]
SAMPLES = 32
COLUMNS = {"image": "ndarray:uint8:32,32,3", "id": "str"}


def write_shards(directory: Path) -> str:
    output = str(directory / "mds")
    with streaming.MDSWriter(out=output, columns=COLUMNS, size_limit=1 << 14) as sink:
        for k in range(SAMPLES):
            sample = detection(k)
            sink.write({"image": sample["image"], "id": sample["id"]})
    return output


def make(local: str, keying: str) -> Any:
    """The recipe: mosaicml's dataset as it comes (it reads the rank and the worker)."""
    stream = streaming.StreamingDataset(local=local, shuffle=False, batch_size=1)
    return RandomAugmentWrapper(stream, noise, seed=0, keying=keying, sample_id="id")


def on_rank(rank: int, world_size: int, local: str) -> dict[str, Any]:
    torchrun_environment(rank, world_size)
    os.environ.update(LOCAL_WORLD_SIZE=str(world_size))
    streaming.base.util.clean_stale_shared_memory()
    return rank_report(functools.partial(make, local))


class TestMosaicml:
    def test_two_ranks_two_workers(self, tmp_path: Path) -> None:
        local = write_shards(tmp_path)
        reference = drawn(make(local, "sample"), workers=0)
        reports = launch(on_rank, 2, tmp_path, local=local)
        check_reports(reports, reference, sized=True)
        # its own resume needs its StreamingDataLoader: rankaug re-reads the pass
        assert [r["resumes"] for r in reports] == [True, True]
        assert len(reference[0]) == SAMPLES

    def test_resume_by_re_reading(self, tmp_path: Path) -> None:
        # Its state_dict(num_samples, from_beginning) belongs to its StreamingDataLoader,
        # so rankaug's state says to re-read the pass (in process, without a loader).
        local = write_shards(tmp_path)
        whole = [s["noise"] for s in make(local, "stream")]
        wrapper = make(local, "stream")
        passes = iter(wrapper)
        head = [next(passes)["noise"] for _ in range(5)]
        state = wrapper.state_dict()
        assert state["pass"]["source"] is None  # not its own state: re-read
        again = make(local, "stream")
        again.load_state_dict(state)
        rest = [s["noise"] for s in again]
        assert head + rest == whole
        assert len(whole) == SAMPLES
        assert np.unique(whole).size == SAMPLES


class TestMosaicmlGuide:
    def test_the_guides_recipe_runs(self) -> None:
        from tests.recipes.blocks import load_recipe

        page = load_recipe("mosaicml")  # docs/guides/streaming.md
        outputs = list(page.train)
        assert len(outputs) == 32
        assert len({output["id"] for output in outputs}) == 32
        assert any(
            not np.array_equal(output["image"], np.full((32, 32, 3), k, np.uint8))
            for k, output in enumerate(outputs)
        )  # jittered
