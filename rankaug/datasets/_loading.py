"""How a folder dataset loads an image: settings that can be assigned, checked when set.

:class:`~rankaug.datasets.YoloFolder` and :class:`~rankaug.datasets.CocoDetection` read
their labels once, when they are made, but load each image on access: ``image_size``,
``reduced_decode``, ``interpolation``, ``as_tuple`` and ``tensors`` may be assigned
afterwards and take effect at the next access. Each is checked when set, by the
constructor or afterwards alike (``ds.image_size = "x"`` used to fail at the next
access with a bare ``TypeError``, and ``ds.interpolation = "cubic"`` was accepted).
"""

from __future__ import annotations

from rankaug import checks
from rankaug.boxes import BoxFormat
from rankaug.datasets._image_io import INTERPOLATIONS, Interpolation
from rankaug.datasets._sample import check_output_options

__all__ = ["LoadSettings"]


class LoadSettings:
    """The assignable settings of how an image is loaded (see the module).

    A subclass sets ``box_format`` first (with :meth:`set_output`), then the others.
    """

    box_format: BoxFormat
    _image_size: int | None
    _reduced_decode: bool
    _interpolation: Interpolation
    _as_tuple: bool
    _tensors: bool

    def set_output(self, box_format: object, as_tuple: object, tensors: object) -> None:
        """Set ``box_format``, ``as_tuple`` and ``tensors``, checked together.

        Raises:
            TypeError: If a value has the wrong type.
            ValueError: If ``box_format`` is unknown or the combination is contradictory
                (see :func:`~rankaug.datasets._sample.check_output_options`).
        """
        self.box_format, self._as_tuple, self._tensors = check_output_options(
            box_format, as_tuple, tensors
        )

    @property
    def image_size(self) -> int | None:
        """The long side images are resized to on load (``None``: their own size)."""
        return self._image_size

    @image_size.setter
    def image_size(self, image_size: int | None) -> None:
        self._image_size = (
            None if image_size is None else checks.integer(image_size, "image_size", low=1)
        )

    @property
    def reduced_decode(self) -> bool:
        """Whether the JPEG decoder may shrink by 2, 4 or 8 (with ``image_size``)."""
        return self._reduced_decode

    @reduced_decode.setter
    def reduced_decode(self, reduced_decode: bool) -> None:
        self._reduced_decode = checks.boolean(reduced_decode, "reduced_decode")

    @property
    def interpolation(self) -> Interpolation:
        """The final resize's interpolation, ``"auto"`` or ``"linear"``."""
        return self._interpolation

    @interpolation.setter
    def interpolation(self, interpolation: Interpolation) -> None:
        self._interpolation = checks.choice(interpolation, "interpolation", INTERPOLATIONS)

    @property
    def as_tuple(self) -> bool:
        """Whether samples are torchvision-style ``(image, target)`` pairs."""
        return self._as_tuple

    @as_tuple.setter
    def as_tuple(self, as_tuple: bool) -> None:
        _, self._as_tuple, _ = check_output_options(self.box_format, as_tuple, self._tensors)

    @property
    def tensors(self) -> bool:
        """Whether pairs hold torch tensors (with ``as_tuple``)."""
        return self._tensors

    @tensors.setter
    def tensors(self, tensors: bool) -> None:
        _, _, self._tensors = check_output_options(self.box_format, self._as_tuple, tensors)
