"""Section 8, mix: MixUp, CutMix and CopyPaste, rankaug against ultralytics, samples/s.

Every contender makes one mixed sample per call from the same ``side x side``
in-memory sources (the wrapper section's), drawing its partner itself (but ultralytics'
copy-paste, given rankaug's: below): rankaug's ``MixUpDataset(ds)[i]``,
``CutMixDataset(ds)[i]`` and ``CopyPasteDataset(ds, p=1)[i]`` (keying ``"stream"``,
copy-paste ``"sample"`` as below; everything from the key) against ultralytics' ``MixUp``,
``CutMix`` and ``CopyPaste`` with ``p=1`` (``benchmarks._mix_peers``). Copy-paste gets
one instance per box, the ellipse inscribed in it: ultralytics as a 1000-point polygon,
rankaug as the same polygon filled into an instance mask, and (the ``polygons`` rows)
as the very same ``(N, 1000, 2)`` polygon arrays ultralytics gets; rankaug pastes with
``max_overlap=0.3``, ultralytics' own rule (only instances covering less than 30% of
every main box). The contenders of each group take turns one sample at a time, one
group after the other (a contender of another group between them would leave the heap
to whichever follows it: ultralytics' MixUp frees ~30 MB of float images per call).

Below the rows: the ratios, and how often each peer left its sample as it was
(ultralytics' ``CutMix`` skips a sample when none of its three candidate rectangles
avoids the main boxes; its ``CopyPaste`` when no instance is eligible), measured on
extra calls that are not timed. Like for like, rankaug's dense-mask copy-paste races
ultralytics' ``CopyPaste`` followed by its own ``polygons2masks`` (the same dense
``(N, H, W)`` masks, full size), and rankaug's by polygons races ultralytics' on the
very same polygons; each group prints its "same work" table first. The two copy-paste
by a partner paste from the same pairs: ultralytics' ``CopyPaste`` takes rankaug's
partners (:func:`copypaste_partners`) instead of drawing its own, so both find the same
eligible instances in the same samples; rankaug's copy-paste contenders are keyed per
sample (``keying="sample"``) so that each index has the same partner on every call.
Sample ``k`` of the two by polygons is thus the same work, and the goal reads them
raced again alone, one sample each in turn, paired (:func:`_paired_copypaste`), the
group's ratio of round medians printed beside it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchmarks import peers
from benchmarks._bench import Bench, Sample
from benchmarks._catalogue import MIX_GROUPS, MIX_PAIRS, section
from benchmarks._mix_peers import ultralytics_mix, with_instances
from benchmarks._report import print_rows, ratio_text
from benchmarks._same_work import describe, print_work, tagged, with_output
from benchmarks._timing import alternate, counted

__all__ = [
    "SECTION",
    "Contenders",
    "copypaste_floor",
    "copypaste_partners",
    "polygon_floor",
    "measure",
    "mix_contenders",
    "prepare",
    "unchanged",
]

SECTION = section("mix")
Make = Callable[[int], Any]
_CHECKS = 32
"""Untimed calls per peer for the 'left unchanged' line."""


def _rankaug(kind: str, samples: Sequence[Sample], seed: int, **kwargs: Any) -> Make:
    from rankaug.mix import CopyPasteDataset, CutMixDataset, MixUpDataset

    classes = {"mixup": MixUpDataset, "cutmix": CutMixDataset, "copypaste": CopyPasteDataset}
    dataset = classes[kind](samples, seed=seed, **kwargs)
    n = len(samples)

    def make(i: int) -> Any:
        return dataset[i % n]

    return tagged(make, dataset)


def copypaste_floor(samples: Sequence[Sample], seed: int, **kwargs: Any) -> Make:
    """The output arrays of rankaug's copy-pastes, made by copying alone: a lower bound.

    rankaug's ``CopyPasteDataset`` decides (untimed, here) which instances each output
    keeps and pastes; each call then only copies the main image and gathers the kept and
    pasted instance masks into the ``(N', H, W)`` output: no pixel pasted, nothing
    drawn, counted or trimmed, no key. Any copy-paste that gives these outputs with
    dense masks makes at least these arrays, so none can be faster than this.
    """
    from rankaug.mix import CopyPasteDataset

    dataset: Any = CopyPasteDataset(samples, seed=seed, **kwargs)
    plans = []
    for i in range(len(samples)):
        record = dataset[i]["copypaste"]
        main, partner = samples[record["indices"][0]], samples[record["indices"][-1]]
        kept = [k for k in range(len(main["labels"])) if k not in record["dropped"]]
        plans.append((main, partner, kept, record["pasted"]))

    def make(i: int) -> Any:
        main, partner, kept, pasted = plans[i % len(plans)]
        image = main["image"].copy()
        height, width = image.shape[:2]
        masks = np.empty((len(kept) + len(pasted), height, width), main["masks"].dtype)
        np.take(main["masks"], kept, axis=0, out=masks[: len(kept)])
        np.take(partner["masks"], pasted, axis=0, out=masks[len(kept) :])
        return {"image": image, "masks": masks, "bboxes": main["bboxes"], "labels": kept}

    return tagged(make, dataset)


def polygon_floor(samples: Sequence[Sample], seed: int, **kwargs: Any) -> Make:
    """The drawing any copy-paste by polygons does for rankaug's outputs, and no more.

    rankaug's ``CopyPasteDataset`` decides (untimed, here) which instances each output
    pastes; each call then copies the main image, draws every pasted polygon once and
    copies the source's pixels there (what ultralytics' ``CopyPaste`` does), and draws
    and outlines once every main instance whose region meets a pasted one (what finding
    and trimming the covered instances needs at least): no key, no checks, no record,
    no output in the sample's form.
    """
    import cv2

    from rankaug.mix import CopyPasteDataset
    from rankaug.polygons import Polygons, fill, outline

    dataset: Any = CopyPasteDataset(samples, seed=seed, **kwargs)
    plans = []
    for i in range(len(samples)):
        record = dataset[i]["copypaste"]
        main, partner = samples[record["indices"][0]], samples[record["indices"][-1]]
        hw = main["image"].shape[:2]
        theirs = Polygons(partner["segments"], None, None).regions(hw)
        ours = Polygons(main["segments"], None, None).regions(hw)
        pasted = [(partner["segments"][k], theirs[k]) for k in record["pasted"]]
        touched = [
            (main["segments"][i], region)
            for i, region in enumerate(ours)
            if any(_meet(region, other) for _, other in pasted)
        ]
        plans.append((main["image"], partner["image"], pasted, touched))

    def make(i: int) -> Any:
        main, source, pasted, touched = plans[i % len(plans)]
        image = main.copy()
        if pasted:
            where = np.zeros(image.shape[:2], np.uint8)
            for points, (y0, y1, x0, x1) in pasted:
                where[y0:y1, x0:x1] |= fill(points, (y0, y1, x0, x1))
            cv2.copyTo(source, where, image)
        for points, region in touched:
            outline(fill(points, region), (region[0], region[2]))
        return {"image": image, "segments": [], "bboxes": np.zeros((0, 4)), "labels": []}

    return tagged(make, dataset)


def copypaste_partners(samples: Sequence[Sample], seed: int, **kwargs: Any) -> list[int]:
    """The partner rankaug's ``CopyPasteDataset`` draws, for each main index.

    Made before any timing. ultralytics' ``CopyPaste`` takes them in place of its own draw
    (``benchmarks._mix_peers``): both paste from the same pairs, so they find the same
    eligible instances and do the same work (with partners of their own, one left 25% of
    its samples as they were and the other 16%, in 32 calls). A record names the partner
    only when something is pasted, so each is drawn again from its record's state (the
    plan, as a replay draws it): a sample whose partner has no eligible instance keeps it.
    """
    from rankaug._multi.replay import generator_at
    from rankaug.mix import CopyPasteDataset

    dataset: Any = CopyPasteDataset(samples, seed=seed, **kwargs)
    partners = []
    for i in range(len(samples)):
        record = dataset[i]["copypaste"]
        plan = dataset.plan(i, generator_at(record["state"]), record["epoch"])
        partners.append(int(plan.indices[1]))
    return partners


def _meet(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]


def mix_contenders(sources: Sequence[Sample], seed: int) -> tuple[dict[str, Make], dict[str, str]]:
    """Build every contender on the same sources.

    Args:
        sources: ``side x side`` source samples.
        seed: Seed of every contender's draws.

    Returns:
        (row id -> ``make(i)``, row id -> why that contender is unavailable).
    """
    instances = with_instances(sources)
    masked = [{k: v for k, v in s.items() if k != "segments"} for s in instances]
    outlined = [{k: v for k, v in s.items() if k != "masks"} for s in instances]
    # keyed per sample: each index's partner and draws are the same on every pass, so the
    # partners given to ultralytics (and the floors' plans) are those of every call
    paste = {"p": 1.0, "max_overlap": 0.3, "keying": "sample"}
    made: list[list[int]] = []

    def pairs() -> list[int]:  # rankaug's partners, for ultralytics' copy-paste: made once
        if not made:
            made.append(copypaste_partners(outlined, seed, **paste))
        return made[0]

    builders: dict[str, Callable[[], Make]] = {
        "mix/rankaug_mixup": lambda: _rankaug("mixup", sources, seed),
        "mix/ultralytics_mixup": lambda: ultralytics_mix("mixup", sources, seed=seed),
        "mix/rankaug_cutmix": lambda: _rankaug("cutmix", sources, seed),
        "mix/ultralytics_cutmix": lambda: ultralytics_mix("cutmix", sources, seed=seed),
        "mix/rankaug_copypaste": lambda: _rankaug("copypaste", masked, seed, **paste),
        "mix/rankaug_copypaste_polygons": lambda: _rankaug("copypaste", outlined, seed, **paste),
        "mix/copypaste_floor": lambda: copypaste_floor(masked, seed, **paste),
        "mix/copypaste_polygon_floor": lambda: polygon_floor(outlined, seed, **paste),
        "mix/ultralytics_copypaste": lambda: ultralytics_mix(
            "copypaste", instances, seed=seed, partners=pairs()
        ),
        "mix/ultralytics_copypaste_masks": lambda: ultralytics_mix(
            "copypaste", instances, seed=seed, masks=True, partners=pairs()
        ),
        "mix/rankaug_copypaste_flip": lambda: _rankaug(
            "copypaste", masked, seed, source="flip", **paste
        ),
        "mix/rankaug_copypaste_flip_polygons": lambda: _rankaug(
            "copypaste", outlined, seed, source="flip", **paste
        ),
        "mix/ultralytics_copypaste_flip": lambda: ultralytics_mix(
            "copypaste", instances, seed=seed, mode="flip"
        ),
        "mix/ultralytics_copypaste_flip_masks": lambda: ultralytics_mix(
            "copypaste", instances, seed=seed, mode="flip", masks=True
        ),
    }
    makers: dict[str, Make] = {}
    unavailable: dict[str, str] = {}
    for row_id, build in builders.items():
        try:
            makers[row_id] = build()
        except peers.PeerUnavailable as exc:
            unavailable[row_id] = f"not installed: {exc.reason}"
    return makers, unavailable


_PAIRED: tuple[str, str] = ("mix/ultralytics_copypaste", "mix/rankaug_copypaste_polygons")
"""The copy-paste by polygons goal's pair: raced again alone, sample by sample."""


