"""Argument checks: one home for every rule, one wording, one choice of error type.

Every public constructor and function in rankaug checks its arguments here. A value of
the wrong *type* raises :class:`TypeError`, a value of the right type but out of range
raises :class:`ValueError`, and both messages read the same way::

    <name> must be <what was expected>, got <the value> [of type <its type>]

Booleans are never taken for numbers (``True`` is rarely meant as 1), numpy scalars
are taken as the Python numbers they hold, and nothing is silently converted: a float
where an integer is expected is refused rather than truncated.

>>> uint(7, "rank", 32)
7
>>> integer(True, "grid")
Traceback (most recent call last):
...
TypeError: grid must be an integer, got True of type bool
>>> real_range((0.5, 0.25), "center_range", low=0.0, high=1.0)
Traceback (most recent call last):
...
ValueError: center_range must be a (low, high) pair with 0.0 <= low <= high <= 1.0, got (0.5, 0.25)
"""

from __future__ import annotations

from rankaug.checks.callables import CALLS, named, rng_call
from rankaug.checks.containers import (
    choice,
    folder,
    function,
    generator,
    instance,
    key_name,
    key_path,
    map_dataset,
    mapping,
    names,
    path,
    sequence,
)
from rankaug.checks.images import (
    IMAGE_DTYPES,
    MAX_CHANNELS,
    YOLO_FILL,
    colour_image,
    fill_fits,
    fill_setting,
    fill_values,
    fills_fit,
    image_layout,
    mask_covers,
    opencv_dtype,
    out_array,
)
from rankaug.checks.indices import (
    index,
    index_array,
    index_tuple,
    per_sample,
    weight_tuple,
    weights,
)
from rankaug.checks.numbers import (
    boolean,
    int_choice,
    int_pair,
    integer,
    probability,
    real,
    real_range,
    schedule,
    scheduled,
    stream,
    uint,
)
from rankaug.checks.rows import finite_points, finite_rows, point_rows, row_error

__all__ = [
    "CALLS",
    "IMAGE_DTYPES",
    "MAX_CHANNELS",
    "YOLO_FILL",
    "boolean",
    "choice",
    "colour_image",
    "fill_fits",
    "fill_setting",
    "fill_values",
    "finite_points",
    "finite_rows",
    "fills_fit",
    "folder",
    "function",
    "generator",
    "image_layout",
    "index",
    "index_array",
    "index_tuple",
    "instance",
    "int_choice",
    "int_pair",
    "integer",
    "key_name",
    "key_path",
    "map_dataset",
    "mask_covers",
    "opencv_dtype",
    "mapping",
    "named",
    "names",
    "out_array",
    "path",
    "per_sample",
    "point_rows",
    "probability",
    "real",
    "real_range",
    "rng_call",
    "row_error",
    "schedule",
    "scheduled",
    "sequence",
    "stream",
    "uint",
    "weight_tuple",
    "weights",
]
