"""Sample shapes in and out: what a wrapper unpacks, and how it puts the result back.

rankaug hands transforms (albumentations, the mosaic) a dict in albumentations'
convention — ``image`` as a numpy ``HxW`` or ``HxWxC`` array, ``mask``, ``masks``,
``bboxes``, label fields, ``keypoints`` — and returns the result in the shape the
dataset gave it:

* **dict samples** with albumentations' keys; keys that are not transform targets
  (``"path"``, ``"image_id"``, ...) come back untouched, as the same objects.
* **(image, target) tuples or lists**, torchvision style. A dict target's ``boxes``
  becomes ``bboxes``, and its ``labels``, ``masks``, ``mask`` and ``keypoints`` are
  targets under their own names (give an albumentations ``Compose`` the label field
  ``"labels"``); any other target (a class index, a tensor) passes through.
* **images** as numpy ``HxW``/``HxWxC`` arrays, PIL images (modes L, RGB, RGBA) or
  torch ``CHW``/``HW`` tensors; each comes back as the same type. Target values given
  as tensors, arrays or lists come back as tensors, arrays or lists of the same dtype
  (integer boxes that a transform made fractional stay floating point rather than
  being truncated).

Any other shape: pass an object with ``unpack`` and ``repack`` (the
:class:`SampleAdapter` protocol) as ``adapter=``. Multi-sample wrappers (the mosaic)
use three more hooks when an adapter has them, and a fallback otherwise (see
:func:`view`, :func:`passthrough` and :func:`attach`): reading a partner that is not
rebuilt, the values a transform does not get, and adding a key to an output.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from collections.abc import Set as AbstractSet
from typing import Any, NamedTuple, Protocol, TypedDict

import numpy as np
import torch

__all__ = [
    "DEFAULT_TARGETS",
    "DefaultAdapter",
    "check_adapter",
    "SampleAdapter",
    "SampleDict",
    "attach",
    "passthrough",
    "restore_like",
    "view",
]

#: Keys every transform may read and write, besides label fields.
DEFAULT_TARGETS: frozenset[str] = frozenset({"image", "mask", "masks", "bboxes", "keypoints"})
_PIL_MODES = ("L", "RGB", "RGBA")


class SampleDict(TypedDict, total=False):
    """A dict sample in albumentations' convention (other keys are allowed and kept)."""

    image: np.ndarray
    mask: np.ndarray
    masks: np.ndarray
    bboxes: np.ndarray
    labels: np.ndarray
    keypoints: np.ndarray


class SampleAdapter(Protocol):
    """Turns a sample into albumentations-style data and back.

    ``unpack`` returns the data a transform works on (exactly the keys in ``targets``
    that the sample has, the image as a numpy array: so its keys say whether a sample
    had boxes, masks or keypoints) and a state; ``repack`` builds a sample of the
    original shape from the transform's output and that state. The optional hooks
    ``view``, ``passthrough`` and ``attach`` are described by the functions of the same
    names in :mod:`rankaug.samples`; :class:`DefaultAdapter` has all three.
    """

    def unpack(self, sample: Any, targets: Collection[str]) -> tuple[dict[str, Any], Any]:
        """Split ``sample`` into transform data and the state ``repack`` needs."""
        ...

    def repack(self, data: Mapping[str, Any], state: Any) -> Any:
        """Build a sample of the original shape from transformed ``data``."""
        ...


class _State(NamedTuple):
    sample: Any  # the original sample
    originals: dict[str, Any]  # the original values of the keys handed out
    image_kind: str  # "numpy", "pil" or "tensor"
    pil_mode: str | None
    target: Any  # the original target of a tuple sample (None for dicts)


def _is_pil(image: object) -> bool:
    return type(image).__module__.startswith("PIL.")


def _image_to_numpy(image: object) -> tuple[np.ndarray, str, str | None]:
    if type(image) is np.ndarray or isinstance(image, np.ndarray):
        if image.ndim not in (2, 3):
            raise ValueError(
                f"image must be an HxW or HxWxC array, got an array of shape {image.shape}"
            )
        return image, "numpy", None
    if isinstance(image, torch.Tensor):
        if image.ndim == 3:
            return (
                np.ascontiguousarray(image.detach().cpu().numpy().transpose(1, 2, 0)),
                ("tensor"),
                None,
            )
        if image.ndim == 2:
            return image.detach().cpu().numpy(), "tensor", None
        raise ValueError(
            f"image must be a CxHxW or HxW tensor, got a tensor of shape {tuple(image.shape)}"
        )
    if _is_pil(image):
        mode = getattr(image, "mode", None)
        if mode not in _PIL_MODES:
            raise ValueError(
                f"image is a PIL image of mode {mode!r}; rankaug handles modes {_PIL_MODES} "
                "(convert it in the dataset, e.g. image.convert('RGB'))"
            )
        return np.array(image), "pil", mode
    raise TypeError(
        f"image must be a numpy array, a PIL image or a torch tensor, got {type(image).__name__}"
    )


