"""``PairDataset``: the base of the wrappers that combine each sample with one partner.

MixUp, CutMix and CopyPaste make one sample in the same five steps; only the third is
their own:

1. **plan** (:meth:`PairDataset.plan`): every draw from the key, in a specified order
   (part of the specification: a change reorders everyone's augmentations): one block
   ``u = rng.random(2 + k)``, where ``u[0] < p`` (``p`` of the epoch) decides whether the
   sample is mixed, ``u[1]`` draws the partner
   (:meth:`~rankaug._multi.partners.PartnerSampler.draw_apart`: never the main index itself,
   from ``pool``, by ``weights``; a weighted draw that hits the main index draws again;
   a sample with no other candidate, say a pool holding only its index, is not mixed),
   ``u[2:]`` are the wrapper's ``k`` uniforms; then the wrapper's other draws (a Beta
   variate), in :meth:`PairDataset.draw`;
2. **read** (:mod:`~rankaug._multi.pairs`): the main sample through the adapter (its shape
   is rebuilt at the end), the partner as a read-only view, both checked; a sample that
   is not mixed loads no partner;
3. **combine**: the wrapper's :meth:`PairDataset.combine` makes the output's image and
   targets (:class:`~rankaug._multi.pairs.Part`) and says how much of the image is the main
   sample's, or that it combined nothing: the sample is then given and recorded as one
   that is not mixed (the replay draws the same plan and combines nothing again);
4. **classes** (:mod:`~rankaug.mix.classes`): with ``num_classes=``, the soft target;
5. **repack**: the adapter gives the output the main sample's shape, and the record
   (indices, main first, the wrapper's details, the epoch and the Generator's state) is
   attached under ``record``; :meth:`PairDataset.replay` rebuilds a sample from it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, TypeVar

import numpy as np

from rankaug._multi.adapter import ReaderAdapter
from rankaug._multi.pairs import PairReader, Part
from rankaug._multi.replay import check_replayed, generator_text, ranked, read_replay, replay_rank
from rankaug._multi.settings import check_settings, dataset_settings, settings_text
from rankaug.context import SampleContext, pinning_rank
from rankaug.keyed import KeyedDataset
from rankaug.keys import KeyedRandom, Keying
from rankaug.mix.classes import ADVICE, class_target
from rankaug.mix.config import PairConfig, PartnerFit
from rankaug.mix.plan import Combined, PairPlan
from rankaug.params import Partners, Targets, refuse_leftovers, refuse_unused, take
from rankaug.samples import SampleAdapter, attach, with_class_target

__all__ = ["Combined", "PairDataset", "PairPlan"]

T_co = TypeVar("T_co", covariant=True)


class PairDataset(KeyedDataset[T_co]):
    """The base of rankaug's two-sample wrappers (see the module docstring).

    A subclass sets :attr:`kind` (its name in records and messages) and
    :attr:`uniforms` (its ``k``), and implements :meth:`draw`, :meth:`combine` and
    :meth:`unmixed`; it may override :meth:`needs_partner`, :meth:`check` and :meth:`alone`.

    Args:
        dataset: A map-style dataset.
        seed: The run's base seed, ``0 <= seed < 2**64``.
        p: The probability that a sample is mixed, or a function of the epoch returning
            it (picklable, for spawned workers).
        targets: The box format, label and keypoint fields, ``clip`` (boxes reaching
            outside the image are clipped in every output, mixed or not; ``False``
            refuses them) and, for CutMix, the box filters (:class:`~rankaug.Targets`;
            on every output, mixed or not);
            ``None``: ``Targets()``.
        partners: Where partners come from (:class:`~rankaug.Partners`: ``pool`` and
            ``weights``; one partner, so no ``replace``); ``None``: the whole dataset.
        num_classes: For classification samples, the number of classes: every
            output's class becomes a soft vector (see :mod:`rankaug.mix.classes`).
        class_field: The class's key in dict samples and dict targets (an
            ``(image, class)`` pair's class is its target).
        partner_fit: ``"error"`` refuses a partner whose image has another size than
            the main one; ``"letterbox"`` scales it to fit and centres it.
        fill: The letterbox's fill, a number or one per channel, in the images' range;
            ``None`` (the default): 114, YOLO's grey, for integer images, while float
            images (whose range rankaug does not assume) need one given.
        fill_mask: The letterboxed semantic mask's fill.
        record: The key the record goes under in dict samples (and dict targets);
            ``None`` records nothing (each wrapper's default is its :attr:`kind`).
        keying: ``"stream"``, ``"sample"`` or ``"sample_rank"`` (:mod:`rankaug.keyed`).
        rank: The rank; ``None`` resolves it.
        stream: The key's stream word or name; ``None`` derives one.
        adapter: Converts samples; ``None`` uses :class:`~rankaug.samples.DefaultAdapter`.
        **legacy: The deprecated flat keywords of :class:`~rankaug.Targets` and
            :class:`~rankaug.Partners` (``box_format=``, ``pool=``, ...).

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If an argument has a wrong value, or the dataset is empty or holds
            a single sample (which has no partner but itself).

    Attributes:
        config: The checked shared configuration (:class:`~rankaug.mix.config.PairConfig`),
            fixed when the wrapper is made (as are ``partners``, ``dataset``, ``seed``,
            ``keying``, ``stream`` and the wrapper's own settings, ``alpha`` say:
            assigning one raises an ``AttributeError``).
        partners: The partner sampler (:class:`~rankaug._multi.partners.PartnerSampler`).
        adapter: The sample adapter; setting another puts it to use.
    """

    kind: ClassVar[str] = "mix"
    """The wrapper's name in records, stages and messages."""
    uniforms: ClassVar[int] = 0
    """How many uniforms of the block are the wrapper's."""
    polygons: ClassVar[bool] = True
    """Whether the wrapper maps instance polygons (``segments``); if not, it refuses them."""

    parameter_objects: ClassVar[dict[str, type]] = {"targets": Targets, "partners": Partners}
    """The parameter objects, by keyword (the deprecated flat keywords are their fields)."""
    fixed_settings = KeyedDataset.fixed_settings | {"config", "partners"}
    """The attributes fixed when the wrapper is made (assigning one is refused)."""
    made_with = "_settings"  # set last: a subclass may have set config or partners before
    arguments_only = frozenset({"targets", "num_classes", "class_field", "p", "partner_fit",
                                "fill", "fill_mask", "record"})  # fmt: skip
    adapter = ReaderAdapter()
    _adapter: SampleAdapter  # (what adapter gives)
    _reader: PairReader  # made with the adapter
    target_fields: ClassVar[tuple[str, ...]] = (
        "box_format", "label_fields", "keypoint_fields", "clip",
    )  # fmt: skip
    """The fields of :class:`~rankaug.Targets` the wrapper uses (it refuses the others set)."""
    settings_fields: ClassVar[tuple[str, ...]] = ()
    """The wrapper's own settings (attributes set before ``__init__``), in its records."""
    class_advice: ClassVar[str] = ADVICE
    """What a class refused without ``num_classes=`` is told (its arguments, named)."""
    mixes_classes: ClassVar[bool] = True
    """Whether the wrapper writes a class (``False``: ``class_field`` may name a target)."""

    def __init__(
        self,
        dataset: Any,
        *,
        seed: int,
        p: float | Callable[[int], float] = 1.0,
        targets: Targets | None = None,
        partners: Partners | None = None,
        num_classes: int | None = None,
        class_field: str = "label",
        partner_fit: PartnerFit = "error",
        fill: float | Sequence[float] | None = None,
        fill_mask: int = 0,
        record: str | None = "mix",
        keying: Keying = "stream",
        rank: int | None = None,
        stream: int | str | None = None,
        adapter: SampleAdapter | None = None,
        **legacy: Any,
    ) -> None:
        super().__init__(dataset, seed=seed, keying=keying, rank=rank, stream=stream)
        length = len(dataset)
        title = type(self).__name__.removesuffix("Dataset")
        if length == 0:
            raise ValueError(f"dataset is empty: {title} needs at least one sample")
        if length == 1 and self.needs_partner():
            raise ValueError(
                f"dataset has 1 sample: {title} needs a partner other than the sample "
                "itself; give it at least two samples"
            )
        owner = type(self).__name__
        targets = take(Targets, targets, legacy, owner)
        partners = take(Partners, partners, legacy, owner)
        refuse_leftovers(legacy, owner)
        refuse_unused(targets, self.target_fields, owner)
        refuse_unused(partners, ("pool", "weights"), owner)
        self.config = PairConfig.build(
            targets=targets.resolve(adapter, dataset),
            num_classes=num_classes,
            class_field=class_field,
            p=p,
            partner_fit=partner_fit,
            fill=fill,
            fill_mask=fill_mask,
            record=record,
            mixes_classes=self.mixes_classes,
        )
        self.partners = partners.sampler(length, 1)
        self.adapter = adapter  # checked, and the pair's reader made with it
        self._ranked = ranked(self)  # a "sample_rank" wrapper inside: records hold the rank
        config = self.config  # the values as checked: p=1 reads as 1.0
        self._settings = settings_text({
            "wrapper": owner, **dataset_settings(dataset), "targets": config.targets,
            "p": config.p, "partner_fit": config.partner_fit, "fill": config.fill,
            "fill_mask": config.fill_mask, "num_classes": config.num_classes,
            "class_field": config.class_field, "partners": self.partners,
            **{name: getattr(self, name) for name in self.settings_fields},
        })  # fmt: skip

    def make_reader(self, adapter: SampleAdapter) -> PairReader:
        """The pair's reader, with ``adapter`` (made again when the adapter is set)."""
        title = type(self).__name__.removesuffix("Dataset")
        return PairReader(self.config, adapter, title, polygons=self.polygons)

    # ------------------------------------------------------------ the subclass' part
    def draw(self, rng: np.random.Generator) -> tuple[float, ...]:
        """The wrapper's draws after the block (and after the partner's redraws).

        Args:
            rng: The sample's keyed Generator.

        Returns:
            The draws (none by default).
        """
        return ()

    def needs_partner(self) -> bool:
        """Whether a mixed sample needs a partner (CopyPaste's ``"flip"`` does not).

        Returns:
            ``True`` by default.
        """
        return True

    def check(self, main: Part) -> None:
        """Check what the wrapper needs of every main sample, mixed or not (nothing here).

        Args:
            main: The main sample.
        """

    def combine(
        self, main: Part, partner: Part, plan: PairPlan, rng: np.random.Generator
    ) -> Combined:
        """Make a mixed sample's image and targets from its two parts.

        Args:
            main: The main sample.
            partner: The partner (the main sample itself when :meth:`needs_partner`
                is ``False``), of the main sample's size.
            plan: The sample's plan.
            rng: The sample's keyed Generator, for draws that depend on the data.

        Returns:
            The output, the main sample's share and the record's details;
            ``applied=False`` when it combined nothing.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement combine()")

    def alone(self, main: Part) -> Part:
        """The output's image and targets for a sample that is not mixed (``main`` here)."""
        return main

    def unmixed(self, main: Part) -> dict[str, Any]:
        """The record's details of a sample that is not mixed (none by default)."""
        return {}

    # ------------------------------------------------------------------- the path
    def probability(self, epoch: int) -> float:
        """The probability that a sample of ``epoch`` is mixed: ``p`` or ``p(epoch)``.

        Args:
            epoch: The epoch.

        Returns:
            The probability.

        Raises:
            TypeError: If a callable ``p`` returns something other than a number.
            ValueError: If it returns a number outside ``[0, 1]``.
        """
        return self.config.probability(epoch)

    def plan(self, index: int, rng: np.random.Generator, epoch: int) -> PairPlan:
        """Draw one sample's plan (see the module docstring).

        Args:
            index: The main sample's index.
            rng: The sample's keyed Generator.
            epoch: The epoch (for ``p``).

        Returns:
            The plan.
        """
        config = self.config
        u = rng.random(2 + self.uniforms).tolist()
        p = config.p if config.constant_p else config.probability(epoch)
        if self.needs_partner():
            drawn = self.partners.draw_apart(index, u[1:2], rng)
            applied, partner = u[0] < p and drawn is not None, index if drawn is None else drawn[0]
        else:  # the sample is its own source: no partner to draw
            applied, partner = u[0] < p, index
        return PairPlan(applied, (index, partner), tuple(u[2:]), self.draw(rng))

    def augment(self, context: SampleContext, keyed: KeyedRandom) -> T_co:
        """Draw the plan from the key, then build the sample."""
        rng = keyed.generator
        state = generator_text(rng)
        with context.guard(self.kind):
            plan = self.plan(context.index, rng, context.epoch)
        return self._build(context, plan, state, rng)

    def replay(self, record: Mapping[str, Any], index: int | None = None) -> T_co:
        """Rebuild one output from its record, bit for bit.

        The samples are loaded again, so the output is the same when the dataset gives
        the same samples again: a plain dataset, or rankaug wrappers inside keyed per
        sample (``"sample"``, or ``"sample_rank"``: the record holds the rank, pinned
        for them); a stream-keyed wrapper inside draws on (a
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
                wrapper's (the message names each setting that differs: see
                :mod:`rankaug._multi.settings`). A record without them (made before
                records held them) is replayed with a :class:`~rankaug.RankaugWarning`
                that it cannot be checked.
        """
        replay = read_replay(
            record, index, len(self.dataset), kind=f"a {type(self).__name__} record"
        )
        check_settings(record, self._settings, type(self).__name__)
        rank = replay_rank(self, replay)
        rng = replay.generator
        state = generator_text(rng)
        context = SampleContext(replay.main, rank=rank, worker_id=0, epoch=replay.epoch)
        with pinning_rank(rank):
            with context.guard(self.kind):
                plan = self.plan(replay.main, rng, replay.epoch)
            return self._build(context, plan, state, rng, record)

    def _build(
        self,
        context: SampleContext,
        plan: PairPlan,
        state: str,
        rng: np.random.Generator,
        replayed: Mapping[str, Any] | None = None,
    ) -> T_co:
        config, reader = self.config, self._reader
        main_index = plan.indices[0]
        partner_index = plan.indices[1]
        mixed = plan.applied and partner_index != main_index
        assert not plan.applied or mixed or not self.needs_partner(), "a mix with itself"
        used = [main_index, partner_index] if mixed else [main_index]
        samples = [self.load(i, context) for i in used]
        data, main_state, views = reader.unpack(context, used, samples)
        with context.guard(self.kind):
            parts = reader.parts(used, views, samples)
            main = parts[0]
            self.check(main)
            combined = self.combine(main, parts[-1], plan, rng) if plan.applied else None
            applied = combined is not None and combined.applied
            if combined is not None and applied:
                out = reader.emit(combined.part, data.keys(), data.get("bboxes"))
                share, details = combined.share, combined.details
                partner = parts[-1]
            else:  # not mixed, or nothing combined: the main sample (clipped; CutMix filters)
                alone = self.alone(main)
                if alone is main:
                    out = reader.clip(main, data)
                else:
                    out = reader.emit(alone, data.keys(), data.get("bboxes"))
                share, partner = 1.0, main
                details = self.unmixed(main)
            adapter = self._adapter  # (the attribute: no descriptor call per sample)
            sample = adapter.repack(out, main_state)
            labels, indices = (main.label, partner.label), (main_index, partner.index)
            target = class_target(labels, indices, share, config.num_classes, self.class_advice)
            if target is not None:
                sample = with_class_target(adapter, sample, config.class_field, target)
            record = {
                "applied": applied,
                "indices": [main_index, partner_index] if applied else [main_index],
                **details,
                "epoch": context.epoch,
                **({"rank": context.rank} if self._ranked else {}),
                "state": state,
                "settings": self._settings,
            }
            if config.record is not None:
                sample = attach(adapter, sample, config.record, record)
        if replayed is not None:  # a replay: its draws against the record's
            check_replayed(replayed, record, type(self).__name__)
        result: T_co = sample
        return result
