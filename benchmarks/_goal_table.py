"""The scoreboard's goals: what each section should reach, in the order of the goals table.

Each goal reads rows of the catalogue (``benchmarks/_catalogue.py``) and computes its own
figure (``benchmarks/_goals.py``); :func:`check_goals` refuses, at import, a goal that
reads a row the catalogue does not have.
"""

from __future__ import annotations

from collections.abc import Sequence

from benchmarks._catalogue import EPOCH_WORKERS, ROW_IDS
from benchmarks._goals import (
    Absolute,
    CpuRatio,
    Difference,
    Goal,
    PairedRatio,
    Ratio,
    ScalingRatio,
)

__all__ = ["GOALS", "check_goals"]

_KEY_BASELINE = "key/numpy_default_rng"
_KEY_BASELINE_WHAT = "np.random.default_rng alone"

GOALS: tuple[Goal, ...] = (
    Absolute(
        id="key_sample",
        what='key + wrapper path, keying="sample", µs/sample',
        row="key/sample_item",
        op="<=",
        target=15,
        hint="numpy's SeedSequence + PCG64 is most of it: see key/numpy_seedsequence",
        baseline=_KEY_BASELINE,
        baseline_what=_KEY_BASELINE_WHAT,
    ),
    Absolute(
        id="key_stream",
        what='key + wrapper path, keying="stream", µs/sample',
        row="key/stream_item",
        op="<=",
        target=15,
        hint="the per-sample path (index check, context, epoch read): run --profile",
        baseline=_KEY_BASELINE,
        baseline_what=_KEY_BASELINE_WHAT,
    ),
    PairedRatio(
        id="wrapper",
        what="wrapper / direct albumentations",
        numerator="wrapper/stream",
        denominator="wrapper/direct",
        diagnostic="wrapper_paired",
        op=">=",
        target=0.985,
        hint="the wrapper's own path per sample (key, context, adapter unpack/repack, "
        "set_random_state): run --profile for the split",
    ),
    Ratio(
        id="mosaic_floor",
        what="MosaicDataset 2x2 / floor",
        numerator="mosaic/rankaug_2x2",
        denominator="mosaic/floor",
        op=">=",
        target=0.9,
        hint="Python per mosaic beyond cv2.resize (draws, tiles, boxes): --profile",
    ),
    Ratio(
        id="mosaic_albumentations",
        what="MosaicDataset 2x2 / albumentations A.Mosaic",
        numerator="mosaic/rankaug_2x2",
        denominator="mosaic/albumentations",
        op=">=",
        target=5.0,
    ),
    Ratio(
        id="mosaic_affine_plain",
        what="fused Mosaic+MosaicAffine / plain MosaicDataset",
        numerator="mosaic/rankaug_affine",
        denominator="mosaic/rankaug_2x2",
        op=">=",
        target=0.8,
        like_for_like=False,  # what the fused affine costs over the plain mosaic
        hint="the fused placement: each visible region resized (warped with rotation or "
        "shear) into place, more of the output covered at scales above 1; the box corners",
    ),
    Ratio(
        id="mosaic_affine_ultralytics",
        what="fused Mosaic+MosaicAffine / ultralytics Mosaic+affine",
        numerator="mosaic/rankaug_affine",
        denominator="mosaic/ultralytics_affine",
        op=">=",
        target=3.0,
    ),
    ScalingRatio(
        id="loader_1w_0w",
        what="DataLoader 1 worker / 0 workers, tensors",
        numerator="scaling/recycled_1w",
        denominator="scaling/recycled_0w",
        op=">=",
        target=0.9,
        compare=(("collate_detection", "scaling/tensor_1w", "scaling/tensor_0w"),),
        hint="the worker's batch still lands in fresh pages (see 'recycled' against "
        "'tensor', and the transport lines)",
    ),
    ScalingRatio(
        id="loader_2w_1w",
        what="DataLoader 2 workers / 1 worker, tensors",
        numerator="scaling/recycled_2w",
        denominator="scaling/recycled_1w",
        op=">=",
        target=1.8,
        compare=(("collate_detection", "scaling/tensor_2w", "scaling/tensor_1w"),),
        hint="needs 2 idle cores (see 'got N cores, waited'); the main process's share of "
        "each batch (unpickling handles, releasing buffers) competes for them",
    ),
    ScalingRatio(
        id="scaling_numpy",
        what="2 workers / 1 worker, numpy samples",
        numerator="scaling/numpy_2w",
        denominator="scaling/numpy_1w",
        op=">=",
        target=1.6,
        hint="numpy batches are pickled through the worker pipe and unpickled by the "
        "main process: return torch tensors",
    ),
    Difference(
        id="epoch_sampler",
        what="EpochSampler - DistributedSampler, µs/index",
        row="epoch/sampler_carried",
        baseline="epoch/sampler_plain",
        op="<=",
        target=1.0,
        hint="EpochSampler's per-index path (one EpochIndex per index): run --profile",
    ),
    Difference(
        id="epoch_wrapper",
        what="wrapper[EpochIndex] - wrapper[i], µs/index",
        row="epoch/wrapper_carried",
        baseline="epoch/wrapper_plain",
        op="<=",
        target=1.0,
        hint="where KeyedDataset.context reads the index's epoch: run --profile",
    ),
    *(
        Difference(
            id=f"epoch_loader_{w}w",
            what=f"DataLoader {w}w, EpochSampler - plain, µs/index",
            row=f"epoch/loader_carried_{w}w",
            baseline=f"epoch/loader_plain_{w}w",
            op="<=",
            target=1.0,
            also="wall_us",
            also_what="wall time",
            hint=(
                "each index list is pickled to the worker: see section 5's pickling line"
                if w
                else "end to end: see the sampler and wrapper rows of section 5"
            ),
        )
        for w in EPOCH_WORKERS
    ),
    *(
        Difference(
            id=f"epoch_batches_{w}w",
            what=f"DataLoader {w}w, EpochSampler over batches - plain, µs/index",
            row=f"epoch/loader_batches_{w}w",
            baseline=f"epoch/loader_plain_{w}w",
            op="<=",
            target=1.0,
            also="wall_us",
            also_what="wall time",
            hint="one epoch per batch (EpochBatch): see section 5's pickling line",
        )
        for w in EPOCH_WORKERS
    ),
    CpuRatio(
        id="e2e_ram",
        what="later epochs, rankaug cached / ultralytics ram",
        numerator="e2e/fused_cached_0w",
        denominator="e2e/ultralytics_ram_0w",
        op=">=",
        target=1.6,
        compare=(
            ("2 workers", "e2e/fused_cached_2w", "e2e/ultralytics_ram_2w"),
            ("with A.Affine", "e2e/rankaug_cached_0w", "e2e/ultralytics_ram_0w"),
        ),
        hint="with the cache, what is left is pixel work: see section 6's profile lines",
    ),
    CpuRatio(
        id="e2e_default",
        what="later epochs, rankaug cached / ultralytics default",
        numerator="e2e/fused_cached_0w",
        denominator="e2e/ultralytics_0w",
        op=">=",
        target=2.2,
        compare=(
            ("2 workers", "e2e/fused_cached_2w", "e2e/ultralytics_2w"),
            ("with A.Affine", "e2e/rankaug_cached_0w", "e2e/ultralytics_0w"),
        ),
        hint="ultralytics decodes one JPEG per mosaic; see section 6's profile lines",
    ),
    CpuRatio(
        id="e2e_floor",
        what="later epochs, rankaug cached / the e2e floor",
        numerator="e2e/fused_cached_0w",
        denominator="e2e/floor_0w",
        op=">=",
        target=0.85,
        compare=(("2 workers", "e2e/fused_cached_2w", "e2e/floor_2w"),),
        hint="rankaug's per-sample Python (keys, checks, targets) and its collate: see "
        "section 6's split",
    ),
    CpuRatio(
        id="e2e_first",
        what="first epoch, rankaug filling / ultralytics default",
        numerator="e2e/fused_cached_first_0w",
        denominator="e2e/ultralytics_first_0w",
        op=">=",
        target=0.8,
        compare=(
            ("2 workers", "e2e/fused_cached_first_2w", "e2e/ultralytics_first_2w"),
            ("with A.Affine", "e2e/rankaug_cached_first_0w", "e2e/ultralytics_first_0w"),
        ),
        hint="every image is decoded once and written to the cache: see section 6's split",
    ),
    Ratio(
        id="memory",
        what="memory, 2 ranks x 2 workers, rankaug / ultralytics ram",
        numerator="memory/rankaug_cached",
        denominator="memory/ultralytics_ram",
        op="<=",
        target=0.6,
        compare=(("PSS alone", "memory/rankaug_cached_pss", "memory/ultralytics_ram"),),
        hint="each process's own PSS (torch, cv2, albumentations) is paid by both: see "
        "section 7's per-process line",
    ),
    *(
        Ratio(
            id=f"mix_{kind}",
            what=f"{name} / ultralytics {name}",
            numerator=f"mix/rankaug_{kind}",
            denominator=f"mix/ultralytics_{kind}",
            op=">=",
            target=1.5,
            hint=f"rankaug's {name}Dataset path per sample: profile dataset[i]",
        )
        for kind, name in (("mixup", "MixUp"), ("cutmix", "CutMix"))
    ),
    Ratio(
        id="mix_copypaste",
        what="CopyPaste, dense masks / ultralytics + polygons2masks",
        numerator="mix/rankaug_copypaste",
        denominator="mix/ultralytics_copypaste_masks",
        op=">=",
        target=1.5,
        compare=(
            ("floor of dense masks", "mix/copypaste_floor", "mix/ultralytics_copypaste_masks"),
        ),
        hint="rankaug's CopyPasteDataset path per sample: profile dataset[i]",
    ),
    Ratio(
        id="mix_copypaste_polygons",
        what="CopyPaste by polygons / ultralytics, same polygons",
        numerator="mix/rankaug_copypaste_polygons",
        denominator="mix/ultralytics_copypaste",
        op=">=",
        target=0.9,
        compare=(
            ("floor by polygons", "mix/copypaste_polygon_floor", "mix/ultralytics_copypaste"),
            ("flip", "mix/rankaug_copypaste_flip_polygons", "mix/ultralytics_copypaste_flip"),
        ),
        hint="drawing and trimming the polygons (rankaug.polygons): profile dataset[i]",
    ),
    Ratio(
        id="hsv_ultralytics",
        what="HSVJitter / ultralytics RandomHSV, same image and gains",
        numerator="color/rankaug_hsv",
        denominator="color/ultralytics_hsv",
        op=">=",
        target=1.2,
        hint="both pay the two cvtColor; rankaug's saving is the tables (one cv2.transform "
        "for s and v, a hue-plane LUT): see the cv2 split of the e2e section",
    ),
    Ratio(
        id="stream_wrapper",
        what="RandomAugmentWrapper(webdataset) / bare .map(albumentations), 2 workers",
        numerator="stream/wds_wrapper",
        denominator="stream/wds_map",
        op=">=",
        target=0.97,
        hint="the streaming wrapper's path per sample (pass, window, key, adapter): "
        "profile StreamingAugment.outputs",
    ),
    Ratio(
        id="stream_mosaic",
        what="MosaicDataset(stream) / MosaicDataset(list)[i], same decoded samples",
        numerator="stream/mosaic_stream",
        denominator="stream/mosaic_map",
        op=">=",
        target=0.9,
        hint="the window (deque, entries, the map-style mosaic over it): profile "
        "StreamingMosaic.outputs",
    ),
)
"""The goals, in the order of the goals table."""


def check_goals(goals: Sequence[Goal], rows: Sequence[str]) -> None:
    """Refuse repeated goal ids, and goals on rows that do not exist (never evaluated).

    >>> check_goals(GOALS[:1], ["key/sample_item"])
    >>> check_goals(GOALS[:1], ["key/stream_item"])
    Traceback (most recent call last):
    ...
    ValueError: goal 'key_sample' reads rows ['key/sample_item'], not in the catalogue
    """
    ids = [goal.id for goal in goals]
    if len(set(ids)) != len(ids):
        raise ValueError(f"goal ids repeat: {ids}")
    for goal in goals:
        unknown = sorted(set(goal.rows) - set(rows))
        if unknown:
            raise ValueError(f"goal {goal.id!r} reads rows {unknown}, not in the catalogue")


check_goals(GOALS, ROW_IDS)
