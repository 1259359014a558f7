"""``--keys`` and ``--adapter``: reading samples of another layout in ``show`` and ``audit``.

The sheet reads a sample's image, boxes and labels through a
:class:`rankaug.types.SampleAdapter` (``unpack(sample, targets) -> (data, state)``). The
default handles albumentations-style dicts (``image``, ``bboxes``, ``labels``) and
``(image, target)`` pairs; for anything else the CLI takes one of:

* ``--keys image=img,bboxes=bboxes,labels=cls``: a dict sample whose keys have other
  names (ultralytics' ``img``/``cls``/``bboxes``, for instance), or whose targets are
  nested (Hugging Face: ``image=image,bboxes=objects.bbox,labels=objects.category``).
  Each entry is ``NAME=PATH``: rankaug's name, then the sample's key or dotted path; it
  builds a :class:`rankaug.adapters.KeyMap`, and a path that matches nothing in a sample
  is an error naming the sample's keys. ``image`` is required; images may be numpy
  ``HxWxC`` arrays, PIL images or ``CHW`` tensors, as everywhere in rankaug. Give the
  boxes' format with ``--box-format`` (ultralytics: ``yolo``, Hugging Face: ``coco``).
* ``--adapter module:factory``: a function (or class) called with no arguments in every
  rank, returning a :class:`rankaug.types.SampleAdapter`; the attribute may also be an
  adapter object. It is asked for the targets ``image``, ``bboxes`` and ``labels``
  (``show``) or every target rankaug knows (``audit``); its ``image`` must be a numpy
  array.
"""

from __future__ import annotations

import difflib

from rankaug.adapters import KeyMap
from rankaug.cli.target import TargetError, load_factory, where
from rankaug.samples import DEFAULT_TARGETS, SampleAdapter, check_adapter

__all__ = [
    "AUDIT_TARGETS",
    "SHEET_TARGETS",
    "KeyMap",
    "build_adapter",
    "parse_keys",
    "reader_text",
]

#: What the contact sheet asks an adapter for.
SHEET_TARGETS: tuple[str, ...] = ("image", "bboxes", "labels")
#: What the audit fingerprints when an adapter is given.
AUDIT_TARGETS: frozenset[str] = DEFAULT_TARGETS | {"labels"}


def parse_keys(text: str) -> dict[str, str]:
    """Parse ``--keys``: ``"image=img,bboxes=bboxes,labels=cls"`` -> ``{name: key}``.

    Args:
        text: Comma-separated ``NAME=KEY`` entries; ``NAME`` is one of the names the CLI
            reads (:data:`AUDIT_TARGETS`, each at most once, ``image`` required), ``KEY``
            the sample's key or dotted path (``objects.bbox``).

    Returns:
        The map from rankaug's names to the sample's keys.

    Raises:
        ValueError: If an entry is malformed, a name is unknown or repeats, or
            ``image`` is missing.

    >>> parse_keys("image=img,bboxes=bboxes,labels=cls")
    {'image': 'img', 'bboxes': 'bboxes', 'labels': 'cls'}
    >>> parse_keys("image=image,bboxes=objects.bbox")
    {'image': 'image', 'bboxes': 'objects.bbox'}
    >>> parse_keys("bboxes=boxes")
    Traceback (most recent call last):
    ...
    ValueError: --keys must name the image (image=KEY), got 'bboxes=boxes'
    >>> parse_keys("image=img,boxes=bboxes")
    Traceback (most recent call last):
    ...
    ValueError: --keys names 'boxes', which is not one of bboxes, image, keypoints, labels,
    mask, masks (did you mean 'bboxes'?), got 'image=img,boxes=bboxes'
    """
    found: dict[str, str] = {}
    for entry in text.split(","):
        name, equals, key = (part.strip() for part in entry.partition("="))
        if not equals or not name.isidentifier() or name == "box_format" or not key:
            raise ValueError(
                f"--keys must be NAME=KEY entries separated by commas (for example "
                f"image=img,bboxes=bboxes,labels=cls), got {text!r}"
            )
        if name not in AUDIT_TARGETS:
            close = difflib.get_close_matches(name, AUDIT_TARGETS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(
                f"--keys names {name!r}, which is not one of "
                f"{', '.join(sorted(AUDIT_TARGETS))}{hint}, got {text!r}"
            )
        if name in found:
            raise ValueError(f"--keys names {name!r} twice, got {text!r}")
        found[name] = key
    if "image" not in found:
        raise ValueError(f"--keys must name the image (image=KEY), got {text!r}")
    return found


def reader_text(adapter: str | None, keys: str | None) -> str:
    """How samples are read, for messages: ``"--keys ..."``, ``"--adapter ..."`` or ``""``.

    >>> reader_text(None, "image=img"), reader_text("pkg:make", None), reader_text(None, None)
    ('--keys image=img', '--adapter pkg:make', '')
    """
    if keys is not None:
        return f"--keys {keys}"
    return "" if adapter is None else f"--adapter {adapter}"


def build_adapter(adapter: str | None, keys: str | None) -> SampleAdapter | None:
    """The adapter ``--adapter`` or ``--keys`` ask for, or ``None`` for the default.

    Args:
        adapter: The ``--adapter`` value (``module:factory``), or ``None``.
        keys: The ``--keys`` value, or ``None``.

    Returns:
        The adapter, or ``None`` when neither option is given.

    Raises:
        ValueError: If both are given or ``keys`` is malformed.
        rankaug.cli.target.TargetError: If ``adapter`` cannot be imported or called,
            or does not give an adapter.

    >>> build_adapter(None, "image=img,bboxes=objects.bbox")
    KeyMap(image='img', bboxes='objects.bbox')
    >>> build_adapter(None, None) is None
    True
    """
    if adapter is not None and keys is not None:
        raise ValueError("give --adapter or --keys, not both")
    if keys is not None:
        return KeyMap(**parse_keys(keys))  # type: ignore[arg-type]  # no box_format in it
    if adapter is None:
        return None
    found = load_factory(adapter, what="--adapter")
    is_adapter = not isinstance(found, type) and callable(getattr(found, "unpack", None))
    if callable(found) and not is_adapter:
        try:
            found = found()
        except Exception as error:
            raise TargetError(
                f"--adapter {adapter!r}: calling it raised {type(error).__name__}: "
                f"{error}{where(error)}"
            ) from error
    if found is None:
        raise TargetError(f"--adapter {adapter!r} gave None, not an adapter")
    try:
        return check_adapter(found)
    except TypeError as error:
        raise TargetError(f"--adapter {adapter!r}: {error}") from None