def _image_from_numpy(image: Any, kind: str, mode: str | None) -> Any:
    if kind == "numpy":
        return image
    array = np.asarray(image)
    if kind == "tensor":
        if array.ndim == 3:
            array = array.transpose(2, 0, 1)
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


def _value_to_numpy(value: Any) -> Any:
    if type(value) is not np.ndarray and isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return value


def restore_like(new: Any, old: Any) -> Any:
    """Give ``new`` the container type and dtype of ``old``.

    Tensors give tensors, arrays give arrays (an empty result keeps the trailing
    shape, so ``(0, 4)`` boxes stay ``(0, 4)``), lists give lists, tuples give tuples,
    each with the dtype of ``old`` (for lists and tuples, of the numbers in them): an
    int64 label stays int64, also when a transform dropped every box and returned an
    empty float array. Only an integer ``old`` with fractional ``new`` values stays
    floating point (``float64``), rather than being truncated.

    Args:
        new: The transformed value.
        old: The original value.

    Returns:
        ``new`` in the type of ``old``.

    >>> restore_like(np.zeros((0,)), np.zeros((3, 4), np.float32)).shape
    (0, 4)
    >>> restore_like(np.array([[1.0, 2.0, 3.0, 4.0]]), [[0, 0, 1, 1]])
    [[1, 2, 3, 4]]
    >>> restore_like(np.array([[1.5, 2.0, 3.0, 4.0]]), [[0, 0, 1, 1]])
    [[1.5, 2.0, 3.0, 4.0]]
    >>> restore_like(np.zeros((0,)), torch.tensor([3, 4])).dtype
    torch.int64
    """
    if (
        type(new) is np.ndarray
        and type(old) is np.ndarray
        and new.dtype == old.dtype
        and (new.size or new.ndim == old.ndim)
    ):
        return new  # already right: the common case, kept cheap
    if isinstance(old, torch.Tensor):
        array = _restore_array(np.asarray(new), old.shape, None)
        if old.dtype.is_floating_point or old.dtype.is_complex or _integral(array):
            return torch.as_tensor(array, dtype=old.dtype)
        return torch.as_tensor(array)  # fractional values for an integer tensor
    if isinstance(old, np.ndarray):
        return _restore_array(np.asarray(new), old.shape, old.dtype)
    if isinstance(old, list | tuple):
        if isinstance(new, np.ndarray):
            items = _restore_array(new, (), _list_dtype(old) if old else None).tolist()
        else:
            items = list(new)
        return items if isinstance(old, list) else tuple(items)
    return new


def _integral(array: np.ndarray) -> bool:
    """Whether ``array`` can be stored in an integer dtype without losing anything."""
    if array.dtype.kind != "f":
        return True
    return bool(np.isfinite(array).all()) and np.array_equal(array, np.round(array))


def _list_dtype(values: list[Any] | tuple[Any, ...]) -> np.dtype[Any] | None:
    """The numpy dtype of a list's numbers, or ``None`` when it holds something else."""
    try:
        dtype = np.asarray(values).dtype
    except (TypeError, ValueError):  # ragged lists
        return None
    return dtype if dtype.kind in "biuf" else None


def _restore_array(
    array: np.ndarray, old_shape: Any, old_dtype: np.dtype[Any] | None
) -> np.ndarray:
    if array.ndim == 1 and array.size == 0 and len(old_shape) > 1:
        array = array.reshape((0, *tuple(old_shape)[1:]))  # [] lost its trailing shape
    if old_dtype is None or array.dtype == old_dtype:
        return array
    if old_dtype.kind in "biu" and not _integral(array):
        return array  # do not truncate fractional values into an integer dtype
    if old_dtype.kind == "b" and array.size and not np.isin(array, (0, 1)).all():
        return array  # nor turn other numbers into True
    return array.astype(old_dtype, copy=False)