def _paired_copypaste(bench: Bench, makers: dict[str, Make]) -> dict[str, float] | None:
    """The copy-paste by polygons, rankaug's against ultralytics', paired sample by sample.

    The two paste from the same pairs (:func:`copypaste_partners`), so sample ``k`` of
    both is the same work; they take turns one sample at a time, both orders and both
    listings, as the wrapper race does, and the ratio is of the total times
    (:func:`~benchmarks._timing.paired_throughput`): a sample that pastes nothing costs
    either little. In the group's race the round medians of six contenders move by a
    tenth from round to round; pairs cancel that drift. Stored as the
    ``copypaste_paired`` diagnostic, the goal's figure.
    """
    return bench.race_pair(
        makers, _PAIRED, "8 mix: copy-paste by polygons, paired", "copypaste_paired"
    )


def unchanged(make: Make, sources: Sequence[Sample], calls: int) -> float:
    """The fraction of ``calls`` outputs that are their main sample as it was."""
    same = 0
    for i in range(calls):
        out = make(i)
        main = sources[i % len(sources)]
        same += len(out["labels"]) == len(main["labels"]) and np.array_equal(
            np.asarray(out["image"]), main["image"]
        )
    return same / calls


def _output(output: Any) -> str:
    """An output's image and how it holds its instances, for the same-work table."""
    image = np.asarray(output["image"])
    text = f"{image.shape} {image.dtype}"
    if "masks" in output:
        return text + ", dense instance masks (N, H, W)"
    if "segments" in output:
        return text + ", instance polygons"
    return text


