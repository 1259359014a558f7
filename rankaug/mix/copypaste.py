"""``CopyPasteDataset``: instances of a keyed partner pasted onto each sample, by their masks.

For samples with instance masks (``masks``, one per box). The draws: after
:mod:`rankaug.mix.base`'s block ``u = rng.random(2)`` (``u[0] < p`` pastes, ``u[1]``
draws the partner), a sample that is pasted draws ``rng.random(M)`` for the ``M``
instances of its source, and instance ``k`` is pasted when its uniform is below
``fraction`` (and its mask is not empty).

* **Source**: ``"partner"`` takes the instances of the keyed partner, ``"flip"`` those of
  the sample itself mirrored left to right (ultralytics' ``"flip"`` mode).
* **Pixels**: each pasted instance's mask pixels take the source's pixels, in the
  source's order (later instances on top).
* **Targets**: pasted instances bring their boxes, label fields and masks (after the
  main sample's). An instance that something pasted above it covers keeps the pixels
  that still show: it is dropped when less than ``min_visibility`` of its mask pixels
  (or none) stay visible; otherwise its mask loses the covered pixels and its box
  becomes the tight box around what is left. Untouched instances keep their boxes.
  The semantic mask takes the source's values under the pasted pixels; keypoints are
  the main sample's.
* **Record** (under ``"copypaste"``, :class:`CopyPasteRecord`): the indices (the main,
  then the source: the main itself for ``"flip"``), the source, the instances pasted,
  the main sample's instances dropped and the pasted ones hidden by later ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final, Literal, TypedDict, TypeVar

import numpy as np

from rankaug import checks
from rankaug.boxes import BoxFormat
from rankaug.keys import Keying
from rankaug.mix.base import Combined, PairDataset, PairPlan
from rankaug.mix.config import PartnerFit
from rankaug.mix.parts import Part
from rankaug.samples import SampleAdapter

__all__ = ["CopyPasteDataset", "CopyPasteRecord", "CopySource", "tight_box"]

T_co = TypeVar("T_co", covariant=True)
CopySource = Literal["partner", "flip"]
_SOURCES: Final[tuple[CopySource, ...]] = ("partner", "flip")


class CopyPasteRecord(TypedDict):
    """What a copy-paste applied, stored under ``record`` in each output sample.

    ``indices`` holds the main index and, when pasted, the source's (the main index
    for ``"flip"``); ``pasted`` the source's instances pasted, bottom first;
    ``dropped`` the main sample's instances dropped; ``hidden`` the pasted instances
    dropped because later ones cover them. ``state`` is the Generator state before the
    draws, for :meth:`CopyPasteDataset.replay`.
    """

    applied: bool
    indices: list[int]
    source: CopySource
    pasted: list[int]
    dropped: list[int]
    hidden: list[int]
    epoch: int
    state: str


def tight_box(mask: np.ndarray) -> list[float]:
    """The tight pixel ``xyxy`` box around a non-empty mask's pixels.

    >>> tight_box(np.array([[0, 0, 0], [0, 1, 1]]))
    [1.0, 1.0, 3.0, 2.0]
    """
    rows = np.flatnonzero(mask.any(axis=1))
    cols = np.flatnonzero(mask.any(axis=0))
    return [float(cols[0]), float(rows[0]), float(cols[-1] + 1), float(rows[-1] + 1)]


class CopyPasteDataset(PairDataset[T_co]):
    """Rank-aware copy-paste for instance segmentation: partner and instances from the key.

    On four GPUs that all called ``torch.manual_seed(0)`` each rank pastes the instances
    of different partners (ultralytics' ``CopyPaste`` draws its partner from global
    state), and a rerun repeats them bit for bit. See the module docstring for the
    source, pixels, targets and record. Samples are dicts or ``(image, target)`` pairs
    with ``masks`` ``(N, H, W)`` beside their ``N`` boxes; images as
    :class:`~rankaug.mix.MixUpDataset`.

    Args:
        dataset: A map-style dataset of samples with instance masks.
        seed: The run's base seed, ``0 <= seed < 2**64``.
        p: The probability that a sample gets instances pasted, or a function of the
            epoch returning it (picklable, for spawned workers). Defaults to ``0.5``.
        source: ``"partner"`` or ``"flip"`` (the sample itself mirrored). Defaults to
            ``"partner"``.
        fraction: The probability that each instance of the source is pasted.
            Defaults to ``1.0``.
        min_visibility: The fraction of an instance's mask pixels that must stay
            visible for it to be kept. Defaults to ``0.3``.
        box_format: The samples' box format (also the output's). Defaults to
            ``"pascal_voc"``.
        label_fields: Per-box fields kept aligned with the boxes. Defaults to
            ``("labels",)``.
        keypoint_fields: Per-keypoint fields kept aligned with the keypoints.
            Defaults to ``()``.
        partner_fit: ``"error"`` refuses a partner of another size; ``"letterbox"``
            scales it to fit the main image and centres it. Defaults to ``"error"``.
        fill: The letterbox's fill, a number or one per channel. Defaults to ``114``.
        fill_mask: The letterboxed semantic mask's fill. Defaults to ``0``.
        pool: The distinct indices partners are drawn from; ``None`` means the whole
            dataset. Defaults to ``None``.
        weights: Sampling weights for partners, one per pool entry (or per item
            without a pool). Defaults to ``None``.
        record: The key of the :class:`CopyPasteRecord`; ``None`` records nothing.
            Defaults to ``"copypaste"``.
        keying: ``"stream"``, ``"sample"`` or ``"sample_rank"``. Defaults to ``"stream"``.
        rank: The rank; ``None`` resolves it. Defaults to ``None``.
        stream: The key's stream word or name; ``None`` derives one. Defaults to ``None``.
        adapter: Converts samples; ``None`` uses :class:`~rankaug.samples.DefaultAdapter`.
            Defaults to ``None``.

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If an argument has a wrong value, or the dataset is empty.

    Example:
        >>> import numpy as np
        >>> masks = np.zeros((1, 8, 8), np.uint8)
        >>> masks[0, 1:3, 1:3] = 1
        >>> data = [{"image": np.full((8, 8), 10 * i, np.uint8), "masks": masks,
        ...          "bboxes": np.array([[1.0, 1.0, 3.0, 3.0]]), "labels": np.array([i])}
        ...         for i in range(1, 4)]
        >>> pasted = CopyPasteDataset(data, seed=0, p=1.0, source="flip")[0]
        >>> pasted["bboxes"].tolist(), pasted["labels"].tolist()
        ([[1.0, 1.0, 3.0, 3.0], [5.0, 1.0, 7.0, 3.0]], [1, 1])
    """

    kind = "copypaste"

    def __init__(
        self,
        dataset: Any,
        *,
        seed: int,
        p: float | Callable[[int], float] = 0.5,
        source: CopySource = "partner",
        fraction: float = 1.0,
        min_visibility: float = 0.3,
        box_format: BoxFormat = "pascal_voc",
        label_fields: Sequence[str] = ("labels",),
        keypoint_fields: Sequence[str] = (),
        partner_fit: PartnerFit = "error",
        fill: float | Sequence[float] = 114,
        fill_mask: int = 0,
        pool: Sequence[int] | None = None,
        weights: Sequence[float] | None = None,
        record: str | None = "copypaste",
        keying: Keying = "stream",
        rank: int | None = None,
        stream: int | str | None = None,
        adapter: SampleAdapter | None = None,
    ) -> None:
        self.source: CopySource = checks.choice(source, "source", _SOURCES)
        self.fraction = checks.probability(fraction, "fraction")
        self.min_visibility = checks.probability(min_visibility, "min_visibility")
        super().__init__(
            dataset, seed=seed, p=p, box_format=box_format, label_fields=label_fields,
            keypoint_fields=keypoint_fields, partner_fit=partner_fit, fill=fill,
            fill_mask=fill_mask, pool=pool, weights=weights, record=record, keying=keying,
            rank=rank, stream=stream, adapter=adapter,
        )  # fmt: skip

    def uses_partner(self, plan: PairPlan) -> bool:
        """``False`` for ``source="flip"``: the instances come from the sample itself."""
        return self.source == "partner"

    def check(self, main: Part) -> None:
        """Refuse a sample without instance masks (every sample, pasted or not).

        Raises:
            ValueError: If the sample has no ``masks``.
        """
        if main.masks is None:
            raise ValueError(
                f"dataset[{main.index}] has no instance masks ('masks', one per box): "
                "CopyPaste pastes instances by their masks"
            )

    def combine(
        self, main: Part, partner: Part, plan: PairPlan, rng: np.random.Generator
    ) -> Combined:
        """Paste the chosen instances; drop or trim what they cover (module docstring)."""
        source = partner.flipped() if self.source == "flip" else partner
        main_masks, masks = main.masks, source.masks
        assert main_masks is not None
        assert masks is not None
        chosen = rng.random(len(masks)) < self.fraction
        picked = [k for k in np.flatnonzero(chosen).tolist() if masks[k].any()]
        hw = main.hw
        above = np.zeros(hw, dtype=bool)  # what is pasted above the layer at hand
        layers: list[tuple[int, np.ndarray, list[float]]] = []
        hidden = []
        for k in reversed(picked):  # top first
            shape = masks[k] != 0
            shown, total = shape & ~above, int(np.count_nonzero(shape))
            visible = int(np.count_nonzero(shown)) if above.any() else total
            above |= shape
            if visible == total:
                layers.append((k, masks[k].copy(), source.boxes[k].tolist()))
            elif visible and visible >= self.min_visibility * total:
                layers.append((k, np.where(shown, masks[k], 0), tight_box(shown)))
            else:
                hidden.append(k)
        layers.reverse()
        image = main.image.copy()
        np.copyto(image, source.image, where=above if image.ndim == 2 else above[..., None])
        kept, dropped, boxes, out_masks = [], [], [], []
        for i in range(len(main_masks)):
            shape = main_masks[i] != 0
            covered = int(np.count_nonzero(shape & above))
            if not covered:
                kept.append(i)
                boxes.append(main.boxes[i].tolist())
                out_masks.append(main_masks[i])
                continue
            total = int(np.count_nonzero(shape))
            if total - covered and total - covered >= self.min_visibility * total:
                kept.append(i)
                boxes.append(tight_box(shape & ~above))
                out_masks.append(np.where(above, 0, main_masks[i]))
            else:
                dropped.append(i)
        order = [k for k, _, _ in layers]
        boxes.extend(box for _, _, box in layers)
        out_masks.extend(mask for _, mask, _ in layers)
        mask = main.mask
        if mask is not None and source.mask is not None:
            mask = mask.copy()
            np.copyto(mask, source.mask, where=above if mask.ndim == 2 else above[..., None])
        out = Part(
            main.index,
            image,
            np.array(boxes, dtype=np.float64).reshape(-1, 4),
            {k: np.concatenate((v[kept], source.fields[k][order])) for k, v in main.fields.items()},
            mask,
            np.stack(out_masks) if out_masks else np.zeros((0, *hw), main_masks.dtype),
            None if main.keypoints is None else main.keypoints.copy(),
            {k: v.copy() for k, v in main.keypoint_fields.items()},
            main.label,
        )
        details = {"source": self.source, "pasted": picked, "dropped": dropped,
                   "hidden": sorted(hidden)}  # fmt: skip
        return Combined(out, 1.0, details)

    def unmixed(self, main: Part) -> dict[str, Any]:
        """Nothing pasted, nothing dropped."""
        return {"source": self.source, "pasted": [], "dropped": [], "hidden": []}
