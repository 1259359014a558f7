"""The scoreboard's goals: what each section should reach, in the order of the goals table.

Each goal reads rows of the catalogue (``benchmarks/_catalogue.py``) and computes its own
figure (``benchmarks/_goals.py``); :func:`check_goals` refuses, at import, a goal that
reads a row the catalogue does not have.
"""

from __future__ import annotations

from collections.abc import Sequence

from benchmarks._catalogue import EPOCH_WORKERS, ROW_IDS
from benchmarks._goals import Goal

__all__ = ["GOALS", "check_goals"]

_KEY_BASELINE = (("np.random.default_rng alone", "key/numpy_default_rng"),)

# One goal per entry: id, kind, rows, op, target; what it compares; what to look at if missed.
# fmt: off
GOALS: tuple[Goal, ...] = (
    Goal("key_sample", "absolute", ("key/sample_item",), "<=", 15,
         'key + wrapper path, keying="sample", µs/sample',
         "numpy's SeedSequence + PCG64 is most of it: see key/numpy_seedsequence", _KEY_BASELINE),
    Goal("key_stream", "absolute", ("key/stream_item",), "<=", 15,
         'key + wrapper path, keying="stream", µs/sample',
         "the per-sample path (index check, context, epoch read): run --profile", _KEY_BASELINE),
    Goal("wrapper", "paired", ("wrapper/stream", "wrapper/direct"), ">=", 0.985,
         "wrapper / direct albumentations",
         "the wrapper's own path per sample (key, context, adapter unpack/repack, "
         "set_random_state): run --profile for the split", diagnostic="wrapper_paired"),
    Goal("mosaic_floor", "ratio", ("mosaic/rankaug_2x2", "mosaic/floor"), ">=", 0.9,
         "MosaicDataset 2x2 / floor",
         "Python per mosaic beyond the resampling (draws, tiles, boxes): --profile; the "
         "floor with targets bounds the ratio of any mosaic that maps boxes",
         (("the floor with targets itself", "mosaic/floor_targets", "mosaic/floor"),
          ("against the floor with targets", "mosaic/rankaug_2x2", "mosaic/floor_targets"))),
    Goal("mosaic_albumentations", "ratio", ("mosaic/rankaug_2x2", "mosaic/albumentations"),
         ">=", 5.0, "MosaicDataset 2x2 / albumentations A.Mosaic"),
    Goal("mosaic_affine_plain", "ratio", ("mosaic/rankaug_affine", "mosaic/rankaug_2x2"),
         ">=", 0.8, "fused Mosaic+MosaicAffine / plain MosaicDataset",
         "the fused placement: each visible region resized (warped with rotation or shear) "
         "into place, more of the output covered at scales above 1; the box corners",
         like_for_like=False),  # what the fused affine costs over the plain mosaic
    Goal("mosaic_affine_ultralytics", "ratio",
         ("mosaic/rankaug_affine", "mosaic/ultralytics_affine"), ">=", 3.0,
         "fused Mosaic+MosaicAffine / ultralytics Mosaic+affine"),
    Goal("loader_1w_0w", "scaling", ("scaling/recycled_1w", "scaling/recycled_0w"), ">=", 0.9,
         "DataLoader 1 worker / 0 workers, tensors",
         "the worker's batch still lands in fresh pages (see 'recycled' against 'tensor', "
         "and the transport lines)",
         (("collate_detection", "scaling/tensor_1w", "scaling/tensor_0w"),)),
    Goal("loader_2w_1w", "scaling", ("scaling/recycled_2w", "scaling/recycled_1w"), ">=", 1.8,
         "DataLoader 2 workers / 1 worker, tensors",
         "needs 2 idle cores (see 'got N cores, waited'); the main process's share of each "
         "batch (unpickling handles, releasing buffers) competes for them",
         (("collate_detection", "scaling/tensor_2w", "scaling/tensor_1w"),)),
    Goal("scaling_numpy", "scaling", ("scaling/numpy_2w", "scaling/numpy_1w"), ">=", 1.6,
         "2 workers / 1 worker, numpy samples",
         "numpy batches are pickled into the worker pipe, and the main process reads "
         "every byte of them back out (its CPU per batch: section 4): return torch tensors"),
    Goal("epoch_sampler", "difference", ("epoch/sampler_carried", "epoch/sampler_plain"),
         "<=", 1.0, "EpochSampler - DistributedSampler, µs/index",
         "EpochSampler's per-index path (one EpochIndex per index): run --profile",
         like_for_like=False),  # what carrying the epoch costs (so for every epoch goal)
    Goal("epoch_wrapper", "difference", ("epoch/wrapper_carried", "epoch/wrapper_plain"),
         "<=", 1.0, "wrapper[EpochIndex] - wrapper[i], µs/index",
         "where KeyedDataset.context reads the index's epoch: run --profile",
         like_for_like=False),
    *(Goal(f"epoch_loader_{w}w", "difference",
           (f"epoch/loader_carried_{w}w", f"epoch/loader_plain_{w}w"), "<=", 1.0,
           f"DataLoader {w}w, EpochSampler - plain, µs/index",
           "each index list is pickled to the worker: see section 5's pickling line" if w
           else "end to end: see the sampler and wrapper rows of section 5",
           (("wall time", "wall_us"),), like_for_like=False)
      for w in EPOCH_WORKERS),
    *(Goal(f"epoch_batches_{w}w", "difference",
           (f"epoch/loader_batches_{w}w", f"epoch/loader_plain_{w}w"), "<=", 1.0,
           f"DataLoader {w}w, EpochSampler over batches - plain, µs/index",
           "one epoch per batch (EpochBatch): see section 5's pickling line",
           (("wall time", "wall_us"),), like_for_like=False)
      for w in EPOCH_WORKERS),
    Goal("e2e_ram", "cpu", ("e2e/fused_cached_0w", "e2e/ultralytics_ram_0w"), ">=", 1.6,
         "later epochs, rankaug cached / ultralytics ram",
         "with the cache, what is left is pixel work: the floor itself bounds the ratio; "
         "see section 6's split",
         (("the floor with cached reads itself", "e2e/floor_cached_0w", "e2e/ultralytics_ram_0w"),
          ("from memory", "e2e/floor_0w", "e2e/ultralytics_ram_0w"),
          ("2 workers", "e2e/fused_cached_2w", "e2e/ultralytics_ram_2w"),
          ("with A.Affine", "e2e/rankaug_cached_0w", "e2e/ultralytics_ram_0w"))),
    Goal("e2e_default", "cpu", ("e2e/fused_cached_0w", "e2e/ultralytics_0w"), ">=", 2.2,
         "later epochs, rankaug cached / ultralytics default",
         "ultralytics decodes one JPEG per mosaic; the floor itself bounds the ratio; see "
         "section 6's split",
         (("the floor with cached reads itself", "e2e/floor_cached_0w", "e2e/ultralytics_0w"),
          ("from memory", "e2e/floor_0w", "e2e/ultralytics_0w"),
          ("2 workers", "e2e/fused_cached_2w", "e2e/ultralytics_2w"),
          ("with A.Affine", "e2e/rankaug_cached_0w", "e2e/ultralytics_0w"))),
    Goal("e2e_floor", "cpu", ("e2e/fused_cached_0w", "e2e/floor_cached_0w"), ">=", 0.85,
         "later epochs, rankaug cached / the e2e floor, cached reads",
         "rankaug's per-sample Python (keys, checks, targets) and its collate: see section 6's "
         "split", (("2 workers", "e2e/fused_cached_2w", "e2e/floor_cached_2w"),
                   ("the floor from memory", "e2e/fused_cached_0w", "e2e/floor_0w"))),
    Goal("e2e_first", "cpu", ("e2e/fused_cached_first_0w", "e2e/ultralytics_first_0w"),
         ">=", 0.8, "first epoch, rankaug filling / ultralytics default",
         "every image is decoded once and written to the cache: see section 6's split",
         (("2 workers", "e2e/fused_cached_first_2w", "e2e/ultralytics_first_2w"),
          ("with A.Affine", "e2e/rankaug_cached_first_0w", "e2e/ultralytics_first_0w"))),
    Goal("memory", "ratio", ("memory/rankaug_cached", "memory/ultralytics_ram"), "<=", 0.6,
         "memory, 2 ranks x 2 workers, rankaug / ultralytics ram",
         "each process's own PSS (torch, cv2, albumentations) is paid by both: see section 7's "
         "per-process line",
         (("PSS alone", "memory/rankaug_cached_pss", "memory/ultralytics_ram"),)),
    *(Goal(f"mix_{kind}", "ratio", (f"mix/rankaug_{kind}", f"mix/ultralytics_{kind}"), ">=",
           1.5, f"{name} / ultralytics {name}",
           f"rankaug's {name}Dataset path per sample: profile dataset[i]")
      for kind, name in (("mixup", "MixUp"), ("cutmix", "CutMix"))),
    Goal("mix_copypaste", "ratio", ("mix/rankaug_copypaste", "mix/ultralytics_copypaste_masks"),
         ">=", 1.5, "CopyPaste, dense masks / ultralytics + polygons2masks",
         "rankaug's CopyPasteDataset path per sample: profile dataset[i]",
         (("floor of dense masks", "mix/copypaste_floor", "mix/ultralytics_copypaste_masks"),)),
    Goal("mix_copypaste_polygons", "paired",
         ("mix/rankaug_copypaste_polygons", "mix/ultralytics_copypaste"), ">=", 0.9,
         "CopyPaste by polygons / ultralytics, same polygons",
         "drawing and trimming the polygons (rankaug.polygons): profile dataset[i]",
         (("floor by polygons", "mix/copypaste_polygon_floor", "mix/ultralytics_copypaste"),
          ("flip", "mix/rankaug_copypaste_flip_polygons", "mix/ultralytics_copypaste_flip")),
         diagnostic="copypaste_paired"),
    Goal("hsv_ultralytics", "ratio", ("color/rankaug_hsv", "color/ultralytics_hsv"), ">=", 1.2,
         "HSVJitter / ultralytics RandomHSV, same image and gains",
         "both pay the two cvtColor; rankaug's saving is the tables (split planes: the hue "
         "shifted in whole numbers, s and v by convertScaleAbs): see the e2e cv2 split"),
    Goal("stream_wrapper", "paired", ("stream/wds_wrapper", "stream/wds_map"), ">=", 0.97,
         "RandomAugmentWrapper(webdataset) / bare .map(albumentations), paired in process "
         "(the round medians: 2 workers)",
         "the streaming wrapper's path per sample (pass, window, key, adapter): profile "
         "StreamingAugment.outputs",
         diagnostic="stream_wrapper_paired"),
    Goal("stream_mosaic", "ratio", ("stream/mosaic_stream", "stream/mosaic_map"), ">=", 0.9,
         "MosaicDataset(stream) / MosaicDataset(list)[i], same decoded samples",
         "the window (deque, entries, the map-style mosaic over it): profile "
         "StreamingMosaic.outputs"),
)
# fmt: on
"""The goals, in the order of the goals table."""


