"""Images and values between a sample's types and the numpy arrays transforms work on."""

from __future__ import annotations

from typing import Any, Final

import numpy as np
import torch

__all__ = ["image_from_numpy", "image_hw", "image_kind", "image_to_numpy", "value_to_numpy"]

_PIL_MODES = ("L", "RGB", "RGBA")
#: PIL modes of more than 8 bits (a 16-bit PNG opens as ``I;16`` or ``I``), by the dtype
#: ``np.asarray`` gives: ``convert("RGB")`` or ``"L"`` would clip their values to 255.
_DEEP_MODES: Final = {"I;16": "uint16", "I;16L": "uint16", "I;16B": "uint16",
                      "I;16N": "uint16", "I": "int32", "F": "float32"}  # fmt: skip
#: The most channels an image has where its layout is guessed from its shape: a 3-D
#: image with more in its first dimension and at most this many in its last is
#: ``HxWxC``, with at most this many first and more last ``CxHxW``.
CHANNELS_AT_MOST: Final = 4


def _is_pil(image: object) -> bool:
    return type(image).__module__.startswith("PIL.")


def _on_cpu(tensor: torch.Tensor) -> np.ndarray:
    """A CPU tensor's values as numpy; one on another device is refused, never moved.

    The transforms run on the CPU, and the result would come back there: a sample on
    the GPU would silently change device.
    """
    if tensor.device.type != "cpu":
        raise ValueError(
            f"a sample's tensors must be on the CPU, got one on {tensor.device} (shape "
            f"{tuple(tensor.shape)}): the wrappers transform on the CPU; move samples to the "
            "device after the DataLoader (rankaug.BatchAugment augments batches there)"
        )
    return tensor.detach().numpy()


def image_to_numpy(image: object, name: str = "image") -> tuple[np.ndarray, str, str | None]:
    """A sample's image as a numpy ``HxW``/``HxWxC`` array, its kind and PIL mode.

    The kind is ``"numpy"``, ``"pil"``, ``"tensor"`` (``CxHxW``) or ``"tensor_hw"``
    (an ``HxW`` tensor), for :func:`image_from_numpy`. ``name``: the image's key, for
    the messages (an additional image target's, ``"image2"``).

    Raises:
        TypeError: If it is not a numpy array, a PIL image or a tensor.
        ValueError: If its shape or PIL mode is not supported.

    >>> image_to_numpy(torch.zeros(3, 4, 6, dtype=torch.uint8))[0].shape
    (4, 6, 3)
    """
    if type(image) is np.ndarray or isinstance(image, np.ndarray):
        if image.ndim not in (2, 3):
            raise ValueError(
                f"{name} must be an HxW or HxWxC array, got an array of shape {image.shape}"
            )
        return image, "numpy", None
    if isinstance(image, torch.Tensor):
        if image.ndim == 3:
            channels, _, last = image.shape
            if channels > CHANNELS_AT_MOST >= last:
                raise ValueError(
                    f"{name} must be a CxHxW tensor, got a tensor of shape {tuple(image.shape)}, "
                    f"which looks HxWxC ({last} channels last): give {name}.permute(2, 0, 1), "
                    "or the numpy array itself"
                )
            return np.ascontiguousarray(_on_cpu(image).transpose(1, 2, 0)), "tensor", None
        if image.ndim == 2:
            return _on_cpu(image), "tensor_hw", None
        raise ValueError(
            f"{name} must be a CxHxW or HxW tensor, got a tensor of shape {tuple(image.shape)}"
        )
    if _is_pil(image):
        mode = getattr(image, "mode", None)
        if mode not in _PIL_MODES:
            deep = _DEEP_MODES.get(str(mode))
            fix = f"e.g. {name}.convert('RGB')"
            if deep is not None:  # the values would go: numpy arrays of them are read
                given = f"np.asarray({name})"
                if deep == "int32":  # no wrapper reads int32: a 16-bit PNG's fit uint16
                    given += ".astype(np.uint16) (values 0 to 65535; or float32)"
                fix = (
                    f"{given} keeps its values, as an HxW array; convert('RGB') or "
                    "convert('L') would clip them to 255"
                )
            raise ValueError(
                f"{name} is a PIL image of mode {mode!r}; rankaug handles modes {_PIL_MODES} "
                f"(convert it in the dataset: {fix})"
            )
        return np.array(image), "pil", mode
    raise TypeError(
        f"{name} must be a numpy array, a PIL image or a torch tensor, got {type(image).__name__}"
    )


