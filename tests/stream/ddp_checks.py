"""The checks every streaming library's recipe runs, inside one gloo launch per library.

A rank calls :func:`rank_report` with a factory ``make(keying) -> wrapper`` building
the library's stream of this rank (split by node and worker as the library does) and
the rankaug wrapper over it; :func:`check_reports` asserts what issue 17 asks of the
ranks' reports, against the ``(1 rank, 0 workers)`` reference made in the test process.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from torch.utils.data import DataLoader

Make = Callable[[str], Any]
WORKERS = 2
CONTEXT = "fork"  # torchrun's processes fork their workers (the harness's would spawn)


def torchrun_environment(rank: int, world_size: int) -> None:
    """Set what torchrun sets, which the libraries read (also in spawned workers)."""
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(world_size), LOCAL_RANK=str(rank))


def as_list(batch: Any) -> Any:
    return batch


def drawn(wrapper: Any, *, epochs: int = 2, workers: int = WORKERS) -> list[list[list[str]]]:
    """Per pass, ``[id, noise digest]`` of each output in loader order."""
    context = CONTEXT if workers else None
    loader = DataLoader(
        wrapper, batch_size=None, num_workers=workers, multiprocessing_context=context
    )
    return [[[str(s["id"]), s["noise"]] for s in loader] for _ in range(epochs)]


def _stateful(wrapper: Any, state: Any = None, stop: int | None = None) -> tuple[list[str], Any]:
    from torchdata.stateful_dataloader import StatefulDataLoader  # a test extra: not at import

    loader = StatefulDataLoader(
        wrapper,
        batch_size=2,
        num_workers=WORKERS,
        collate_fn=as_list,
        multiprocessing_context=CONTEXT,
    )
    if state is not None:
        loader.load_state_dict(state)
    out: list[str] = []
    for count, batch in enumerate(loader, 1):
        out += [f"{s['id']}:{s['noise']}" for s in batch]
        if count == stop:
            return out, loader.state_dict()
    return out, None


def resumes(make: Make) -> bool:
    """Whether a pass stopped after 3 batches and resumed equals the whole pass."""
    whole, _ = _stateful(make("stream"))
    head, state = _stateful(make("stream"), stop=3)
    rest, _ = _stateful(make("stream"), state=state)
    return bool(whole) and head + rest == whole


def _length(wrapper: Any) -> int | str:
    """``len(wrapper)``, or the ``TypeError``'s message where its stream has none."""
    try:
        return len(wrapper)
    except TypeError as error:
        return str(error)


def rank_report(make: Make, *, resume: bool = True) -> dict[str, Any]:
    """Everything :func:`check_reports` needs from one rank."""
    stream = drawn(make("stream"))
    return {
        "length": _length(make("stream")),
        "stream": stream,
        "rerun": drawn(make("stream")) == stream,
        "sample": drawn(make("sample")),
        "resumes": resumes(make) if resume else None,
    }


def check_reports(
    reports: list[dict[str, Any]], reference: list[list[list[str]]], *, sized: bool = False
) -> None:
    """Issue 17's 'done when', for one library (``reference``: 1 rank, 0 workers).

    ``sized``: the library's stream has a length, which each rank's wrapper gives as the
    count of its rank's outputs in a pass (else ``len()`` is refused).
    """
    first, second = reports
    refused = "has no len(): count its samples by iterating"
    lengths = [report["length"] if sized else refused in report["length"] for report in reports]
    assert lengths == ([len(report["stream"][0]) for report in reports] if sized else [True] * 2)
    for epoch in range(2):  # no augmentation shared across ranks at the same position
        pairs = zip(first["stream"][epoch], second["stream"][epoch], strict=False)
        assert sum(a[1] == b[1] for a, b in pairs) == 0, f"ranks draw alike in epoch {epoch}"
    assert [report["rerun"] for report in reports] == [True, True], "a rerun differs"
    # each epoch is new: by id over both ranks (a library may deal samples anew each epoch)
    before, after = ({k: v for r in reports for k, v in r["stream"][e]} for e in range(2))
    assert before.keys() == after.keys(), sorted(set(before) ^ set(after))
    changed = sum(before[k] != after[k] for k in before)
    assert changed >= 0.95 * len(before), f"{changed} of {len(before)} changed between epochs"
    for epoch in range(2):  # keying="sample": (2 ranks, 2 workers) == (1 rank, 0 workers)
        ranks = first["sample"][epoch] + second["sample"][epoch]
        expected = dict(map(tuple, reference[epoch]))
        wrong = [(i, n, expected.get(i)) for i, n in ranks if expected.get(i) != n]
        assert sorted(ranks) == sorted(reference[epoch]), (epoch, len(ranks), wrong[:4])
        assert len({sample_id for sample_id, _ in ranks}) == len(ranks)
    assert reference[0] != reference[1]
