"""Like for like: each contender's settings, read from its configuration objects, compared.

:func:`describe` walks a contender (rankaug's datasets and wrappers, albumentations'
``Compose``, ultralytics' ``YOLODataset`` and its transforms, the floors' ``FloorWork``)
and returns its :data:`Work`: aspect -> :class:`Setting`. The compared part of a setting
(``value``) is what decides the work done per sample (which steps run, how often, their
ranges, the output's shape); ``via`` says how (which class, its own parameters) and is
printed, not compared. A goal whose two rows' works differ in any compared aspect is
refused (``benchmarks._goals.Goal.evaluate``).

This is benchmark code, never imported by rankaug.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ASPECTS",
    "FloorWork",
    "Setting",
    "Work",
    "describe",
    "differences",
    "hsv_gains",
    "print_work",
    "tagged",
    "with_output",
]

ASPECTS = ("mosaic", "affine", "hsv", "flip", "mix", "extras", "output")
"""The compared aspects, in the order printed."""


@dataclass(frozen=True)
class Setting:
    """One aspect of a contender's work: ``value`` is compared, ``via`` is not."""

    value: str
    via: str = ""


Work = dict[str, Setting]


@dataclass(frozen=True)
class FloorWork:
    """What a floor contender does per sample (it has no other configuration object).

    Attributes:
        grid: The mosaic's grid (``None``: no mosaic).
        scale: The affine's scale range half-width (``1 +- scale``), ``None``: no affine.
        translate: The affine's translation, a fraction of the side.
        hsv: ``(hgain, sgain, vgain)``, ultralytics' meaning, every sample; ``None``: none.
        flip: Probability of the horizontal flip.
        via: How it does it, for the table.
    """

    grid: tuple[int, int] | None = None
    scale: float | None = None
    translate: float = 0.0
    hsv: tuple[float, float, float] | None = None
    flip: float = 0.0
    via: str = ""


def _g(x: float) -> str:
    return f"{float(x):g}"


def _affine(
    scale: tuple[float, float], translate: float, degrees: float, shear: float, p: float = 1.0
) -> str:
    return (
        f"p={_g(p)}, scale {_g(scale[0])}-{_g(scale[1])}, translate ±{_g(translate)}, "
        f"degrees ±{_g(degrees)}, shear ±{_g(shear)}"
    )


def hsv_gains(hgain: float, sgain: float, vgain: float) -> str:
    """The ``hsv`` aspect of ultralytics' ``RandomHSV`` meaning, every sample.

    >>> hsv_gains(0.015, 0.7, 0.4)
    'p=1, gains h 0.015 s 0.7 v 0.4'
    """
    return f"p=1, gains h {_g(hgain)} s {_g(sgain)} v {_g(vgain)}"


def _hsv_jitter(jitter: Any, where: str) -> Setting:
    return Setting(
        hsv_gains(jitter.hgain, jitter.sgain, jitter.vgain),
        f"rankaug.HSVJitter({where}): cvtColor into the output, split into kept planes, "
        "the hue shifted in whole numbers, s and v by convertScaleAbs, merged, cvtColor back",
    )


def _flip(horizontal: float, vertical: float = 0.0) -> str:
    return f"horizontal p={_g(horizontal)}, vertical p={_g(vertical)}"


def _albumentations(compose: Any) -> Work:
    import albumentations as A

    work: Work = {}
    extras = []
    for t in compose.transforms:
        name = type(t).__name__
        if isinstance(t, A.HueSaturationValue):
            limits = (t.hue_shift_limit[1], t.sat_shift_limit[1], t.val_shift_limit[1])
            work["hsv"] = Setting(
                f"p={_g(t.p)}, additive shifts h ±{_g(limits[0])} s ±{_g(limits[1])} v "
                f"±{_g(limits[2])}",  # not ultralytics' gains: never like for like with them
                f"A.HueSaturationValue(p={_g(t.p)}) (cvtColor, split, a hue LUT, two adds "
                "and a grey mask, merge, cvtColor)",
            )
        elif isinstance(t, A.HorizontalFlip):
            work["flip"] = Setting(_flip(t.p), f"A.HorizontalFlip(p={_g(t.p)})")
        elif isinstance(t, A.Mosaic):
            rows, cols = t.grid_yx
            work["mosaic"] = Setting(f"{rows}x{cols} p={_g(t.p)}", "A.Mosaic")
        elif isinstance(t, A.Affine):
            work["affine"] = Setting(
                _affine(
                    t.scale["x"], t.translate_percent["x"][1], t.rotate[1], t.shear["x"][1], t.p
                ),
                "A.Affine, after the mosaic (a second resampling)",
            )
        elif t.p > 0:
            extras.append(f"{name} p={_g(t.p)}")
    if extras:
        work["extras"] = Setting(", ".join(extras), "albumentations")
    return work


