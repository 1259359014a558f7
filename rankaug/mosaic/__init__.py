"""``MosaicDataset``: YOLO-style mosaics whose every random choice comes from the key.

One sample is made in six steps, each in its own module:

1. **plan** (:mod:`~rankaug.mosaic.plan`): every draw, from the key, as one block of
   uniforms in a specified order (the partners' rules are :mod:`rankaug._multi.partners`');
2. **read** (:mod:`~rankaug._multi.tiles`): the main sample through the adapter (its
   shape is rebuilt at the end), the partners as read-only views, each checked;
3. **layout** (:mod:`~rankaug.mosaic.layout`): pure geometry, the grid lines, cells,
   scales and windows, and the record of them; with ``affine=``, **fuse**
   (:mod:`~rankaug.mosaic.fused`): each tile's placement composed with the drawn affine
   (:mod:`~rankaug.mosaic.affine`), onto the output;
4. **targets** (:mod:`~rankaug.mosaic.targets`): boxes, label fields, masks, instance
   polygons (:mod:`~rankaug.mosaic.outlines`) and keypoints
   (:mod:`~rankaug.mosaic.keypoints`), from the layout alone, before the pixels (whose
   work takes the processor's caches);
5. **paint** (:mod:`~rankaug.mosaic.paint`): each visible window resized straight
   into its place in the output, only the uncovered strips filled (under an affine that
   rotates or shears: warped once into its region, where the tile owns the pixels);
   with ``color=``, jittered in place, the rows no tile reaches set to the fill's
   jittered grey rather than filled first (:mod:`~rankaug.mosaic.colour`);
6. **repack**: the adapter gives the output the main sample's shape, and the record
   is attached (:mod:`~rankaug.mosaic.record`, also for :meth:`MosaicDataset.replay`).

Steps 3 to 5 make the output's arrays from the plan and the tiles alone
(:func:`~rankaug.mosaic.output.make_output`).

The configuration is checked once (:mod:`~rankaug.mosaic.config`).

**Geometry.** The output is split into ``rows x cols`` cells by interior lines: for a
2x2 grid a centre point in ``center_range`` of the output, YOLO's mosaic centre. Each
tile is scaled (``scale_mode``: ``"keep"`` fits the whole tile in ``output_size``
keeping its aspect ratio, as YOLO loads its images; ``"fit"`` fits it in its cell;
``"fill"`` covers its cell), times its drawn scale factor, then anchored towards the
middle of the mosaic: tiles left of the middle column touch their cell's right edge,
tiles right of it touch the left edge, the middle column is centred (and likewise
vertically), so a 2x2 mosaic puts every tile's inner corner on the centre point,
exactly as YOLOv5. What of the tile falls outside its cell is not drawn; what of the
cell the tile does not cover is ``fill``. ``canvas="yolo"`` produces YOLO's ``2h x 2w``
canvas (tiles still scaled for ``output_size``) for pipelines that crop it with an
affine afterwards.

**Pixels and boxes agree exactly.** The visible part of a tile is an integer window of
the output; the source window is rounded to whole source pixels, and boxes, keypoints,
masks and instance polygons are mapped with the affine map that takes that source
window onto that output window, which is the map ``cv2.resize`` applies. Polygons are
clipped to the window; with polygons each box is the box of its object's pixels,
those its cut polygon draws (the box filters measure that box, see
:mod:`~rankaug.mosaic.targets`), and an
instance whose polygon has nothing left there is dropped with its box, label fields
and mask (the object does not show).

A sample that is not a mosaic (``u[0] >= p``) is the main image alone, scaled to fit
``output_size`` and centred on the output (letterbox), with its targets.

**The affine, fused** (``affine=MosaicAffine(...)``): the equivalent of YOLO's canvas +
``RandomPerspective``, each pixel resampled once. The tiles are laid out on YOLO's
``2h x 2w`` canvas and the drawn affine maps that canvas onto the output; no canvas is
built: each tile's visible part goes straight into the output through the composite of
its placement and the affine. Without rotation and shear (the defaults) that is a
resize as above, on whole output pixels; otherwise one ``cv2.warpAffine`` per tile,
into the region of the output it reaches, written only where the tile owns the pixels.
Boxes go through the same map (their corners, then the enclosing box), filtered as
above; masks, keypoints and polygons follow (a polygon clipped to its tile's canvas
window, through the affine, clipped to the output; its box that of the pixels it
draws). A sample that is not a mosaic is letterboxed to ``output_size``, then given the
affine about the output's centre, as ultralytics does.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, ClassVar, TypeVar

from rankaug._multi.adapter import ReaderAdapter
from rankaug._multi.replay import check_replayed, ranked, replay_rank
from rankaug._multi.settings import check_settings, dataset_settings, settings_text
from rankaug._multi.tiles import TileReader
from rankaug.context import SampleContext, pinning_rank
from rankaug.errors import RankaugWarning
from rankaug.hsv import HSVJitter
from rankaug.keyed import KeyedDataset
from rankaug.keys import KeyedRandom, Keying
from rankaug.mosaic.affine import MosaicAffine
from rankaug.mosaic.config import CanvasMode, MosaicConfig, MosaicGrid, ScaleMode
from rankaug.mosaic.keypoints import unindexed_flip
from rankaug.mosaic.output import make_output
from rankaug.mosaic.plan import Plan, draw_plan, probability
from rankaug.mosaic.record import MosaicRecord, generator_text, read_record
from rankaug.params import Partners, Targets, refuse_leftovers, take
from rankaug.samples import SampleAdapter, attach
from rankaug.stream.detect import Streamable

__all__ = [
    "CanvasMode",
    "MosaicAffine",
    "MosaicConfig",
    "MosaicDataset",
    "MosaicGrid",
    "MosaicRecord",
    "ScaleMode",
]

T_co = TypeVar("T_co", covariant=True)


class MosaicDataset(Streamable, KeyedDataset[T_co]):
    """Rank-aware YOLO-style mosaics over any map-style detection dataset.

    The partners, the main image's cell, the grid lines and the scales come from the
    rankaug key (see :mod:`rankaug.keyed`), never from global state: on four GPUs that
    all called ``torch.manual_seed(0)`` every rank gets different partner tiles, and a
    rerun repeats them bit for bit. See the module docstring for the geometry and the
    target handling, and :class:`MosaicRecord` for what each output records.

    Samples are dicts with albumentations' keys (``image``, ``bboxes``, the
    ``label_fields``, ``mask``, ``masks``, ``keypoints``, and ``segments``: one instance
    polygon per box in pixel ``x, y``, an ``(N, K, 2)`` array or a list of ``(K, 2)``
    ones, as :class:`~rankaug.datasets.YoloFolder` gives with ``segments=True``) or
    ``(image, target)`` pairs with a torchvision-style dict target (``boxes``,
    ``labels``, ...); the output has the main sample's shape, image type and dtypes,
    other keys of the main sample passed through, and the targets the main sample has
    (boxes with every label field when it has boxes; ``segments`` in the main sample's
    form, see :mod:`rankaug.mosaic.targets`). Images are ``HxW`` or ``HxWxC`` (up to 511
    channels) of dtype uint8, uint16, int16, float32 or float64, the same for every
    tile, as are the masks' dtypes; every tile has ``segments`` when the main one has,
    and boxes when the main one has (and the other way round: the main sample has
    boxes when a partner has any). A background image carries empty boxes
    (``np.zeros((0, 4))``, with empty label fields), not none: tiles that disagree on
    having boxes are refused, naming both, as their objects would show unlabelled.

    Over an ``IterableDataset`` it is a :class:`~rankaug.stream.StreamingMosaic`
    (partners from a window of ``buffer_size`` recent samples; see the streaming guide).

    Args:
        dataset: A map-style dataset of detection or segmentation samples, or a stream.
        seed: The run's base seed, ``0 <= seed < 2**64``.
        output_size: The output image's size, an int or ``(height, width)``.
        layout: The grid, scales, fill and the plain mosaic's flip (:class:`MosaicGrid`);
            ``None``: YOLO's 2x2.
        targets: The box format, label and keypoint fields, box filters and clipping
            (:class:`~rankaug.Targets`); with ``segments`` every box filter measures the
            box made from the output polygon's bounds, and ``min_visibility`` the bounds
            of the whole polygon through the map. ``None``: ``Targets()``.
        partners: Where partner tiles come from (:class:`~rankaug.Partners`); ``None``:
            the whole dataset, uniformly, with replacement.
        affine: YOLO's random affine (rotation, scale, shear, translation, and a
            horizontal flip with ``MosaicAffine(flip=...)``), fused into the mosaic (see
            :class:`MosaicAffine` and the module docstring); samples that are not mosaics
            are letterboxed, then given the affine. It needs ``canvas="output"``.
        color: ultralytics' ``RandomHSV`` (:class:`~rankaug.HSVJitter`), applied in
            place to each output once painted, mosaic or not; its gains
            drawn last and recorded under ``"color"``. Images must be ``HxWx3`` uint8.
        p: The probability that a sample is a mosaic, or a function of the epoch
            returning it (picklable, for spawned workers).
        epochs: The total number of epochs, needed by ``close_mosaic``.
        close_mosaic: Switch mosaics off for the last ``close_mosaic`` epochs.
        record: The key the :class:`MosaicRecord` goes under in dict samples (and
            dict targets), not a target's key; ``None`` records nothing.
        keying: ``"stream"``, ``"sample"`` or ``"sample_rank"`` (:mod:`rankaug.keyed`).
        rank: The rank; ``None`` resolves it.
        stream: The key's stream word or name; ``None`` derives one.
        adapter: Converts samples; ``None`` uses :class:`~rankaug.samples.DefaultAdapter`.
        **legacy: The deprecated flat keywords of :class:`MosaicGrid`,
            :class:`~rankaug.Targets` and :class:`~rankaug.Partners` (``flip=``,
            ``box_format=``, ``pool=``, ...), taken as their fields with a
            ``DeprecationWarning`` (:func:`rankaug.params.take`).

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If an argument has a wrong value, or the dataset is empty.

    Attributes:
        config: The checked configuration (:class:`~rankaug.mosaic.config.MosaicConfig`);
            it, ``partners``, ``dataset``, ``seed``, ``keying`` and ``stream`` are fixed.
        partners: The partner sampler (:class:`~rankaug._multi.partners.PartnerSampler`).
        adapter: The sample adapter; setting another puts it to use.

    Example:
        >>> from rankaug.datasets import SyntheticDetection
        >>> mosaic = MosaicDataset(SyntheticDetection(16, image_size=64), seed=0, output_size=96)
        >>> sample = mosaic[7]
        >>> sample["image"].shape, sample["mosaic"]["indices"][0]
        ((96, 96, 3), 7)
        >>> len(sample["bboxes"]) == len(sample["labels"])
        True
    """

    _streaming = "StreamingMosaic"  # the class a stream gets (rankaug.stream.detect)
    parameter_objects: ClassVar[dict[str, type]] = {
        "layout": MosaicGrid, "targets": Targets, "partners": Partners,
    }  # fmt: skip
    """The parameter objects, by keyword (the deprecated flat keywords are their fields)."""
    fixed_settings = KeyedDataset.fixed_settings | {"config", "partners"}  # (refused)
    made_with = "_settings"  # set last: a subclass may have set config or partners before
    arguments_only = frozenset({"output_size", "layout", "targets", "affine", "color", "p",
                                "epochs", "close_mosaic", "record"})  # fmt: skip
    adapter = ReaderAdapter()
    _reader: TileReader  # made with the adapter (kept as _adapter)
    _adapter: SampleAdapter

    def __init__(
        self,
        dataset: Any,
        *,
        seed: int,
        output_size: int | tuple[int, int] = 640,
        layout: MosaicGrid | None = None,
        targets: Targets | None = None,
        partners: Partners | None = None,
        affine: MosaicAffine | None = None,
        color: HSVJitter | None = None,
        p: float | Callable[[int], float] = 1.0,
        epochs: int | None = None,
        close_mosaic: int = 0,
        record: str | None = "mosaic",
        keying: Keying = "stream",
        rank: int | None = None,
        stream: int | str | None = None,
        adapter: SampleAdapter | None = None,
        **legacy: Any,
    ) -> None:
        super().__init__(dataset, seed=seed, keying=keying, rank=rank, stream=stream)
        length = len(dataset)
        if length == 0:
            raise ValueError("dataset is empty: a mosaic needs at least one sample")
        owner = type(self).__name__
        layout = take(MosaicGrid, layout, legacy, owner)
        targets = take(Targets, targets, legacy, owner)
        partners = take(Partners, partners, legacy, owner)
        refuse_leftovers(legacy, owner)
        self.config = config = MosaicConfig.build(
            output_size=output_size,
            layout=layout,
            targets=targets.resolve(adapter, dataset),
            p=p,
            epochs=epochs,
            close_mosaic=close_mosaic,
            record=record,
            affine=affine,
            color=color,
        )
        self.partners = partners.sampler(length, len(config.cells) - 1)
        self.adapter = adapter  # checked, and the tiles' reader made with it
        self._ranked = ranked(self)  # a "sample_rank" wrapper inside: records hold the rank
        self._flip_warning = unindexed_flip(config)  # warned once, then None
        self._settings = settings_text({  # the values as checked: 64 reads as (64, 64)
            "wrapper": owner, **dataset_settings(dataset), "output_size": config.output_size,
            "layout": replace(config.layout, fill=config.fill),  # the fill in effect
            "targets": config.targets, "p": config.p,
            "epochs": config.epochs, "close_mosaic": config.close_mosaic,
            "affine": config.affine, "color": config.color, "partners": self.partners,
        })  # fmt: skip

    def make_reader(self, adapter: SampleAdapter) -> TileReader:
        """The tiles' reader, with ``adapter`` (made again when the adapter is set)."""
        return TileReader(self.config, adapter)

    def probability(self, epoch: int) -> float:
        """The probability that a sample of ``epoch`` is a mosaic.

        ``p`` (or ``p(epoch)``), and 0 in the last ``close_mosaic`` of ``epochs``.

        Args:
            epoch: The epoch.

        Returns:
            The probability.

        Raises:
            TypeError: If a callable ``p`` returns something other than a number.
            ValueError: If it returns a number outside ``[0, 1]``.
        """
        return probability(self.config, epoch)

    def augment(self, context: SampleContext, keyed: KeyedRandom) -> T_co:
        """Draw the mosaic's plan from the key, then build it."""
        rng = keyed.generator
        config = self.config
        # the record's start: its text only where a record is attached (a replay makes its own)
        state = "" if config.record is None else generator_text(rng)
        with context.guard("mosaic"):
            plan = draw_plan(config, self.partners, context.index, rng, context.epoch)
        return self._build(context, plan, state)

    def replay(self, record: Mapping[str, Any], index: int | None = None) -> T_co:
        """Rebuild one output from its :class:`MosaicRecord`, bit for bit.

        The samples are loaded again: wrappers inside keyed ``"sample_rank"`` with the
        record's rank, pinned for them; one keyed ``"stream"`` draws on (a
        :class:`~rankaug.RankaugWarning` says so). What the replay draws is checked
        against the record (:mod:`rankaug._multi.replay`).

        Args:
            record: The record of an earlier output.
            index: Its index, which must be the record's main index; ``None`` takes it.

        Returns:
            The same sample as when the record was made.

        Raises:
            TypeError: If ``record`` is not a record or a field has the wrong type.
            ValueError: If a field is missing or wrong (an index out of range, say),
                ``index`` is not the record's, what the replay draws differs from the
                record (naming the field), or the record's ``settings`` differ from this
                mosaic's (the message names each setting that differs: see
                :mod:`rankaug._multi.settings`).

        A record without ``settings`` (made before records held them) is replayed with a
        :class:`~rankaug.RankaugWarning` that it cannot be checked.

        >>> from rankaug.datasets import SyntheticDetection
        >>> mosaic = MosaicDataset(SyntheticDetection(8, image_size=48), seed=0, output_size=64)
        >>> first, second = mosaic[3], mosaic[3]  # stream keying: the stream moves on
        >>> again = mosaic.replay(second["mosaic"])
        >>> bool((again["image"] == second["image"]).all())
        True
        """
        replay = read_record(record, index, len(self.dataset))
        check_settings(record, self._settings, type(self).__name__)
        rank = replay_rank(self, replay)
        rng = replay.generator
        state = generator_text(rng)
        context = SampleContext(replay.main, rank=rank, worker_id=0, epoch=replay.epoch)
        with pinning_rank(rank):
            with context.guard("mosaic"):
                plan = draw_plan(self.config, self.partners, replay.main, rng, replay.epoch)
            return self._build(context, plan, state, record)

    def _build(
        self,
        context: SampleContext,
        plan: Plan,
        state: str,
        replayed: Mapping[str, Any] | None = None,
    ) -> T_co:
        config, reader = self.config, self._reader
        # read: the main sample to rebuild, the partners only to read
        used = plan.indices if plan.applied else plan.indices[:1]
        load, samples = self.load, []  # (a loop, not a comprehension: each is a function)
        for i in used:
            samples.append(load(i, context))
        data, main_state, views = reader.unpack(context, used, samples)
        reader.check_fill(used[0], data)  # the configuration against the data
        with context.guard("mosaic"):
            tiles = reader.tiles(used, views, samples)
            # layout (geometry only), targets, paint (pixels)
            out, record = make_output(config, plan, tiles, data)
            # repack: the main sample's shape, and the record
            record["epoch"] = context.epoch
            if self._ranked:
                record["rank"] = context.rank
            record["state"] = state
            record["settings"] = self._settings
            sample = (adapter := self._adapter).repack(out, main_state)  # (no descriptor)
            if config.record is not None:
                sample = attach(adapter, sample, config.record, record)
        if replayed is not None:  # a replay: its draws against the record's
            check_replayed(replayed, record, type(self).__name__)
        main_points = tiles[0].keypoints  # the main sample's: the output has keypoints
        if self._flip_warning is not None and main_points is not None and len(main_points):
            # (outside the guard: an error filter raises it as it is)
            warnings.warn(self._flip_warning, RankaugWarning, stacklevel=4)
            self._flip_warning = None
        result: T_co = sample
        return result
