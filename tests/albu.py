"""albumentations helpers for the tests that run against both albumentations 2.0.x and
its successor AlbumentationsX (same import name), whose ``BboxParams`` and
``KeypointParams`` renamed ``format`` to ``coord_format``."""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import albumentations as A


def _format_arg(params: type) -> str:
    return "coord_format" if "coord_format" in inspect.signature(params).parameters else "format"


def bbox_params(box_format: str, label_fields: Sequence[str] = ("labels",)) -> A.BboxParams:
    """``A.BboxParams`` for either release."""
    return A.BboxParams(**{_format_arg(A.BboxParams): box_format}, label_fields=list(label_fields))


def keypoint_params(keypoint_format: str, label_fields: Sequence[str] = ()) -> A.KeypointParams:
    """``A.KeypointParams`` for either release."""
    return A.KeypointParams(
        **{_format_arg(A.KeypointParams): keypoint_format}, label_fields=list(label_fields)
    )
