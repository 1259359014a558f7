"""Why a multi-sample wrapper's part disagrees with the main one: the error raised.

:meth:`rankaug._multi.parts.PartReader.check` finds that a part's signature differs
from the main part's; :func:`refuse_disagreement` names what differs (channels and
dtype, mask dtypes and channels, which targets, boxes on one side only) and raises it;
a part without boxes beside a main part without any passes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rankaug._multi.parts import Part

__all__ = ["refuse_disagreement"]


def refuse_disagreement(part: Part, main: Part, group: str) -> None:
    """Raise the error that says how ``part`` disagrees with the ``main`` part.

    A part without boxes beside a main part without boxes loses nothing: it passes.

    ``group``: what the wrapper's samples are called in it (``"mosaic tiles"``, say).
    """
    name, main_name = f"dataset[{part.index}]", f"the main image dataset[{main.index}]"
    image, reference = part.image, main.image
    if image.shape[2:] != reference.shape[2:] or image.dtype != reference.dtype:
        raise ValueError(
            f"{name} image has shape {image.shape} and dtype {image.dtype}, but "
            f"{main_name} has {reference.shape} and {reference.dtype}: {group} "
            "need the same channels and dtype"
        )
    for kind in ("mask", "masks"):
        ours, theirs = getattr(part, kind), getattr(main, kind)
        if ours is not None and theirs is not None and ours.dtype != theirs.dtype:
            raise ValueError(
                f"{name} {kind} has dtype {ours.dtype}, but {main_name}'s has "
                f"{theirs.dtype}: {group} need the same {kind} dtype (a "
                f"{theirs.dtype} output cannot hold every value of another dtype)"
            )
        if ours is not None and theirs is not None and ours.shape[2:] != theirs.shape[2:]:
            raise ValueError(
                f"{name} {kind} has shape {ours.shape}, but {main_name}'s has "
                f"{theirs.shape}: {group} need {kind} of the same channels"
            )
    ours, theirs = part.keypoints, main.keypoints
    if ours is not None and theirs is not None and ours.shape[1] != theirs.shape[1]:
        raise ValueError(
            f"{name} keypoints has shape {ours.shape}, but {main_name}'s has "
            f"{theirs.shape}: {group} need keypoints of the same columns (x, y and "
            "the same extras, a visibility say)"
        )
    if part.signature()[:-1] != main.signature()[:-1]:
        raise ValueError(
            f"{name} and dataset[{main.index}] disagree on having a mask, instance masks, "
            f"keypoints or instance polygons: {group} need the same targets"
        )
    if not main.boxed and not len(part.boxes):
        return  # no boxes anywhere: nothing is lost
    background = (
        "give a background image empty boxes (np.zeros((0, 4)), with empty label fields); "
        "torchvision's wrap_dataset_for_transforms_v2(CocoDetection(...)) gives an image "
        "without annotations the target {'image_id': ...} alone: leave such images out "
        "(torchvision's detection references do) or give their targets empty 'boxes' and "
        "'labels'"
    )
    if main.boxed:
        raise ValueError(
            f"{name} has no boxes, but {main_name} has: {group} need the same "
            f"targets (its objects would show unlabelled); {background}"
        )
    raise ValueError(
        f"{name} has {len(part.boxes)} boxes, but {main_name} has no boxes: "
        f"{group} need the same targets (the boxes would be dropped while their "
        f"objects show); {background}"
    )
