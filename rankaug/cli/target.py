"""``TARGET``: a ``module:factory`` string naming a function that builds a dataset.

The CLI's ``audit`` and ``show`` take any map-style dataset this way, and ``audit`` also
an iterable one (an ``IterableDataset``, a webdataset pipeline, a Hugging Face
``IterableDataset``: :func:`rankaug.stream.is_stream`). The factory is
called with no arguments in every rank process (and the dataset it returns is pickled
into DataLoader workers), so it must be importable there: its module is looked up on
``sys.path``, with the current directory first, as ``python -m`` does. The attribute
may also be a dataset object itself rather than a function. ``audit`` also takes a
factory returning a batch transform (:mod:`rankaug.cli.batch_probe`), which
:func:`build_target` hands back unchecked.
"""

from __future__ import annotations

import difflib
import importlib
import os
import sys
import traceback
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from torch.utils.data import DataLoader, IterableDataset

from rankaug.stream.detect import is_stream

__all__ = [
    "TargetError",
    "build_dataset",
    "build_target",
    "check_dataset",
    "load_factory",
    "parse_target",
    "where",
]


class TargetError(ValueError):
    """A ``TARGET`` that cannot give a dataset the command takes; the message says why."""


# The transform libraries whose objects a TARGET may give for its dataset by mistake (an
# albumentations Compose even has __getitem__ and __len__: those of its transforms).
_TRANSFORMS = ("albumentations", "torchvision.transforms", "kornia", "ultralytics.data.augment")


def _transform_library(value: object) -> str:
    """The library of ``value`` if it is a transform of one of ``_TRANSFORMS``, else ``""``.

    >>> import albumentations as A
    >>> _transform_library(A.Compose([A.HorizontalFlip()])), _transform_library([1, 2])
    ('albumentations', '')
    """
    module = type(value).__module__
    if callable(value) and any(module == p or module.startswith(p + ".") for p in _TRANSFORMS):
        return module.partition(".")[0]
    return ""


def parse_target(text: str, *, what: str = "TARGET") -> tuple[str, str]:
    """Split ``"package.module:factory"`` into the module and the attribute path.

    Args:
        text: The TARGET argument; the attribute may be dotted (``mod:Class.build``).
        what: The option's name in messages.

    Returns:
        ``(module, attribute)``.

    Raises:
        TargetError: If ``text`` is not of the form ``module:attribute``.

    >>> parse_target("tests.cli_targets:plain")
    ('tests.cli_targets', 'plain')
    >>> parse_target("mydata")
    Traceback (most recent call last):
    ...
    rankaug.cli.target.TargetError: TARGET 'mydata' must be 'module:factory' (for example
    'mypkg.data:build_train'), a module and a function in it separated by ':'
    """
    module, colon, attribute = text.partition(":")
    names = attribute.split(".")
    if (
        not colon
        or not module
        or ":" in attribute
        or not all(name.isidentifier() for name in names)
        or not all(part.isidentifier() for part in module.split("."))
    ):
        raise TargetError(
            f"{what} {text!r} must be 'module:factory' (for example "
            "'mypkg.data:build_train'), a module and a function in it separated by ':'"
        )
    return module, attribute


def _cwd_on_path() -> None:
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)


def where(error: BaseException) -> str:
    """`` (at file:line)`` of the frame that raised ``error``, or ``""`` without a traceback.

    >>> where(ValueError("never raised"))
    ''
    """
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f" (at {last.filename}:{last.lineno})"