def _mosaic(dataset: Any) -> Work:
    config = dataset.config
    layout = config.layout
    rows, cols = layout.grid
    work: Work = {
        "mosaic": Setting(
            f"{rows}x{cols} p={_g(config.p)}",
            f"MosaicDataset(canvas={layout.canvas!r}, center {layout.center_range})",
        ),
        "flip": Setting(_flip(layout.flip), "MosaicGrid(flip=)" if layout.flip else ""),
    }
    affine = config.affine
    if affine is not None:
        work["affine"] = Setting(
            _affine(
                (1 - affine.scale, 1 + affine.scale), affine.translate, affine.degrees, affine.shear
            ),
            "rankaug.MosaicAffine, fused with the mosaic (one resampling)",
        )
        if affine.flip:
            work["flip"] = Setting(_flip(affine.flip), "MosaicAffine(flip=), folded in the affine")
    if config.color is not None:
        work["hsv"] = _hsv_jitter(config.color, "MosaicDataset(color=), in the output pass")
    return work


def _ultralytics(transforms: Any) -> Work:
    work: Work = {}
    extras = []
    flips = {"horizontal": 0.0, "vertical": 0.0}
    stack = list(transforms.transforms)
    while stack:
        t = stack.pop(0)
        name = type(t).__name__
        if name == "Compose":
            stack[:0] = list(t.transforms)
        elif name == "Mosaic":
            side = int(t.n**0.5)
            work["mosaic"] = Setting(f"{side}x{side} p={_g(t.p)}", f"ultralytics Mosaic(n={t.n})")
        elif name == "RandomPerspective":
            via = "ultralytics RandomPerspective (warpAffine of the 2x canvas)"
            value = _affine((1 - t.scale, 1 + t.scale), t.translate, t.degrees, t.shear)
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
                    f"{type(a).__name__} p={_g(a.p)}" for a in t.transform.transforms if a.p > 0
                ]
                extras += inner
        elif name in ("MixUp", "CutMix", "CopyPaste"):
            if t.p > 0:
                work["mix"] = _ultralytics_mix(t)
        elif name not in ("Format", "LetterBox"):
            extras.append(name)
    flip = _flip(flips["horizontal"], flips["vertical"])
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
    p = _g(t.p)
    if name == "MixUp":
        beta = _g(ULTRALYTICS_MIXUP_BETA)
        return Setting(f"mixup p={p}, ratio Beta({beta}, {beta})", "ultralytics MixUp")
    if name == "CutMix":
        return Setting(
            f"cutmix p={p}, area Beta({_g(t.beta)}, {_g(t.beta)})",
            f"ultralytics CutMix(num_areas={t.num_areas}): skips when no area avoids the boxes",
        )
    source = "partner" if t.mode == "mixup" else t.mode
    given = "get_indexes" in vars(t)  # benchmarks._mix_peers: the partners given
    return Setting(
        f"copypaste p={p}, {source}, all eligible, max overlap {_g(ULTRALYTICS_COPYPASTE_IOA)}",
        f"ultralytics CopyPaste(mode={t.mode!r})" + (", rankaug's partners" if given else ""),
    )


def _floor(floor: FloorWork) -> Work:
    work: Work = {"flip": Setting(_flip(floor.flip))}
    if floor.grid is not None:
        work["mosaic"] = Setting(f"{floor.grid[0]}x{floor.grid[1]} p=1", floor.via)
    if floor.scale is not None:
        work["affine"] = Setting(_affine((1 - floor.scale, 1 + floor.scale), floor.translate, 0, 0))
    if floor.hsv is not None:
        work["hsv"] = Setting(hsv_gains(*floor.hsv), "planes: hue shift + convertScaleAbs (s, v)")
    return work


@dataclass
class _Steps:
    transforms: list[Any]


def tagged(step: Callable[[int], Any], subject: Any) -> Callable[[int], Any]:
    """``step`` with ``subject`` attached: the object :func:`describe` reads for it."""
    step.subject = subject  # type: ignore[attr-defined]
    return step


