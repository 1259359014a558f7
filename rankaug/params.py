"""Parameter objects the multi-sample wrappers share, each checked once when made.

:class:`Targets` says how a sample's boxes are read and filtered, :class:`Partners`
where partners are drawn from. :class:`~rankaug.MosaicDataset`, and the mix wrappers
(:class:`~rankaug.MixUpDataset`, :class:`~rankaug.CutMixDataset`,
:class:`~rankaug.CopyPasteDataset`) take them as ``targets=`` and ``partners=``; a
wrapper refuses a field it does not use when it is set away from its default.

The old flat keywords (``box_format=``, ``min_area=``, ``pool=``, ...) are still
accepted by the wrappers as deprecated aliases of these fields, with a
``DeprecationWarning`` naming the new spelling (:func:`take`); they go before 1.0.

>>> Targets(box_format="coco", min_area=4).min_area
4.0
>>> Targets(min_visibility=2)
Traceback (most recent call last):
...
ValueError: min_visibility must be a finite number >= 0.0 and <= 1.0, got 2
"""

from __future__ import annotations

import dataclasses
import sys
import warnings
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import Any, Final, TypeVar, cast

import numpy as np

from rankaug import checks, nesting
from rankaug._multi.partners import PartnerSampler
from rankaug.boxes import BOX_FORMATS, BoxFormat, check_box_format, check_filter_args
from rankaug.polygons import POLYGONS
from rankaug.samples import DEFAULT_TARGETS

__all__ = [
    "Partners",
    "Targets",
    "check_bbox_params_format",
    "check_declared_format",
    "pop_fields",
    "refuse_leftovers",
    "refuse_unused",
    "take",
]

P = TypeVar("P")
KNOWN: Final = DEFAULT_TARGETS | {POLYGONS}
"""The target keys an adapter hands out besides the label and keypoint fields."""
FILTERS: Final = ("min_area", "min_visibility", "min_width", "min_height")


@dataclass(frozen=True, slots=True)
class Targets:
    """How a wrapper reads, keeps aligned and filters a sample's boxes.

    Args:
        box_format: The samples' box format (also the output's): ``"pascal_voc"``,
            ``"coco"``, ``"yolo"`` or ``"albumentations"``. ``None``: the adapter's
            ``box_format`` when it has one (``rankaug.adapters.HuggingFace()`` reads
            ``"coco"``), else the dataset's (``YoloFolder(root, box_format="yolo")``
            gives ``"yolo"`` boxes), else ``"pascal_voc"``. A format other than the one
            the dataset declares is refused by the wrapper.
        label_fields: Per-box fields kept aligned with the boxes.
        keypoint_fields: Per-keypoint fields kept aligned with the keypoints.
        min_area: Drop boxes smaller than this (output pixels).
        min_visibility: Drop boxes showing less than this fraction of their full size.
        min_width: Drop boxes narrower than this.
        min_height: Drop boxes lower than this.
        clip: Clip boxes that reach outside their image (``False``: raise an error).

    Raises:
        TypeError: If a field has the wrong type.
        ValueError: If a field has a wrong value.
    """

    box_format: BoxFormat | None = None
    label_fields: Sequence[str] = ("labels",)
    keypoint_fields: Sequence[str] = ()
    min_area: float = 0.0
    min_visibility: float = 0.0
    min_width: float = 0.0
    min_height: float = 0.0
    clip: bool = True

    def __post_init__(self) -> None:
        if self.box_format is not None:
            _set(self, "box_format", check_box_format(self.box_format))
        labels = checks.names(self.label_fields, "label_fields", forbidden=KNOWN | {"boxes"})
        _set(self, "label_fields", labels)
        points = checks.names(
            self.keypoint_fields, "keypoint_fields", forbidden=KNOWN | {"boxes", *labels}
        )
        _set(self, "keypoint_fields", points)
        values = check_filter_args(**{name: getattr(self, name) for name in FILTERS})
        for name, value in zip(FILTERS, values, strict=True):
            _set(self, name, value)
        _set(self, "clip", checks.boolean(self.clip, "clip"))

    @property
    def keys(self) -> frozenset[str]:
        """The keys an adapter hands out: the known targets, label and keypoint fields."""
        return KNOWN | {*self.label_fields, *self.keypoint_fields}

    @property
    def filters(self) -> bool:
        """Whether any box filter is set."""
        return any(getattr(self, name) for name in FILTERS)

    def resolve(self, adapter: object, dataset: object = None) -> Targets:
        """These targets with ``box_format`` set: given, else the adapter's, else the dataset's.

        The dataset's is the format rankaug's readers declare; without one, VOC.

        Args:
            adapter: The wrapper's adapter (``None``: the default one).
            dataset: The wrapped dataset; its ``box_format`` attribute, when it names a
                format (``YoloFolder``, ``CocoDetection``, ``SyntheticDetection``), is
                the format its boxes are in, also read through the datasets that hold
                it (``CachedDataset``, ``Subset``, ``ConcatDataset``: the nearest that
                declares one). Defaults to ``None`` (not known).

        Raises:
            ValueError: If the format given, or the adapter's, is not the one the
                dataset declares: its boxes would be read in the wrong format; or if
                datasets side by side inside it (a ``ConcatDataset``'s) declare
                different ones.

        >>> from rankaug.datasets import SyntheticDetection
        >>> Targets().resolve(None).box_format
        'pascal_voc'
        >>> Targets().resolve(None, SyntheticDetection(1, box_format="coco")).box_format
        'coco'
        >>> Targets(box_format="coco").resolve(None, SyntheticDetection(1))
        Traceback (most recent call last):
        ...
        ValueError: targets.box_format='coco', but the dataset (SyntheticDetection) gives ...
        """
        chosen = self.box_format or getattr(adapter, "box_format", None)
        said = (
            f"targets.box_format={chosen!r}"
            if self.box_format is not None
            else f"adapter={adapter!r} reads {chosen!r} boxes"
        )
        declared = check_declared_format(
            chosen, dataset, said, "targets=rankaug.Targets(box_format"
        )
        if self.box_format is not None:
            return self
        fmt = chosen or declared or "pascal_voc"
        return dataclasses.replace(self, box_format=fmt)


