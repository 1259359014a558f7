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
    "affine_text",
    "decoded",
    "Setting",
    "Work",
    "describe",
    "differences",
    "flip_text",
    "hsv_gains",
    "num",
    "print_work",
    "tagged",
    "tiles_text",
    "with_output",
]
ASPECTS = ("decode", "mosaic", "affine", "hsv", "flip", "mix", "extras", "output")
"""The compared aspects, in the order printed."""
LINEAR = "INTER_LINEAR"
"""ultralytics' ``load_image`` resize (``cv2.INTER_LINEAR`` whatever the scale)."""


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
        tile: The box each tile is fitted in, aspect kept, ``(height, width)``.
        scale: The affine's scale range half-width (``1 +- scale``), ``None``: no affine.
        translate: The affine's translation, a fraction of the side.
        hsv: ``(hgain, sgain, vgain)``, ultralytics' meaning, every sample; ``None``: none.
        flip: Probability of the horizontal flip.
        decode: How its images are decoded (:func:`decoded`), ``None``: not at all.
        channels: Its output's channel order (``"RGB"``), ``None``: not said.
        via: How it does it, for the table.
    """

    grid: tuple[int, int] | None = None
    tile: tuple[int, int] | None = None
    scale: float | None = None
    translate: float = 0.0
    hsv: tuple[float, float, float] | None = None
    flip: float = 0.0
    decode: str | None = None
    channels: str | None = None
    via: str = ""


def decoded(side: int | None, reduced: bool = False, interpolation: str = "linear") -> str:
    """The ``decode`` aspect: how each image file becomes the tile the mosaic reads.

    ``side``: the long side it is resized to on load (``None``: its own size);
    ``reduced``: the JPEG decoder shrinks by 2, 4 or 8 first; ``interpolation``:
    ``"linear"`` (``INTER_LINEAR`` always) or ``"auto"`` (``INTER_AREA`` for shrinks of 2x
    or more), rankaug's ``YoloFolder(interpolation=)``.

    >>> decoded(640)
    'full decode, long side 640, INTER_LINEAR'
    >>> decoded(640, reduced=True)
    'JPEG decoder shrinks 2-8x where it can, long side 640, INTER_LINEAR'
    """
    if side is None:
        return "full decode, own size"
    how = "JPEG decoder shrinks 2-8x where it can" if reduced else "full decode"
    resize = (
        LINEAR if interpolation == "linear" else "INTER_AREA for 2x+ shrinks, else INTER_LINEAR"
    )
    return f"{how}, long side {side}, {resize}"


def num(x: float) -> str:
    return f"{float(x):g}"


def affine_text(
    scale: tuple[float, float],
    translate: float,
    degrees: float,
    shear: float,
    p: float = 1.0,
    *,
    scale_y: tuple[float, float] | None = None,
    translate_y: float | None = None,
    shear_y: float | None = None,
) -> str:
    """An affine's ranges; ``scale_y``: a y scale drawn apart from x (``None``: one scale).

    >>> affine_text((0.5, 1.5), 0.1, 0, 0)
    'p=1, scale 0.5-1.5, translate ±0.1, degrees ±0, shear ±0'
    >>> affine_text((0.5, 1.5), 0.1, 0, 0, scale_y=(0.5, 1.5), translate_y=0.2)
    'p=1, scale x 0.5-1.5 and y 0.5-1.5 drawn apart, translate x ±0.1 y ±0.2, degrees ±0, shear ±0'
    """
    ranged = f"{num(scale[0])}-{num(scale[1])}"
    if scale_y is not None:
        ranged = f"x {ranged} and y {num(scale_y[0])}-{num(scale_y[1])} drawn apart"
    return (
        f"p={num(p)}, scale {ranged}, translate {_xy(translate, translate_y)}, "
        f"degrees ±{num(degrees)}, shear {_xy(shear, shear_y)}"
    )


def _xy(x: float, y: float | None) -> str:
    """``±x`` where y's range is x's (or not given), ``x ±a y ±b`` where it is not."""
    return f"±{num(x)}" if y is None or y == x else f"x ±{num(x)} y ±{num(y)}"


def tiles_text(fit: str, visible: int) -> str:
    return f"tiles {fit}, up to {visible} cells visible"


def hsv_gains(hgain: float, sgain: float, vgain: float) -> str:
    """The ``hsv`` aspect of ultralytics' ``RandomHSV`` meaning, every sample.

    >>> hsv_gains(0.015, 0.7, 0.4)
    'p=1, gains h 0.015 s 0.7 v 0.4'
    """
    return f"p=1, gains h {num(hgain)} s {num(sgain)} v {num(vgain)}"


def _hsv_jitter(jitter: Any, where: str) -> Setting:
    return Setting(
        hsv_gains(jitter.hgain, jitter.sgain, jitter.vgain),
        f"rankaug.HSVJitter({where}): cvtColor into the output, split into kept planes, "
        "the hue shifted in whole numbers, s and v by convertScaleAbs, merged, cvtColor back",
    )


def flip_text(horizontal: float, vertical: float = 0.0) -> str:
    return f"horizontal p={num(horizontal)}, vertical p={num(vertical)}"


def _mosaic(dataset: Any) -> Work:
    config = dataset.config
    layout = config.layout
    rows, cols = layout.grid
    height, width = config.output_size
    fit = {
        "keep": f"fit in {height}x{width} (aspect kept)",
        "fit": "fit in their cell (aspect kept)",
        "fill": "cover their cell (cropped)",
    }[layout.scale_mode]
    if tuple(layout.scale_range) != (1.0, 1.0):
        fit += f", scaled {num(layout.scale_range[0])}-{num(layout.scale_range[1])}"
    work: Work = {
        "mosaic": Setting(
            f"{rows}x{cols} p={num(config.p)}, {tiles_text(fit, rows * cols)}",
            f"MosaicGrid(canvas={layout.canvas!r}, center_range={layout.center_range})",
        ),
        "flip": Setting(flip_text(layout.flip), "MosaicGrid(flip=)" if layout.flip else ""),
    }
    affine = config.affine
    if affine is not None:
        work["affine"] = Setting(
            affine_text(
                (1 - affine.scale, 1 + affine.scale), affine.translate, affine.degrees, affine.shear
            ),
            "rankaug.MosaicAffine, fused with the mosaic (one resampling)",
        )
        if affine.flip:
            work["flip"] = Setting(
                flip_text(affine.flip), "MosaicAffine(flip=), folded in the affine"
            )
    if config.color is not None:
        work["hsv"] = _hsv_jitter(config.color, "MosaicDataset(color=), in the output pass")
    return work


def _floor(floor: FloorWork) -> Work:
    work: Work = {"flip": Setting(flip_text(floor.flip))}
    if floor.grid is not None:
        rows, cols = floor.grid
        value = f"{rows}x{cols} p=1"
        if floor.tile is not None:
            fit = f"fit in {floor.tile[0]}x{floor.tile[1]} (aspect kept)"
            value += ", " + tiles_text(fit, rows * cols)
        work["mosaic"] = Setting(value, floor.via)
    if floor.decode is not None:
        via = "cv2.imread, cv2.resize, cvtColor to RGB; decoded once, at construction"
        work["decode"] = Setting(floor.decode, via)
    if floor.channels is not None:
        work["output"] = Setting(floor.channels)
    if floor.scale is not None:
        work["affine"] = Setting(
            affine_text((1 - floor.scale, 1 + floor.scale), floor.translate, 0, 0)
        )
    if floor.hsv is not None:
        work["hsv"] = Setting(hsv_gains(*floor.hsv), "planes: hue shift + convertScaleAbs (s, v)")
    return work


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
    from benchmarks import _peer_work  # the peers' readers (they use this module's types)

    work: Work = {}
    layers = [contender]
    cached = False
    while layers:
        obj = layers.pop(0)
        name = type(obj).__name__
        if isinstance(obj, FloorWork):
            work |= _floor(obj)
        elif name in ("YoloFolder", "CocoDetection"):
            work["decode"] = _rankaug_decode(obj)
            work["output"] = Setting("RGB", f"{name}: read_rgb")
        elif name.startswith("Streaming") and hasattr(obj, "_keyed"):
            layers.append(obj._keyed)  # the map-style wrapper doing the per-sample work
        elif name == "RandomAugmentWrapper":
            layers += [obj.dataset, obj.transform]
        elif name == "CachedDataset":
            cached = True
            layers.append(obj.dataset)
        elif name == "Compose" and type(obj).__module__.startswith("albumentations"):
            work |= _peer_work.albumentations_work(obj)
        elif name == "MosaicDataset":
            work |= _mosaic(obj)  # before the wrapper's steps: its flip wins
            layers.append(obj.dataset)  # its source: a folder decodes
        elif name == "HSVJitter":
            work["hsv"] = _hsv_jitter(obj, "standalone")
        elif name in ("MixUpDataset", "CutMixDataset", "CopyPasteDataset"):
            work["mix"] = _rankaug_mix(obj)
        elif name == "YOLODataset":
            work["decode"] = _peer_work.ultralytics_decode(obj)
            layers.append(obj.transforms)
        elif name == "Compose":
            work |= _peer_work.ultralytics_work(obj.transforms)
        elif type(obj).__module__.startswith("ultralytics"):
            work |= _peer_work.ultralytics_work([obj])
        elif callable(obj) and hasattr(obj, "subject"):
            layers.append(obj.subject)
    if cached and "decode" in work:
        read = work["decode"]
        work["decode"] = Setting(read.value, read.via + "; decoded once, read from CachedDataset")
    defaults = {"flip": flip_text(0.0)}
    return {a: work.get(a, Setting(defaults.get(a, "none"))) for a in ASPECTS}


def _rankaug_decode(folder: Any) -> Setting:
    """``YoloFolder`` / ``CocoDetection``: how each file is read (``read_rgb_resized``)."""
    interpolation = getattr(folder, "interpolation", "auto")
    return Setting(
        decoded(folder.image_size, folder.reduced_decode, interpolation),
        f"{type(folder).__name__}(reduced_decode={folder.reduced_decode}, "
        f"interpolation={interpolation!r})",
    )


def _rankaug_mix(dataset: Any) -> Setting:
    name = type(dataset).__name__.removesuffix("Dataset").lower()
    p = dataset.config.p
    if name == "mixup":
        return Setting(f"mixup p={num(p)}, ratio Beta({num(dataset.alpha)}, {num(dataset.alpha)})")
    if name == "cutmix":
        return Setting(f"cutmix p={num(p)}, area Beta({num(dataset.alpha)}, {num(dataset.alpha)})")
    overlap = "none" if dataset.max_overlap is None else num(dataset.max_overlap)
    every = "all eligible" if dataset.fraction == 1 else f"fraction {num(dataset.fraction)}"
    return Setting(
        f"copypaste p={num(p)}, {dataset.source}, {every}, max overlap {overlap}",
        f"CopyPasteDataset(fraction={num(dataset.fraction)})",
    )


def with_output(work: Work, value: str, via: str = "") -> Work:
    """``work`` with its ``output`` aspect read from an actual output (shape, dtype).

    The channel order its objects said (:func:`describe`'s ``output``) follows it.

    >>> with_output({"output": Setting("RGB")}, "(B, 3, 8, 8) torch.uint8")["output"].value
    '(B, 3, 8, 8) torch.uint8, RGB'
    """
    said = work.get("output")
    if said is not None and said.value != "none":
        value, via = f"{value}, {said.value}", "; ".join(x for x in (via, said.via) if x)
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
