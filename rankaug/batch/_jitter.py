"""ColorJitter and ColorJiggle: their order of the four steps, keyed per sample.

Kornia draws one order for the whole batch (``torch.randperm(4)`` on the global
generator). Here each sample draws its own (the ranks of four keyed uniforms), and,
for an augmentation without a fixed ``order=``, the batch is applied one group of
samples with the same order at a time (at most 24 groups), each through kornia's own
``apply_transform``. The returned parameters then hold a ``(B, 4)`` ``order``: apply
them through :class:`~rankaug.BatchAugment` (``replay``), not plain kornia.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Final

import torch

from rankaug.batch._keys import DrawKeys

NAMES: Final = ("ColorJitterGenerator", "ColorJiggleGenerator")
ORDER: Final = 0xFE  # the sampler number of the order draw
_FACTORS: Final = ("brightness", "contrast", "hue", "saturation")


def is_jitter(aug: Any) -> bool:
    """Whether ``aug`` is a ColorJitter or ColorJiggle (by its parameter generator)."""
    return type(aug._param_generator).__name__ in NAMES


def random_order(aug: Any) -> bool:
    """Whether ``aug`` is a ColorJitter or ColorJiggle without a fixed ``order=``."""
    return is_jitter(aug) and getattr(aug, "_fixed_order", None) is None


def forward(
    generator: Any,
    keys: DrawKeys,
    number: int,
    calls: Iterator[int],
    batch_shape: tuple[int, ...],
    same_on_batch: bool = False,
) -> dict[str, torch.Tensor]:
    """The generator's draw, with a keyed ``(B, 4)`` order instead of its ``randperm``.

    ``calls`` counts the generator's draws within one drawing (an instance used twice
    draws a new order for each use; the first use's draw is ``(number, ORDER, 0)``).
    """
    size = torch.Size((batch_shape[0],))
    out = {
        f"{name}_factor": getattr(generator, f"{name}_sampler").rsample(size) for name in _FACTORS
    }
    device = out["brightness_factor"].device
    ranks = keys.uniform(
        torch.Size((size[0], 4)), (number, ORDER, next(calls)), device, torch.float32
    )
    out["order"] = ranks.argsort(dim=1, stable=True)
    return out


def grouped_apply(
    aug: Any,
    apply: Callable[..., torch.Tensor],
    input: torch.Tensor,
    params: dict[str, torch.Tensor],
    flags: dict[str, Any],
    transform: torch.Tensor | None = None,
) -> torch.Tensor:
    """``apply`` (kornia's ``apply_transform``) once per group of samples sharing an order."""
    order = params["order"]
    if order.dim() == 1:  # kornia's own one-order parameters
        return apply(input, params, flags, transform)
    orders, group = torch.unique(order, dim=0, return_inverse=True)
    if len(orders) <= 1:  # one order for all, or none (an empty batch: kornia's own output)
        row = orders[0] if len(orders) else torch.arange(order.shape[1], device=order.device)
        return apply(input, {**params, "order": row}, flags, transform)
    output: torch.Tensor | None = None
    for number, row in enumerate(orders):
        chosen = (group == number).nonzero().flatten()
        part = {
            name: (value[chosen] if name.endswith("_factor") or name == "batch_prob" else value)
            for name, value in params.items()
        }
        part["order"] = row
        result = apply(input[chosen], part, flags, None if transform is None else transform[chosen])
        if output is None:
            output = result.new_empty((input.shape[0], *result.shape[1:]))
        output[chosen] = result
    assert output is not None  # two groups or more
    return output