def check_declared_format(
    box_format: str | None, dataset: object, said: str, fix: str
) -> BoxFormat | None:
    """Refuse a ``box_format`` other than the one ``dataset`` declares; return that one.

    Args:
        box_format: The format the boxes will be read in (``None``: not chosen).
        dataset: The wrapped dataset (see :meth:`Targets.resolve`).
        said: Where ``box_format`` was given, for the message.
        fix: The argument that would read the dataset's format, up to its ``=``
            (``"A.BboxParams(format"``).

    Returns:
        The format the dataset declares, or ``None``.

    Raises:
        ValueError: If the dataset declares another format, or datasets side by side
            inside it declare different ones.

    >>> from rankaug.datasets import SyntheticDetection
    >>> check_declared_format("coco", SyntheticDetection(1), "format='coco'", "format")
    Traceback (most recent call last):
    ...
    ValueError: format='coco', but the dataset (SyntheticDetection) gives 'pascal_voc' ...
    """
    declared = _declared_format(dataset)
    if box_format is not None and declared is not None and box_format != declared:
        raise ValueError(
            f"{said}, but the dataset ({type(dataset).__name__}) gives {declared!r} "
            f"boxes (its box_format): give {fix}={declared!r}, ...) or make the dataset "
            f"with box_format={box_format!r}"
        )
    return declared


def check_bbox_params_format(given: str | None, dataset: object) -> None:
    """Refuse an albumentations pipeline's ``A.BboxParams`` format other than ``dataset``'s.

    ``given`` is that format, ``None`` for a transform that reads no boxes (no check:
    datasets inside that differ are then no matter). What the wrappers check when their
    ``transform`` is set.

    Raises:
        ValueError: See :func:`check_declared_format`.
    """
    if given is not None:
        said = f"the transform's A.BboxParams format is {given!r}"
        check_declared_format(given, dataset, said, "A.BboxParams(format")


def _declared_format(dataset: object, depth: int = 16) -> BoxFormat | None:
    """The box format ``dataset`` declares, or the nearest datasets inside it declare.

    ``CachedDataset(YoloFolder(box_format="yolo"))`` or a ``Subset`` of it gives
    ``"yolo"`` boxes as the folder does; a dataset that declares its own format is
    taken at its word, whatever is inside it.

    Raises:
        ValueError: If datasets side by side declare different formats.
    """
    own = getattr(dataset, "box_format", None)
    if isinstance(own, str) and own in BOX_FORMATS:
        return own
    if depth == 0:
        return None
    found = {
        fmt for inner in nesting.children(dataset) if (fmt := _declared_format(inner, depth - 1))
    }
    if len(found) > 1:
        raise ValueError(
            f"the datasets inside {type(dataset).__name__} give boxes in different formats "
            f"{sorted(found)}: one wrapper reads them in one box_format; make them alike"
        )
    return found.pop() if found else None


