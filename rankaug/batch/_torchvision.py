"""Torchvision v2 transforms on batches, keyed per sample: one call per sample.

A torchvision v2 transform draws its parameters from torch's global CPU generator
(``torch.rand(1) >= p``, ``torch.empty(1).uniform_``, ``torch.randint`` in its
``make_params`` and its containers' ``forward``), once per call: given a whole batch
it applies one set of parameters to every sample. So :func:`apply` calls it once per
sample (the documented per-sample path; no vectorised one, since a batched call draws
one set for the batch), each time with the CPU default generator seeded from the
sample's key (a 63-bit seed hashed from the same :class:`~rankaug.batch._keys.DrawKeys`
kornia's draws come from), and puts the caller's state back exactly afterwards. Only
that generator is touched (``torch.manual_seed`` would seed CUDA too). A transform that
still reaches a CUDA generator (``GaussianNoise`` on a CUDA image) is refused, its
state restored. The parameters each sample's transforms made (their ``make_params``)
are recorded, per sample.

Extra inputs follow their sample: a tensor with one row per sample (a ``tv_tensors.Mask``
batch, say) is split and each row re-wrapped as its type, a sequence of length ``B``
(``tv_tensors.BoundingBoxes`` per sample, or dicts) is taken item by item; outputs come
back the same way (tensors stacked, sequences as lists). A plain tensor of two dimensions
or more (as an input, a sequence's item, or inside an item's dicts, lists and tuples: a
target's ``"boxes"``) is refused: torchvision would pass it through untransformed.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final

import torch

from rankaug._threads import torch_cpu
from rankaug.batch._keys import DrawKeys
from rankaug.batch._kornia import Swaps, cuda_changed, cuda_states, restore_cuda

#: The sampler number of a sample's torch seed (kornia's samplers use 0..0xFC).
SEED: Final = 0xFD

#: One sample's record: ``(transform type name, the params its make_params made)``.
Params = list[tuple[str, dict[str, Any]]]


def is_torchvision(transform: object) -> bool:
    """Whether ``transform`` is a torchvision v2 transform (without importing torchvision).

    A v2 transform object exists only once ``torchvision.transforms.v2`` is imported.
    """
    v2 = sys.modules.get("torchvision.transforms.v2")
    return v2 is not None and isinstance(transform, v2.Transform)


def check(transform: Any) -> None:
    """Refuse a torchvision transform that mixes the samples of a batch.

    Raises:
        ValueError: If ``transform`` holds ``v2.MixUp`` or ``v2.CutMix``.
    """
    v2 = sys.modules["torchvision.transforms.v2"]
    mixing = tuple(kind for kind in (getattr(v2, "MixUp", None), getattr(v2, "CutMix", None))
                   if kind is not None)  # fmt: skip
    stack, seen = [transform], set()
    while stack:  # containers keep their children in a list (Compose), or as modules
        module = stack.pop()
        if id(module) in seen:
            continue
        seen.add(id(module))
        held = getattr(module, "transforms", None)
        stack += list(held) if isinstance(held, list | tuple) else []
        if isinstance(module, torch.nn.Module):
            stack += list(module.children())
        if isinstance(module, mixing):
            raise ValueError(
                f"transform has a {type(module).__name__}, which mixes the samples of a "
                "batch: BatchAugment transforms each sample alone (rankaug.MixUpDataset and "
                "CutMixDataset mix keyed samples)"
            )


def apply(
    transform: Any, keys: DrawKeys, images: torch.Tensor, inputs: tuple[Any, ...]
) -> tuple[Any, list[Params]]:
    """``transform`` on each sample of ``images`` (and its rows of ``inputs``), keyed.

    Returns:
        The output (the stacked images, or a tuple with the other inputs' outputs) and
        each sample's recorded parameters.

    Raises:
        ValueError: If an input does not have one row per sample, or the outputs of the
            samples cannot be stacked (different shapes).
        RuntimeError: If the transform drew from a CUDA generator (restored first).
    """
    size = len(keys)
    columns = [_rows(images, "images", size)]
    columns += [_rows(value, f"input {n + 1}", size) for n, value in enumerate(inputs)]
    if not size:  # an empty batch: nothing to transform, nothing to stack (as kornia's)
        return (images if not inputs else (images, *inputs)), []
    seeds = keys.seeds((0, SEED, 0))
    records: list[Params] = []
    outputs: list[Any] = []
    generator = torch.default_generator  # the CPU one only (see the module docstring)
    with torch_cpu():  # one thread at a time seeds, draws and puts back (and records)
        state = generator.get_state()
        cuda = cuda_states()
        try:
            with _recording(transform) as record:
                for b in range(size):
                    generator.manual_seed(seeds[b])
                    record.clear()
                    out = transform(*(column[b] for column in columns))
                    outputs.append(out if inputs else (out,))
                    records.append(list(record))
        finally:
            generator.set_state(state)
            if cuda_changed(cuda):
                restore_cuda(cuda)
                raise RuntimeError(
                    f"the torchvision transform {type(transform).__name__} drew from a CUDA "
                    "generator (restored): BatchAugment keys only the CPU one; apply it to CPU "
                    "tensors"
                )
    stacked = [
        _stack([out[n] for out in outputs], images if n == 0 else inputs[n - 1], n)
        for n in range(len(columns))
    ]
    return (stacked[0] if not inputs else tuple(stacked)), records


def _rows(value: Any, name: str, size: int) -> list[Any]:
    """``value``'s per-sample items: a tensor's rows (re-wrapped as its type) or a sequence's.

    Raises:
        TypeError: If an input after the images is a plain tensor of two dimensions or
            more, or a sequence holding one (:func:`_check_typed`).
    """
    if isinstance(value, torch.Tensor):
        if value.dim() == 0 or value.shape[0] != size:
            raise ValueError(
                f"{name} must have one row per sample ({size}), got shape {tuple(value.shape)}"
            )
        if name != "images":
            _check_typed(value, name)
        return [like(value[b], value) for b in range(size)]
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        if len(value) != size:
            raise ValueError(
                f"{name} must have one item per sample ({size}), got {len(value)} items"
            )
        for b, item in enumerate(value):
            _check_nested(item, f"{name}[{b}]")
        return list(value)
    raise TypeError(
        f"{name} must be a tensor with one row per sample or a sequence of one item per "
        f"sample, got {type(value).__name__}"
    )


def _check_nested(item: Any, name: str) -> None:
    """:func:`_check_typed` on every tensor in ``item``, inside its dicts, lists and tuples.

    torchvision flattens them (a detection target ``{"boxes": ..., "labels": ...}``), so
    a plain tensor held there passes through untransformed as well.
    """
    if isinstance(item, torch.Tensor):
        _check_typed(item, name)
    elif isinstance(item, dict):
        for key, value in item.items():
            _check_nested(value, f"{name}[{key!r}]")
    elif isinstance(item, list | tuple):
        for n, value in enumerate(item):
            _check_nested(value, f"{name}[{n}]")


def _check_typed(value: torch.Tensor, name: str) -> None:
    """Refuse a plain tensor of 2 dimensions or more given beside the images.

    torchvision v2 takes the first plain tensor of a call as the image and passes every
    later one through untouched, so a mask or boxes given plainly would come back stale.
    """
    if type(value) is torch.Tensor and value.dim() >= 2:
        raise TypeError(
            f"{name} is a plain torch.Tensor of shape {tuple(value.shape)}: torchvision v2 "
            "passes a plain tensor after the image through untransformed, so it would come "
            "back stale; give it as its tv_tensors type (tv_tensors.Mask(x), "
            "tv_tensors.BoundingBoxes(x, format=..., canvas_size=...), tv_tensors.KeyPoints"
            "(...)): slicing or indexing one (masks[0:1]) gives a plain tensor. A tensor "
            "meant to pass through unchanged (one-hot labels) can go as a list of its rows"
        )


def like(row: torch.Tensor, batch: torch.Tensor) -> torch.Tensor:
    """``row`` as the tv_tensor type (and metadata) of ``batch``, if it has one.

    >>> like(torch.zeros(2), torch.ones(3)).shape
    torch.Size([2])
    """
    tv_tensors = sys.modules.get("torchvision.tv_tensors")  # a tv_tensor: imported
    if tv_tensors is None or not isinstance(batch, tv_tensors.TVTensor):
        return row
    wrapped: torch.Tensor = tv_tensors.wrap(row, like=batch)
    return wrapped


def _stack(items: list[Any], given: Any, number: int) -> Any:
    """The samples' outputs at one position, as the input came: a stacked tensor or a list."""
    if not isinstance(given, torch.Tensor):
        return items
    shapes = {tuple(item.shape) for item in items}
    if len(shapes) > 1:
        what = "images" if number == 0 else f"input {number}"
        raise ValueError(
            f"the torchvision transform gave {what} of different shapes {sorted(shapes)}: "
            "BatchAugment stacks them into a batch, so give the transform a fixed output "
            "size (RandomResizedCrop(size), Resize((h, w)), ...)"
        )
    tensors = [torch.as_tensor(item) for item in items]
    if tensors[0].shape == (1, *given.shape[1:]):  # a row came back as a 1-row tensor
        stacked = torch.cat(tensors)  # (BoundingBoxes keep two dimensions): rows again
    else:
        stacked = torch.stack(tensors)
    return like(stacked, items[0]) if isinstance(items[0], torch.Tensor) else stacked


@contextlib.contextmanager
def _recording(transform: Any) -> Iterator[Params]:
    """Within the block, every v2 transform in ``transform`` records the params it makes.

    The list yielded holds ``(transform type name, params)`` in the order they were made;
    the wrappers are instance attributes, removed on exit.
    """
    record: Params = []
    swaps = Swaps()
    try:
        for module in _transforms(transform):
            name = "make_params" if hasattr(type(module), "make_params") else "_get_params"
            original = getattr(module, name, None)
            if original is not None:
                swaps.set(module, name, _recorded(record, type(module).__name__, original))
        yield record
    finally:
        swaps.undo()


def _transforms(transform: Any) -> list[Any]:
    """``transform`` and every transform inside it, once each.

    v2's containers (``Compose``, ``RandomApply``, ``RandomChoice``, ``RandomOrder``) keep
    their transforms in a plain list, not as submodules, so ``modules()`` misses them.
    """
    found: dict[int, Any] = {}
    waiting = [transform]
    while waiting:
        module = waiting.pop()
        if id(module) in found or not isinstance(module, torch.nn.Module):
            continue
        found[id(module)] = module
        inner = getattr(module, "transforms", None)
        waiting += [*module.children(), *(inner if isinstance(inner, list | tuple) else ())]
    return list(found.values())


def _recorded(record: Params, name: str, make: Callable[..., dict[str, Any]]) -> Any:
    def make_params(flat_inputs: list[Any]) -> dict[str, Any]:
        params = make(flat_inputs)
        record.append((name, params))
        return params

    return make_params
