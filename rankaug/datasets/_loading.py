"""How a folder dataset loads an image: settings that can be assigned, checked when set.

:class:`~rankaug.datasets.YoloFolder` and :class:`~rankaug.datasets.CocoDetection` read
their labels once, when they are made, but load each image on access: ``image_size``,
``reduced_decode``, ``interpolation``, ``as_tuple`` and ``tensors`` may be assigned
afterwards and take effect at the next access. Each is checked when set, by the
constructor or afterwards alike (``ds.image_size = "x"`` used to fail at the next
access with a bare ``TypeError``, and ``ds.interpolation = "cubic"`` was accepted).

A subclass may set one before calling the constructor (``self.image_size = 640``), to
the value it gives the constructor, which sets each again: set to another value, it
would be replaced without a word, and the constructor refuses it
(:meth:`LoadSettings.set_loading`). ``as_tuple`` and ``tensors`` set then are checked
together with ``box_format`` by the constructor.
"""

from __future__ import annotations

from typing import Final

from rankaug import checks
from rankaug._fixed import _same, _set_before
from rankaug.boxes import BoxFormat
from rankaug.datasets._image_io import INTERPOLATIONS, Interpolation
from rankaug.datasets._sample import check_output_options

__all__ = ["LoadSettings"]

_UNSET: Final = object()
_OUTPUT: Final = frozenset({"box_format", "_as_tuple", "_tensors"})


class LoadSettings:
    """The assignable settings of how an image is loaded (see the module).

    A subclass's constructor sets them all with :meth:`set_loading`, ``box_format``
    first.
    """

    box_format: BoxFormat
    _image_size: int | None
    _reduced_decode: bool
    _interpolation: Interpolation
    _as_tuple: bool
    _tensors: bool

    def set_loading(
        self,
        box_format: object,
        as_tuple: object,
        tensors: object,
        image_size: object,
        reduced_decode: object,
        interpolation: object,
    ) -> None:
        """Set ``box_format`` and how an image is loaded, as the constructor does.

        Raises:
            TypeError: If a value has the wrong type.
            ValueError: If ``box_format`` is unknown or the combination is contradictory
                (see :func:`~rankaug.datasets._sample.check_output_options`).
            AttributeError: If one was set before (by a subclass, before calling the
                constructor) to another value.
        """
        held = {name: self._held(name) for name in ("as_tuple", "tensors")}
        self.box_format, self._as_tuple, self._tensors = check_output_options(
            box_format, as_tuple, tensors
        )
        for name, value in held.items():
            self._check_held(name, value)
        self.set_by_constructor("image_size", image_size)
        self.set_by_constructor("reduced_decode", reduced_decode)
        self.set_by_constructor("interpolation", interpolation)

    def set_by_constructor(self, name: str, value: object) -> None:
        """``setattr(self, name, value)``, refused if set before to another value.

        Raises:
            AttributeError: If ``name`` was set before (by a subclass, before calling the
                constructor) to another value than ``value`` makes.
        """
        held = self._held(name)
        setattr(self, name, value)
        self._check_held(name, held)

    def _held(self, name: str) -> object:
        """The value of ``name`` set before, or ``_UNSET``."""
        return getattr(self, name) if f"_{name}" in self.__dict__ else _UNSET

    def _output_set(self) -> bool:
        """Whether ``box_format``, ``as_tuple`` and ``tensors`` are set, checked together.

        Not yet where a subclass sets one before calling the constructor, which checks them.
        """
        return self.__dict__.keys() >= _OUTPUT

    def _check_held(self, name: str, held: object) -> None:
        value = getattr(self, name)
        if held is not _UNSET and not _same(held, value):
            raise _set_before(self, name, held, value, assignable=True)

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
        if not self._output_set():
            self._as_tuple = checks.boolean(as_tuple, "as_tuple")
            return
        _, self._as_tuple, _ = check_output_options(self.box_format, as_tuple, self._tensors)

    @property
    def tensors(self) -> bool:
        """Whether pairs hold torch tensors (with ``as_tuple``)."""
        return self._tensors

    @tensors.setter
    def tensors(self, tensors: bool) -> None:
        if not self._output_set():
            self._tensors = checks.boolean(tensors, "tensors")
            return
        _, _, self._tensors = check_output_options(self.box_format, self._as_tuple, tensors)