def _problem(output: Any, size: int) -> str:
    image = output["image"]
    if tuple(np.shape(image)[:2]) != (size, size):
        return f"output is {np.shape(image)}, expected {size}x{size}"
    if "bboxes" not in output or "labels" not in output:
        return "output has no boxes or labels"
    return ""


@dataclass
class Contenders:
    """The contenders, built before the timing (importing ultralytics changes cv2's threads)."""

    makers: dict[str, Make]
    unavailable: dict[str, str]
    sources: list[Sample]


def prepare(bench: Bench) -> Contenders:
    """Build every contender (this imports the peers and fills the instance masks)."""
    sources = list(bench.sources.square)
    makers, unavailable = mix_contenders(sources, bench.seed)
    return Contenders(makers, unavailable, sources)


def measure(bench: Bench, prepared: Contenders) -> None:
    """Every contender on the same sources, in turns."""
    settings, report = bench.settings, bench.report
    for row_id, reason in prepared.unavailable.items():
        bench.missing(SECTION, [row_id], f"unavailable: {reason}")
    makers = {k: prepared.makers[k] for k in SECTION.rows if k in prepared.makers}
    for row_id, make in list(makers.items()):
        try:
            output = make(0)
            problem = _problem(output, bench.size)
        except Exception as exc:  # a broken contender must not stop the scoreboard
            problem = f"{type(exc).__name__}: {exc}"
        if problem:
            bench.missing(SECTION, [row_id], f"error: {problem}")
            del makers[row_id]
            continue
        report.work[row_id] = with_output(describe(make), _output(output))
    # Each group on its own: with all of them in one turn, whichever followed ultralytics'
    # MixUp (it lets go of ~30 MB of float images per call) page-faulted on fresh memory
    # (rankaug's CutMix: ~96 faults per sample there, about 1 in its own pair).
    seconds: dict[str, list[float]] = {}
    for group in MIX_GROUPS:
        ops = {row_id: counted(makers[row_id], start=1) for row_id in group if row_id in makers}
        if ops:
            seconds |= alternate(
                ops,
                per_round=settings.mosaics,
                repeats=settings.repeats,
                warmup=settings.warmup,
                progress=bench.progress,
                label=f"8 mix, {group[0].split('_', 1)[1]}",
            )
    bench.rows(SECTION, seconds)
    paired = _paired_copypaste(bench, makers)
    bench.out(
        f"{SECTION.number}. "
        f"MixUp, CutMix, CopyPaste: samples/s at {bench.size}x{bench.size} from the same "
        f"in-memory sources, partners drawn by each (copy-paste: rankaug's for both; "
        f"{settings.mosaics} per round)"
    )
    for group in MIX_GROUPS:
        works = {k.split("/")[1]: report.work[k] for k in group if k in report.work}
        if works:
            print_work(bench.out, group[0].split("_", 1)[1], works, aspects=("mix", "output"))
    print_rows(bench.out, report, list(SECTION.rows))
    bench.out("  ratios (medians; per-round range in brackets):")
    for numerator, denominator in MIX_PAIRS:
        entry = report.ratio(numerator, denominator)
        bench.out(
            f"    {numerator.split('/')[1]:>24s} vs {denominator.split('/')[1]:<28s} "
            f"{ratio_text(entry)}"
        )
    if paired is not None:
        bench.out(
            f"  copy-paste by polygons, paired (the same sample one right after the other, "
            f"{paired['pairs']:.0f} pairs, both orders, both listings; total times): rankaug / "
            f"ultralytics {paired['ratio']:.3f}x, {paired['extra_us']:+.0f} µs per sample"
        )
    left = {row_id: unchanged(make, prepared.sources, _CHECKS) for row_id, make in makers.items()}
    report.diagnostics["mix_unchanged"] = left
    if left:
        bench.out(
            f"  samples left as they were ({_CHECKS} untimed calls each): "
            + ", ".join(f"{k.split('/')[1]} {v:.0%}" for k, v in left.items())
        )
    bench.out()
