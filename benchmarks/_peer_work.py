"""The peers' settings for the same-work tables: albumentations' and ultralytics' objects.

:func:`benchmarks._same_work.describe` calls these on the objects it finds; the aspects
and their wording are that module's. This is benchmark code, never imported by rankaug.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchmarks._same_work import (
    Setting,
    Work,
    affine_text,
    decoded,
    flip_text,
    hsv_gains,
    num,
    tiles_text,
)

__all__ = [
    "ULTRALYTICS_COPYPASTE_IOA",
    "ULTRALYTICS_MIXUP_BETA",
    "albumentations_work",
    "ultralytics_decode",
    "ultralytics_work",
]


def albumentations_work(compose: Any) -> Work:
    """An albumentations ``Compose``: its mosaic, affine, HSV, flip and the rest."""
    import albumentations as A

    work: Work = {}
    extras = []
    for t in compose.transforms:
        name = type(t).__name__
        if isinstance(t, A.HueSaturationValue):
            limits = (t.hue_shift_limit[1], t.sat_shift_limit[1], t.val_shift_limit[1])
            work["hsv"] = Setting(
                f"p={num(t.p)}, additive shifts h ±{num(limits[0])} s ±{num(limits[1])} v "
                f"±{num(limits[2])}",  # not ultralytics' gains: never like for like with them
                f"A.HueSaturationValue(p={num(t.p)}) (cvtColor, split, a hue LUT, two adds "
                "and a grey mask, merge, cvtColor)",
            )
        elif isinstance(t, A.HorizontalFlip):
            work["flip"] = Setting(flip_text(t.p), f"A.HorizontalFlip(p={num(t.p)})")
        elif isinstance(t, A.Mosaic):
            work["mosaic"] = _albumentations_mosaic(t)
        elif isinstance(t, A.Affine):
            scale, translate, shear = t.scale, t.translate_percent, t.shear
            work["affine"] = Setting(
                affine_text(
                    scale["x"],
                    translate["x"][1],
                    t.rotate[1],
                    shear["x"][1],
                    t.p,
                    scale_y=None if t.keep_ratio else scale["y"],  # keep_ratio: y is x's draw
                    translate_y=translate["y"][1],
                    shear_y=shear["y"][1],
                ),
                f"A.Affine(keep_ratio={t.keep_ratio}), after the mosaic (a second resampling)",
            )
        elif t.p > 0:
            extras.append(f"{name} p={num(t.p)}")
    if extras:
        work["extras"] = Setting(", ".join(extras), "albumentations")
    return work


def _albumentations_mosaic(t: Any) -> Setting:
    """``A.Mosaic``: each tile fitted to its cell, the cells the target window can reach."""
    rows, cols = t.grid_yx
    (cell_h, cell_w), (out_h, out_w) = t.cell_shape, t.target_size
    # a window of out_h rows meets at most floor((out_h - 1) / cell_h) + 2 rows of cells
    visible = min(rows, (out_h - 1) // cell_h + 2) * min(cols, (out_w - 1) // cell_w + 2)
    fit = (
        f"fit in {cell_h}x{cell_w} (aspect kept)"
        if t.fit_mode == "contain"
        else f"cover {cell_h}x{cell_w} (cropped)"
    )
    return Setting(
        f"{rows}x{cols} p={num(t.p)}, {tiles_text(fit, visible)}",
        f"A.Mosaic(cell_shape={t.cell_shape}, fit_mode={t.fit_mode!r}): each whole tile "
        "resized to its cell, then cropped",
    )


def ultralytics_work(transforms: Sequence[Any]) -> Work:
    """The work of ultralytics' transforms (a ``Compose``'s, nested ones opened)."""
    work: Work = {}
    extras = []
    flips = {"horizontal": 0.0, "vertical": 0.0}
    stack = list(transforms)
    while stack:
        t = stack.pop(0)
        name = type(t).__name__
        if name == "Compose":
            stack[:0] = list(t.transforms)
        elif name == "Mosaic":
            side, size = int(t.n**0.5), t.imgsz  # its tiles: load_image's, long side imgsz
            fit = f"fit in {size}x{size} (aspect kept)"
            work["mosaic"] = Setting(
                f"{side}x{side} p={num(t.p)}, {tiles_text(fit, t.n)}",
                f"ultralytics Mosaic(n={t.n})",
            )
        elif name == "RandomPerspective":
            via = "ultralytics RandomPerspective (warpAffine of the 2x canvas)"
            value = affine_text((1 - t.scale, 1 + t.scale), t.translate, t.degrees, t.shear)
            work["affine"] = Setting(
                value + (f", perspective {t.perspective:g}" if t.perspective else ""), via
            )
        elif name == "RandomHSV":
            work["hsv"] = Setting(
                hsv_gains(t.hgain, t.sgain, t.vgain),
                f"ultralytics RandomHSV(hgain={t.hgain}, sgain={t.sgain}, vgain={t.vgain}): "
                "cvtColor, a 3-channel cv2.LUT, cvtColor",
            )
        elif name == "RandomFlip":
            flips[t.direction] = t.p
        elif name == "Albumentations":
            if t.transform is not None and t.p > 0:
                inner = [
                    f"{type(a).__name__} p={num(a.p)}" for a in t.transform.transforms if a.p > 0
                ]
                extras += inner
        elif name in ("MixUp", "CutMix", "CopyPaste"):
            if t.p > 0:
                work["mix"] = _ultralytics_mix(t)
        elif name == "Format":  # it reverses the channels (BGR -> RGB) unless bgr draws
            order = "RGB" if t.bgr == 0 else f"RGB, BGR with p={num(t.bgr)}"
            work["output"] = Setting(order, f"ultralytics Format(bgr={t.bgr})")
        elif name != "LetterBox":
            extras.append(name)
    flip = flip_text(flips["horizontal"], flips["vertical"])
    work["flip"] = Setting(flip, "ultralytics RandomFlip" if any(flips.values()) else "")
    if extras:
        work["extras"] = Setting(", ".join(extras), "ultralytics' Albumentations step")
    return work


ULTRALYTICS_MIXUP_BETA = 32.0
"""``np.random.beta(32.0, 32.0)``: fixed in ultralytics' ``MixUp._mix_transform``."""
ULTRALYTICS_COPYPASTE_IOA = 0.3
"""``ioa < 0.30``: fixed in ultralytics' ``CopyPaste._transform``."""