@dataclass(frozen=True, slots=True)
class Partners:
    """Where a wrapper draws its partners from (the rules: :mod:`rankaug._multi.partners`).

    Args:
        pool: The distinct indices partners are drawn from (for example this rank's
            shard); ``None`` means the whole dataset.
        weights: Sampling weights, one per pool entry (or per dataset item without a
            pool); ``None`` draws uniformly. An entry of weight 0 is never drawn: weights
            > 0 on one item act as a pool of that item.
        replace: Draw a sample's partners with replacement (a mosaic's; a mix has one).

    The pool and the weights are kept as tuples of Python numbers (a list, a range or a
    1-D numpy array is converted), so a ``Partners`` compares, hashes and stays as it
    was made whatever becomes of the caller's sequence.

    Raises:
        TypeError: If ``pool`` is not a sequence of integers, ``weights`` not one of real
            numbers, or ``replace`` not a bool (the values are checked against the
            dataset by the wrapper).
        ValueError: If ``pool`` or ``weights`` is an array of two dimensions or more.

    >>> Partners(pool=[0, 2], weights=[1.0, 3.0]).pool
    (0, 2)
    >>> import numpy as np
    >>> Partners(pool=np.arange(3), weights=np.ones(3)) == Partners(pool=range(3), weights=[1] * 3)
    True
    """

    pool: Sequence[int] | np.ndarray | None = None
    weights: Sequence[float] | np.ndarray | None = None
    replace: bool = True

    def __post_init__(self) -> None:
        if self.pool is not None:  # frozen: a tuple of Python ints, the caller's not shared
            _set(self, "pool", checks.index_tuple(self.pool, "pool"))
        if self.weights is not None:
            _set(self, "weights", checks.weight_tuple(self.weights, "weights"))
        _set(self, "replace", checks.boolean(self.replace, "replace"))

    def sampler(self, length: int, count: int) -> PartnerSampler:
        """The sampler drawing ``count`` partners per sample from a dataset of ``length``.

        Raises:
            TypeError: If the pool or the weights have the wrong type.
            ValueError: If they do not fit the dataset (see :class:`PartnerSampler`).
        """
        return PartnerSampler(
            length, count, pool=self.pool, weights=self.weights, replace=self.replace
        )


def take(kind: type[P], given: P | None, legacy: dict[str, Any], owner: str) -> P:
    """``given``, or a ``kind`` made from the deprecated flat keywords in ``legacy``.

    The keywords that are fields of ``kind`` are removed from ``legacy``, with a
    ``DeprecationWarning`` that names the new spelling, at the caller's line (the first
    frame outside rankaug).

    Raises:
        TypeError: If both ``given`` and such keywords are passed.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     take(Partners, None, {"pool": [1, 2]}, "MixUpDataset")
    Partners(pool=(1, 2), weights=None, replace=True)
    >>> print(caught[0].message)
    MixUpDataset(pool=...) is deprecated; use partners=rankaug.Partners(pool=...)
    """
    attribute = "layout" if kind.__name__ == "MosaicGrid" else kind.__name__.lower()
    values = pop_fields(kind, legacy)
    if not values:
        if given is None:
            return kind()
        return cast(P, checks.instance(given, attribute, kind, what=f"a rankaug.{kind.__name__}"))
    if given is not None:
        raise TypeError(
            f"{owner} got {attribute}= and {', '.join(f'{n}=' for n in values)}: pass "
            f"the latter inside rankaug.{kind.__name__}(...)"
        )
    spelled = ", ".join(f"{name}=..." for name in values)
    warnings.warn(
        f"{owner}({spelled}) is deprecated; use {attribute}=rankaug.{kind.__name__}({spelled})",
        DeprecationWarning,
        stacklevel=_outside(),
    )
    return kind(**values)


def pop_fields(kind: type[object], options: dict[str, Any]) -> dict[str, Any]:
    """The entries of ``options`` that are fields of the dataclass ``kind``, removed from it.

    >>> options = {"pool": [1], "seed": 0}
    >>> pop_fields(Partners, options), options
    ({'pool': [1]}, {'seed': 0})
    """
    names = [field.name for field in dataclasses.fields(cast(Any, kind))]
    return {name: options.pop(name) for name in names if name in options}


def refuse_unused(value: Targets | Partners, used: Collection[str], owner: str) -> None:
    """Refuse a field ``owner`` does not use when it is set away from its default.

    Raises:
        ValueError: Naming the field, its value and the wrapper.

    >>> refuse_unused(Targets(min_area=4.0), ("box_format",), "MixUpDataset")
    Traceback (most recent call last):
    ...
    ValueError: MixUpDataset does not use targets.min_area, got 4.0 (leave it at 0.0)
    """
    attribute = type(value).__name__.lower()
    for field in dataclasses.fields(value):
        current = getattr(value, field.name)
        if field.name not in used and current != field.default:
            raise ValueError(
                f"{owner} does not use {attribute}.{field.name}, got {current!r} "
                f"(leave it at {field.default!r})"
            )


def refuse_leftovers(legacy: dict[str, Any], owner: str) -> None:
    """Refuse keywords left after :func:`take` (what Python would for a bad keyword).

    Raises:
        TypeError: Naming the first unexpected keyword.
    """
    if legacy:
        raise TypeError(f"{owner}() got an unexpected keyword argument {next(iter(legacy))!r}")


def _outside() -> int:
    """The ``stacklevel`` of :func:`take`'s caller's caller outside this package."""
    package = __file__.rsplit("params.py", 1)[0]
    frame: FrameType | None = sys._getframe(2)
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def _set(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)
