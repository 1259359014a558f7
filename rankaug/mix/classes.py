"""Classification targets of a mix: classes as vectors, mixed, and given back.

With ``num_classes=`` a wrapper takes each sample's class (an integer, a 0-d integer
tensor or array, or already a vector of ``num_classes`` weights, e.g. from another mix)
as a float vector, one-hot for an integer, and gives the output
``share * main + (1 - share) * partner``, where ``share`` is the main sample's weight
in the image (MixUp's ratio, CutMix's area that stays the main image's). A sample that
is not mixed gets its one-hot vector, so every output of a wrapper has the same kind
of target and batches collate. The vector is float32, a torch tensor when the main
sample's class was one, else a numpy array. Without ``num_classes=`` a class (an integer
or a vector, such as an inner mix's soft target) is refused (:func:`refuse_unmixed`).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import torch

__all__ = ["ADVICE", "class_target", "class_vector", "refuse_unmixed", "soft_target"]

ADVICE = (
    "num_classes= is not given: a mixed image needs a mixed target; pass num_classes= for "
    "soft targets (or class_field= another key if this is not a class)"
)
"""What a refused class's message advises, for the wrappers that take ``num_classes=`` and
``class_field=`` (CopyPaste, which takes neither, gives its own)."""


def class_vector(value: Any, num_classes: int, where: str) -> np.ndarray:
    """A sample's class as a float64 vector of ``num_classes`` weights.

    Args:
        value: The class: an integer in ``[0, num_classes)`` (Python, numpy, or a 0-d
            tensor or array) or a vector of ``num_classes`` numbers.
        num_classes: The number of classes.
        where: The sample's name, e.g. ``"dataset[3]"``.

    Returns:
        The vector.

    Raises:
        TypeError: If ``value`` is neither an integer class nor a vector of numbers.
        ValueError: If the class is out of range or the vector has another length.

    >>> class_vector(2, 4, "dataset[0]").tolist()
    [0.0, 0.0, 1.0, 0.0]
    >>> class_vector(7, 4, "dataset[5]")
    Traceback (most recent call last):
    ...
    ValueError: dataset[5] class must be an integer in [0, 3] (num_classes=4), got 7
    """
    if value is None:
        raise ValueError(
            f"{where} has no class: with num_classes= every sample needs one (an integer "
            "class, or a vector of num_classes weights)"
        )
    array = value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else value
    if isinstance(array, bool | np.bool_):
        raise TypeError(f"{where} class must be an integer or a vector, got {value!r}")
    if isinstance(array, numbers.Integral) or (
        isinstance(array, np.ndarray) and array.ndim == 0 and array.dtype.kind in "iu"
    ):
        number = int(array)
        if not 0 <= number < num_classes:
            raise ValueError(
                f"{where} class must be an integer in [0, {num_classes - 1}] "
                f"(num_classes={num_classes}), got {number}"
            )
        vector = np.zeros(num_classes)
        vector[number] = 1.0
        return vector
    try:
        vector = np.asarray(array, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"{where} class must be an integer or a vector of numbers, got {value!r:.80} of "
            f"type {type(value).__name__}"
        ) from None
    if vector.shape != (num_classes,):
        raise ValueError(
            f"{where} class must be an integer or a vector of num_classes={num_classes} "
            f"weights, got shape {vector.shape}"
        )
    return vector


def soft_target(vector: np.ndarray, like: Any) -> Any:
    """``vector`` as float32: a tensor when the main sample's class ``like`` was one.

    >>> soft_target(np.array([0.25, 0.75]), torch.tensor(1))
    tensor([0.2500, 0.7500])
    """
    out = vector.astype(np.float32)
    if isinstance(like, torch.Tensor):
        return torch.from_numpy(out)
    return out


def refuse_unmixed(value: Any, where: str, advice: str = ADVICE) -> None:
    """Refuse a class when no ``num_classes=`` says how to mix it.

    A class is what :func:`class_vector` takes: an integer (Python, numpy, or a 0-d
    tensor or array) or a vector of numbers (a one-hot or soft vector, e.g. from an
    inner mix with ``num_classes=``). Kept as it is, it would be the main sample's
    class of a mixed image. Other values (``None``, strings, masks) pass. ``advice``
    ends the message: what to do, naming only arguments the wrapper takes.

    Raises:
        ValueError: If ``value`` is an integer class or a vector of numbers.

    >>> refuse_unmixed(None, "dataset[0]")
    >>> refuse_unmixed(3, "dataset[0]")
    Traceback (most recent call last):
    ...
    ValueError: dataset[0] has the class 3 but num_classes= is not given: ...
    """
    if value is None or isinstance(value, bool | np.bool_ | str | bytes):
        return
    if isinstance(value, np.ndarray | torch.Tensor) and value.ndim > 1:
        return  # a mask (an (image, mask) pair's): not copied into floats to be told
    array = value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else value
    if isinstance(array, numbers.Integral) or (
        isinstance(array, np.ndarray) and array.ndim == 0 and array.dtype.kind in "iu"
    ):
        raise ValueError(f"{where} has the class {int(array)} but {advice}")
    try:
        vector = np.asarray(array, dtype=np.float64)
    except (TypeError, ValueError):
        return
    if vector.ndim == 1 and vector.size:
        raise ValueError(
            f"{where} has the class vector {value!r:.80} (shape {vector.shape}) but "
            f"{advice} (a class is an integer or a vector of weights)"
        )


def class_target(
    labels: tuple[Any, Any],
    indices: tuple[int, int],
    share: float,
    num_classes: int | None,
    advice: str = ADVICE,
) -> Any:
    """An output's soft class target: the main and partner classes mixed by ``share``.

    ``None`` without ``num_classes`` (a class is then refused, with ``advice``:
    :func:`refuse_unmixed`).
    ``labels`` and ``indices`` are the main sample's and the partner's.

    >>> class_target((0, 2), (5, 6), 0.75, 3).tolist()
    [0.75, 0.0, 0.25]
    >>> class_target((None, None), (5, 6), 0.75, None) is None
    True
    """
    main, partner = labels
    if num_classes is None:
        refuse_unmixed(main, f"dataset[{indices[0]}]", advice)
        return None
    vector = class_vector(main, num_classes, f"dataset[{indices[0]}]")
    if share != 1.0:
        other = class_vector(partner, num_classes, f"dataset[{indices[1]}]")
        vector = share * vector + (1.0 - share) * other
    return soft_target(vector, main)