def load_factory(text: str, *, what: str = "TARGET") -> Any:
    """Import the object ``TARGET`` names (a factory, or a dataset object).

    The current directory is put first on ``sys.path`` when it is not there yet.

    Args:
        text: The TARGET argument.
        what: The option's name in messages.

    Returns:
        The attribute.

    Raises:
        TargetError: If the module cannot be imported or lacks the attribute.

    >>> load_factory("rankaug.datasets:SyntheticDetection").__name__
    'SyntheticDetection'
    >>> load_factory("rankaug.datasets:SyntheticDetector")
    Traceback (most recent call last):
    ...
    rankaug.cli.target.TargetError: TARGET 'rankaug.datasets:SyntheticDetector': module
    'rankaug.datasets' has no attribute 'SyntheticDetector' (did you mean 'SyntheticDetection'?)
    """
    module_name, attribute = parse_target(text, what=what)
    _cwd_on_path()
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        missing = error.name or ""
        if missing and (module_name == missing or module_name.startswith(missing + ".")):
            raise TargetError(
                f"{what} {text!r}: module {module_name!r} not found (searched sys.path, "
                f"current directory {os.getcwd()} first)"
            ) from None
        raise TargetError(
            f"{what} {text!r}: importing module {module_name!r} failed: "
            f"{type(error).__name__}: {error}{where(error)}"
        ) from error
    except Exception as error:
        raise TargetError(
            f"{what} {text!r}: importing module {module_name!r} raised "
            f"{type(error).__name__}: {error}{where(error)}"
        ) from error
    found: Any = module
    path = module_name
    for name in attribute.split("."):
        if not hasattr(found, name):
            choices = [n for n in dir(found) if not n.startswith("_")]
            close = difflib.get_close_matches(name, choices, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise TargetError(
                f"{what} {text!r}: {'module' if found is module else 'object'} {path!r} "
                f"has no attribute {name!r}{hint}"
            )
        found = getattr(found, name)
        path = f"{path}.{name}"
    return found


def check_dataset(dataset: object, text: str, *, streams: bool = False) -> Any:
    """Check that ``dataset`` is a non-empty map-style dataset, or a stream if allowed.

    Args:
        dataset: What the factory returned.
        text: The TARGET argument, for the message.
        streams: Whether a stream (:func:`rankaug.stream.is_stream`) is accepted as it
            is (``audit`` iterates it; ``show`` needs indices).

    Returns:
        ``dataset``.

    Raises:
        TargetError: If it is a ``DataLoader`` (its dataset is wanted), an albumentations,
            torchvision, kornia or ultralytics transform (not a dataset: wrap it), a
            one-shot iterator (a generator), a
            stream and ``streams`` is false, has no
            ``__getitem__``/``__len__``, is a string or a mapping (indexed by key, not
            position), or has length 0.

    >>> check_dataset([1, 2], "m:f")
    [1, 2]
    >>> check_dataset(42, "m:f")
    Traceback (most recent call last):
    ...
    rankaug.cli.target.TargetError: TARGET 'm:f' gave an int, not a map-style dataset (an
    object with __getitem__ and __len__)
    """
    kind = type(dataset).__name__
    if isinstance(dataset, DataLoader):
        inner = type(dataset.dataset).__name__
        raise TargetError(
            f"TARGET {text!r} gave a {kind}, not a dataset: the command loads the samples "
            "through its own DataLoaders, as every rank and worker of a launch does (its "
            f"batches are not samples); give the dataset inside it (loader.dataset, a {inner})"
        )
    library = _transform_library(dataset)
    if library:
        raise TargetError(
            f"TARGET {text!r} returned a transform ({kind}, from {library}), not a dataset; "
            "wrap it: RandomAugmentWrapper(dataset, transform, seed=...)"
        )
    if is_stream(dataset):
        if isinstance(dataset, Iterator) and not isinstance(dataset, IterableDataset):
            raise TargetError(
                f"TARGET {text!r} gave the one-shot iterator {kind}: it can be read once, and "
                "every rank, worker and epoch reads the dataset anew; give a factory that "
                "returns an iterable read afresh by each iter() (an IterableDataset whose "
                "__iter__ makes the generator) or a map-style dataset"
            )
        if streams:
            return dataset
        raise TargetError(
            f"TARGET {text!r} gave {kind}, an IterableDataset; this command needs a "
            "map-style dataset (indexed with __getitem__) to load the same index on every "
            "rank (rankaug audit takes an iterable one)"
        )
    if isinstance(dataset, str | bytes | Mapping) or not (
        hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__")
    ):
        article = "an" if kind[:1].lower() in "aeiou" else "a"
        others = ", an iterable dataset or a batch transform" if streams else ""
        raise TargetError(
            f"TARGET {text!r} gave {article} {kind}, not a map-style dataset "
            f"(an object with __getitem__ and __len__){others}"
        )
    try:
        length = len(dataset)
    except Exception as error:
        raise TargetError(
            f"TARGET {text!r}: len() of the {kind} raised {type(error).__name__}: {error}"
        ) from error
    if length == 0:
        raise TargetError(f"TARGET {text!r} gave an empty {kind} (length 0)")
    return dataset


def build_target(text: str) -> Any:
    """Import ``TARGET`` and call it, unless it is already a dataset or batch transform.

    Args:
        text: The TARGET argument.

    Returns:
        What the factory gave (unchecked): a dataset, or a batch transform for the
        audit's batch mode (:mod:`rankaug.cli.batch_probe`).

    Raises:
        TargetError: If the module or attribute is missing or the factory raises.
    """
    from rankaug.cli.batch_probe import batch_kind

    found = load_factory(text)
    is_dataset = not isinstance(found, type) and (
        (hasattr(found, "__getitem__") and hasattr(found, "__len__")) or is_stream(found)
    )
    if callable(found) and not is_dataset and not batch_kind(found):
        factory: Callable[[], Any] = found
        try:
            return factory()
        except Exception as error:
            raise TargetError(
                f"TARGET {text!r}: calling {parse_target(text)[1]}() raised "
                f"{type(error).__name__}: {error}{where(error)}"
            ) from error
    return found


def build_dataset(text: str, *, streams: bool = False) -> Any:
    """Import ``TARGET``, call it (unless it is already a dataset) and check the result.

    Args:
        text: The TARGET argument.
        streams: Whether an iterable dataset is accepted (:func:`check_dataset`).

    Returns:
        The map-style dataset (or the stream).

    Raises:
        TargetError: If the module or attribute is missing, the factory raises, or it
            does not give a non-empty map-style dataset (or, with ``streams``, a stream).

    >>> len(build_dataset("rankaug.datasets:SyntheticDetection"))
    64
    """
    return check_dataset(build_target(text), text, streams=streams)