def describe(contender: Any) -> Work:
    """The work a contender does per sample, from its configuration objects.

    Args:
        contender: A rankaug dataset or wrapper (walked down to its source), an
            albumentations ``Compose``, an ultralytics ``YOLODataset`` or ``Compose``, a
            rankaug mix dataset, a ``rankaug.HSVJitter``, an ultralytics transform, or a
            :class:`FloorWork`.

    Returns:
        Aspect -> setting; the aspects it does not do read ``"none"`` (flip ``p=0``).
    """
    work: Work = {}
    layers = [contender]
    while layers:
        obj = layers.pop(0)
        name = type(obj).__name__
        if isinstance(obj, FloorWork):
            work |= _floor(obj)
        elif name.startswith("Streaming") and hasattr(obj, "_keyed"):
            layers.append(obj._keyed)  # the map-style wrapper doing the per-sample work
        elif name == "RandomAugmentWrapper":
            layers += [obj.dataset, obj.transform]
        elif name == "CachedDataset":
            layers.append(obj.dataset)
        elif name == "Compose" and type(obj).__module__.startswith("albumentations"):
            work |= _albumentations(obj)
        elif name == "MosaicDataset":
            work |= _mosaic(obj)  # before the wrapper's steps: its flip wins
        elif name == "HSVJitter":
            work["hsv"] = _hsv_jitter(obj, "standalone")
        elif name in ("MixUpDataset", "CutMixDataset", "CopyPasteDataset"):
            work["mix"] = _rankaug_mix(obj)
        elif name == "YOLODataset":
            layers.append(obj.transforms)
        elif name == "Compose":
            work |= _ultralytics(obj)
        elif type(obj).__module__.startswith("ultralytics"):
            work |= _ultralytics(_Steps([obj]))
        elif callable(obj) and hasattr(obj, "subject"):
            layers.append(obj.subject)
    defaults = {"flip": _flip(0.0)}
    return {a: work.get(a, Setting(defaults.get(a, "none"))) for a in ASPECTS}


def _rankaug_mix(dataset: Any) -> Setting:
    name = type(dataset).__name__.removesuffix("Dataset").lower()
    p = dataset.config.p
    if name == "mixup":
        return Setting(f"mixup p={_g(p)}, ratio Beta({_g(dataset.alpha)}, {_g(dataset.alpha)})")
    if name == "cutmix":
        return Setting(f"cutmix p={_g(p)}, area Beta({_g(dataset.alpha)}, {_g(dataset.alpha)})")
    overlap = "none" if dataset.max_overlap is None else _g(dataset.max_overlap)
    every = "all eligible" if dataset.fraction == 1 else f"fraction {_g(dataset.fraction)}"
    return Setting(
        f"copypaste p={_g(p)}, {dataset.source}, {every}, max overlap {overlap}",
        f"CopyPasteDataset(fraction={_g(dataset.fraction)})",
    )


def with_output(work: Work, value: str, via: str = "") -> Work:
    """``work`` with its ``output`` aspect read from an actual output (shape, dtype)."""
    return {**work, "output": Setting(value, via)}


def differences(a: Work, b: Work, aspects: Sequence[str] = ASPECTS) -> list[str]:
    """The compared aspects where two works differ, as ``"aspect: a vs b"``.

    >>> one = {"hsv": Setting("p=1", "RandomHSV"), "flip": Setting("p=0.5")}
    >>> differences(one, {"hsv": Setting("p=0.5", "A.HSV"), "flip": Setting("p=0.5")})
    ['hsv: p=1 vs p=0.5']
    >>> differences(one, {"hsv": Setting("p=1", "A.HSV"), "flip": Setting("p=0.5")})
    []
    """
    out = []
    for aspect in aspects:
        x, y = a.get(aspect), b.get(aspect)
        if x is not None and y is not None and x.value != y.value:
            out.append(f"{aspect}: {x.value} vs {y.value}")
    return out


def print_work(
    out: Callable[[str], None],
    title: str,
    works: Mapping[str, Work],
    *,
    aspects: Sequence[str] = ASPECTS,
) -> None:
    """A race's "same work" table: per aspect, each setting and who has it.

    An aspect where every contender agrees prints once, ``(all)``; one where they differ
    prints each setting with its contenders. How each does it (``via``) follows.
    """
    out(f"  same work, {title}:")
    for aspect in aspects:
        who: dict[str, list[str]] = {}
        for name, work in works.items():
            if aspect in work:
                who.setdefault(work[aspect].value, []).append(name)
        if len(who) == 1:
            out(f"    {aspect:7s} {next(iter(who))}  (all)")
            continue
        for k, (value, names) in enumerate(who.items()):
            out(f"    {aspect if k == 0 else '':7s} {value}: {', '.join(names)}")
    for name, work in works.items():
        vias = [f"{a}: {work[a].via}" for a in aspects if a in work and work[a].via]
        if vias:
            out(f"    {name}: " + "; ".join(vias))