def _ultralytics_mix(t: Any) -> Setting:
    name = type(t).__name__
    p = num(t.p)
    if name == "MixUp":
        beta = num(ULTRALYTICS_MIXUP_BETA)
        return Setting(f"mixup p={p}, ratio Beta({beta}, {beta})", "ultralytics MixUp")
    if name == "CutMix":
        return Setting(
            f"cutmix p={p}, area Beta({num(t.beta)}, {num(t.beta)})",
            f"ultralytics CutMix(num_areas={t.num_areas}): skips when no area avoids the boxes",
        )
    source = "partner" if t.mode == "mixup" else t.mode
    given = "get_indexes" in vars(t)  # benchmarks._mix_peers: the partners given
    return Setting(
        f"copypaste p={p}, {source}, all eligible, max overlap {num(ULTRALYTICS_COPYPASTE_IOA)}",
        f"ultralytics CopyPaste(mode={t.mode!r})" + (", rankaug's partners" if given else ""),
    )


def ultralytics_decode(dataset: Any) -> Setting:
    """``YOLODataset.load_image``: imread, the long side to ``imgsz`` by INTER_LINEAR.

    (ultralytics 8.3+ resizes by ``INTER_LINEAR`` in every mode; earlier versions by
    ``INTER_AREA`` for shrinks without ``augment``: these races augment.)
    """
    imgsz = dataset.imgsz
    side = max(imgsz) if isinstance(imgsz, (tuple, list)) else int(imgsz)
    via = "ultralytics load_image (imread, cv2.resize)"
    if dataset.cache == "ram":
        via += '; decoded once, at construction (cache="ram")'
    return Setting(decoded(side), via)