class DefaultAdapter:
    """Handles dict samples and ``(image, target)`` tuples (see the module docstring).

    >>> adapter = DefaultAdapter()
    >>> sample = {"image": np.zeros((4, 6, 3), np.uint8), "path": "a.jpg"}
    >>> data, state = adapter.unpack(sample, DEFAULT_TARGETS)
    >>> sorted(data)
    ['image']
    >>> data["image"] = data["image"][:, ::-1]
    >>> out = adapter.repack(data, state)
    >>> sorted(out), out["path"]
    (['image', 'path'], 'a.jpg')
    """

    def unpack(self, sample: Any, targets: Collection[str]) -> tuple[dict[str, Any], Any]:
        """Split ``sample`` into transform data and a state (see :class:`SampleAdapter`).

        Raises:
            TypeError: If the sample is not a dict or an (image, target) pair, or its image
                is of an unsupported type.
            ValueError: If the dict has no ``image`` or the image has an unsupported
                shape.
        """
        if type(sample) is dict or isinstance(sample, Mapping):
            if "image" not in sample:
                raise ValueError(
                    f"a dict sample needs an 'image' key; this one has keys {sorted(sample)}"
                )
            return self._unpack_mapping(sample, sample, targets, None)
        if isinstance(sample, tuple | list) and len(sample) == 2:
            image, target = sample
            if isinstance(target, Mapping):
                renamed = {("bboxes" if k == "boxes" else k): v for k, v in target.items()}
                if "image" in renamed:
                    raise ValueError(
                        "an (image, target) sample's target must not have an 'image' key"
                    )
                renamed["image"] = image
                return self._unpack_mapping(sample, renamed, targets, target)
            return self._unpack_mapping(sample, {"image": image}, targets, target)
        raise TypeError(
            f"rankaug cannot handle a sample of type {type(sample).__name__}: expected a dict "
            "with an 'image' key or an (image, target) pair; for any other shape pass "
            "adapter= (see rankaug.SampleAdapter)"
        )

    @staticmethod
    def _unpack_mapping(
        sample: Any, mapping: Mapping[str, Any], targets: Collection[str], target: Any
    ) -> tuple[dict[str, Any], _State]:
        image, kind, mode = _image_to_numpy(mapping["image"])
        data: dict[str, Any] = {"image": image}
        originals: dict[str, Any] = {}
        for key, value in mapping.items():
            if key != "image" and key in targets:
                originals[key] = value
                data[key] = _value_to_numpy(value)
        return data, _State(sample, originals, kind, mode, target)

    def view(self, sample: Any, targets: Collection[str]) -> Mapping[str, Any]:
        """The data of a sample that is not rebuilt (see :func:`view`).

        A plain dict with a numpy image is its own view; other samples are unpacked.
        """
        if type(sample) is dict and type(sample.get("image")) is np.ndarray:
            return sample
        return self.unpack(sample, targets)[0]

    @staticmethod
    def passthrough(sample: Any, targets: Collection[str]) -> Mapping[str, Any]:
        """The values of a dict sample, or a pair's dict target, not in ``targets``.

        A target's ``boxes`` is its ``bboxes`` target (see :func:`passthrough`).
        """
        if type(sample) is dict or isinstance(sample, Mapping):
            mapping, renamed = sample, False
        elif isinstance(sample, tuple | list) and len(sample) == 2:
            mapping, renamed = sample[1], True
            if not isinstance(mapping, Mapping):
                return _NOTHING
        else:
            return _NOTHING
        if not isinstance(targets, AbstractSet):
            targets = frozenset(targets)
        if mapping.keys() <= targets:
            return _NOTHING
        return {
            key: value
            for key, value in mapping.items()
            if key not in targets and key != "image" and not (renamed and key == "boxes")
        }

    @staticmethod
    def attach(sample: Any, key: str, value: Any) -> Any:
        """Add ``key: value`` to a dict sample or a pair's dict target (see :func:`attach`)."""
        if isinstance(sample, dict):
            sample[key] = value
        elif isinstance(sample, tuple | list) and len(sample) == 2 and isinstance(sample[1], dict):
            sample[1][key] = value
        return sample

    def repack(self, data: Mapping[str, Any], state: Any) -> Any:
        """Build a sample of the original shape (see :class:`SampleAdapter`)."""
        assert isinstance(state, _State)
        updates: dict[str, Any] = {}
        for key, value in data.items():
            if key == "image":
                updates[key] = _image_from_numpy(value, state.image_kind, state.pil_mode)
            elif key in state.originals:
                updates[key] = restore_like(value, state.originals[key])
            else:
                updates[key] = value
        sample = state.sample
        if isinstance(sample, Mapping):
            out = dict(sample)
            out.update(updates)
            return out
        image = updates.pop("image")
        target = state.target
        if isinstance(target, Mapping):
            new_target = dict(target)
            for key, value in updates.items():
                new_target["boxes" if key == "bboxes" else key] = value
            target = new_target
        return type(sample)((image, target))