def check_goals(goals: Sequence[Goal], rows: Sequence[str]) -> None:
    """Refuse repeated goal ids, rows that do not exist (never evaluated) or miscounted.

    >>> check_goals(GOALS[:1], ["key/sample_item"])
    >>> check_goals(GOALS[:1], ["key/stream_item"])
    Traceback (most recent call last):
    ...
    ValueError: goal 'key_sample' reads rows ['key/sample_item'], not in the catalogue
    >>> check_goals([Goal("x", "ratio", ("key/sample_item",), ">=", 1, "x")], ROW_IDS)
    Traceback (most recent call last):
    ...
    ValueError: goal 'x' reads 1 row, a ratio 2
    """
    ids = [goal.id for goal in goals]
    if len(set(ids)) != len(ids):
        raise ValueError(f"goal ids repeat: {ids}")
    for goal in goals:
        wanted = 1 if goal.kind == "absolute" else 2
        if len(goal.rows) != wanted:
            count = f"{len(goal.rows)} row{'s' if len(goal.rows) != 1 else ''}"
            raise ValueError(f"goal {goal.id!r} reads {count}, a {goal.kind} {wanted}")
        unknown = sorted(set(goal.rows) - set(rows))
        if unknown:
            raise ValueError(f"goal {goal.id!r} reads rows {unknown}, not in the catalogue")


check_goals(GOALS, ROW_IDS)
