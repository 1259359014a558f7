"""``benchmarks._mix_peers``: ultralytics' copy-paste on the partners rankaug pastes from.

The race of section 8 is like for like only if both contenders paste from the same pairs.
Runs where ultralytics is installed (the benchmark venv, ``benchmarks/requirements.txt``;
``.ci/run`` runs this file there) and skips elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmarks._bench import Sample, load_sources
from benchmarks._mix_peers import ultralytics_mix, with_instances
from benchmarks.sections.mix import copypaste_partners

SOURCES = 8
PASTE = {"p": 1.0, "max_overlap": 0.3, "keying": "sample"}  # as section 8 has them


@pytest.fixture(scope="module")
def instances(tmp_path_factory: pytest.TempPathFactory) -> list[Sample]:
    os.environ.setdefault("YOLO_CONFIG_DIR", str(Path(tmp_path_factory.mktemp("yolo"))))
    pytest.importorskip(
        "ultralytics",
        reason="ultralytics is not installed here: it lives in the benchmark venv "
        "(benchmarks/requirements.txt), where .ci/run runs this file",
    )
    return with_instances(load_sources("synthetic", SOURCES, 96).square)


class TestUltralyticsCopyPaste:
    def test_pastes_from_the_partners_given_what_rankaug_pastes(
        self, instances: list[Sample]
    ) -> None:
        from rankaug.mix import CopyPasteDataset

        outlined = [{k: v for k, v in s.items() if k != "masks"} for s in instances]
        partners = copypaste_partners(outlined, 0, **PASTE)
        ours = CopyPasteDataset(outlined, seed=0, **PASTE)
        theirs = ultralytics_mix("copypaste", instances, seed=0, partners=partners)
        calls = range(2 * SOURCES)  # two passes: each index pastes the same on each
        pasted = [len(ours[i % SOURCES]["copypaste"]["pasted"]) for i in calls]
        added = [len(theirs(i)["labels"]) - len(instances[i % SOURCES]["labels"]) for i in calls]
        assert sum(pasted) > 0  # the race pastes something
        assert added == pasted  # the same eligible instances of the same partners
        assert all(p != i for i, p in enumerate(partners))  # a partner, never the sample

    def test_refuses_partners_of_another_length(self, instances: list[Sample]) -> None:
        with pytest.raises(ValueError, match=r"partners must hold one index per sample \(8\)"):
            ultralytics_mix("copypaste", instances, seed=0, partners=[0, 1])