def image_from_numpy(image: Any, kind: str, mode: str | None) -> Any:
    """The inverse of :func:`image_to_numpy`: ``image`` as the ``kind`` it came as.

    A transform's ``HxW``/``HxWxC`` array goes back into the image's type: a ``CxHxW``
    tensor (``1xHxW`` from an ``HxW`` result, ``ToGray(num_output_channels=1)``'s), an
    ``HxW`` tensor as ``HxW``, a PIL image of its channels' mode. A result the transform
    already made a tensor (albumentations' ``ToTensorV2``, ``CxHxW``) is the pipeline's
    choice, for every kind: it comes back as it is, never transposed again.

    Raises:
        TypeError: If a PIL image would have to hold a non-``uint8`` result.

    >>> tuple(image_from_numpy(np.zeros((4, 6)), "tensor", None).shape)
    (1, 4, 6)
    >>> tuple(image_from_numpy(torch.zeros(3, 4, 6), "pil", "RGB").shape)
    (3, 4, 6)
    """
    if kind == "numpy" or isinstance(image, torch.Tensor):
        return image
    array = np.asarray(image)
    if kind in ("tensor", "tensor_hw"):
        if array.ndim == 3:
            array = array.transpose(2, 0, 1)
        elif kind == "tensor" and array.ndim == 2:  # one channel left of a CxHxW image
            array = array[None]
        return torch.from_numpy(np.ascontiguousarray(array))
    from PIL import Image

    if array.dtype != np.uint8:
        raise TypeError(
            f"the transform returned a {array.dtype} image, which cannot go back into the "
            f"PIL image (mode {mode}) the dataset gave; give the wrapper numpy or tensor images "
            "for float output"
        )
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    return Image.fromarray(array)


def image_kind(image: Any) -> tuple[str, str | None]:
    """The kind and PIL mode :func:`image_to_numpy` gives ``image`` (without converting it).

    >>> image_kind(torch.zeros(3, 4, 6)), image_kind(np.zeros((4, 6)))
    (('tensor', None), ('numpy', None))
    """
    if isinstance(image, torch.Tensor):
        return ("tensor" if image.ndim == 3 else "tensor_hw"), None
    if _is_pil(image):
        return "pil", getattr(image, "mode", None)
    return "numpy", None


def image_hw(image: Any) -> tuple[int, int]:
    """The ``(height, width)`` of a transform's output image.

    An ``HxW``/``HxWxC`` array, or a ``CxHxW`` (or ``HxW``) tensor, as ``ToTensorV2``
    gives.

    >>> image_hw(np.zeros((4, 6, 3))), image_hw(torch.zeros(3, 4, 6))
    ((4, 6), (4, 6))
    """
    if isinstance(image, torch.Tensor):
        height, width = image.shape[-2:]
    else:
        height, width = np.shape(image)[:2]
    return int(height), int(width)


def value_to_numpy(value: Any) -> Any:
    """A tensor or PIL image as a numpy array, a list (or tuple) of them as one of arrays.

    A PIL image (a mask: ``L``, ``P``, ``1``, ``I;16``...) gives its values, a palette
    image its indices. Anything else as it is.

    >>> value_to_numpy([torch.zeros(2, 3)])[0].shape
    (2, 3)
    """
    if type(value) is not np.ndarray and isinstance(value, torch.Tensor):
        return _on_cpu(value)
    if _is_pil(value):
        return np.asarray(value)
    kind = type(value)
    if (kind is list or kind is tuple) and value and isinstance(value[0], torch.Tensor):
        return kind(value_to_numpy(item) for item in value)  # instance masks, say
    if (kind is list or kind is tuple) and value and _is_pil(value[0]):
        return kind(value_to_numpy(item) for item in value)
    return value