def view(adapter: SampleAdapter, sample: Any, targets: Collection[str]) -> Mapping[str, Any]:
    """The transform data of a sample that is read but not rebuilt (a mosaic's partner).

    ``adapter.view(sample, targets)`` when the adapter has that hook, else the data of
    ``adapter.unpack``. The result is read, never written, and may hold other keys too
    (:class:`DefaultAdapter` gives a plain dict with a numpy image as it is, without a
    copy).

    Args:
        adapter: The wrapper's adapter.
        sample: The sample as the dataset gave it.
        targets: The keys the wrapper reads.

    Returns:
        A mapping with at least the keys in ``targets`` that the sample has.

    >>> sample = {"image": np.zeros((2, 2), np.uint8), "path": "a.png"}
    >>> view(DefaultAdapter(), sample, DEFAULT_TARGETS) is sample
    True
    """
    hook = getattr(adapter, "view", None)
    if hook is not None:
        return hook(sample, targets)  # type: ignore[no-any-return]
    return adapter.unpack(sample, targets)[0]


def passthrough(adapter: SampleAdapter, sample: Any, targets: Collection[str]) -> Mapping[str, Any]:
    """The named values of a sample that a transform does not get (they pass through).

    ``adapter.passthrough(sample, targets)`` when the adapter has that hook, else an
    empty mapping (nothing is known of other shapes). A wrapper that changes the
    number of boxes checks them: a per-box value among them would go stale.

    Args:
        adapter: The wrapper's adapter.
        sample: The sample as the dataset gave it.
        targets: The keys the wrapper hands to its transform.

    Returns:
        The other keys of a dict sample, or of a pair's dict target, with their values.

    >>> sample = {"image": np.zeros((2, 2), np.uint8), "labels": [1], "iscrowd": [0]}
    >>> dict(passthrough(DefaultAdapter(), sample, DEFAULT_TARGETS | {"labels"}))
    {'iscrowd': [0]}
    """
    hook = getattr(adapter, "passthrough", None)
    if hook is not None:
        return hook(sample, targets)  # type: ignore[no-any-return]
    return _NOTHING


def attach(adapter: SampleAdapter, sample: Any, key: str, value: Any) -> Any:
    """Add ``key: value`` to a sample that ``adapter.repack`` made.

    ``adapter.attach(sample, key, value)`` when the adapter has that hook, else
    :meth:`DefaultAdapter.attach`'s rule: into a dict sample, or into a pair's dict
    target; other shapes come back unchanged.

    Args:
        adapter: The wrapper's adapter.
        sample: A sample from ``adapter.repack`` (it may be changed in place).
        key: The key.
        value: The value.

    Returns:
        The sample.

    >>> attach(DefaultAdapter(), (np.zeros((2, 2)), {"labels": []}), "mosaic", 1)[1]
    {'labels': [], 'mosaic': 1}
    """
    hook = getattr(adapter, "attach", None)
    if hook is not None:
        return hook(sample, key, value)
    return DefaultAdapter.attach(sample, key, value)


_NOTHING: Mapping[str, Any] = {}


def check_adapter(adapter: object) -> SampleAdapter:
    """The adapter a wrapper uses: ``adapter`` itself, or a :class:`DefaultAdapter`.

    Args:
        adapter: ``None``, or an object with ``unpack`` and ``repack`` methods.

    Returns:
        The adapter.

    Raises:
        TypeError: If ``adapter`` lacks one of the methods.

    >>> type(check_adapter(None)).__name__
    'DefaultAdapter'
    """
    if adapter is None:
        return DefaultAdapter()
    if not (
        callable(getattr(adapter, "unpack", None)) and callable(getattr(adapter, "repack", None))
    ):
        raise TypeError(
            "adapter must have unpack(sample, targets) and repack(data, state) methods, "
            f"got {type(adapter).__name__}"
        )
    return adapter  # type: ignore[return-value]
