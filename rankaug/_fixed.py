"""Settings an object fixes when it is made: assigning one afterwards is refused.

A wrapper (or a dataset) derives what it does from some of its arguments once, when it
is made: the key's template from ``seed``, ``keying`` and ``stream``, the partner
sampler from the dataset's length, the records' ``settings`` from its configuration, a
folder's file list and labels from its ``root`` and ``tolerance``. Assigning such an
attribute afterwards changed the attribute and nothing else, so the object went on
with the old value (or, for some, used the new one in part of its work only) without
a word. :class:`FixedSettings` refuses the assignment (and ``del``) with an
``AttributeError`` naming the attribute and what to do instead; a class lists its own in
``fixed_settings``, and in ``arguments_only`` the arguments kept in its configuration
and not as attributes (``mosaic.p = 0.0`` made an attribute nothing read); so are the
deprecated flat keywords, the fields of its ``parameter_objects`` (``mosaic.fill = 0``:
``fill`` is ``MosaicGrid``'s), with a message naming the new spelling. Settings that can
take effect afterwards (``transform``, ``adapter``) are properties that do so.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import numbers
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from types import FrameType
from typing import Any, ClassVar, Final, cast

import torch

from rankaug.shared_epoch import SharedEpoch, shared_slot

__all__ = ["Changes", "FixedSettings", "check_set_before", "own_count"]


class FixedSettings:
    """Refuse assigning or deleting ``fixed_settings`` once they are set (see the module)."""

    fixed_settings: ClassVar[frozenset[str]] = frozenset()
    """The attributes set once, when the wrapper is made."""
    arguments_only: ClassVar[frozenset[str]] = frozenset()
    """Arguments checked into the configuration, never attributes: assigning one (which
    would make an attribute nothing reads, ``mosaic.p = 0.0``) is refused too."""

    arguments_kept_in: ClassVar[str] = "config"
    """Where the constructor keeps the ``arguments_only`` (for the message)."""

    parameter_objects: ClassVar[Mapping[str, type]] = {}
    """The parameter objects the constructor takes, by keyword (``layout``: a
    ``MosaicGrid``). Their fields but the constructor's own arguments are its deprecated
    flat keywords (:func:`rankaug.params.take`): assigning one, which would make an
    attribute nothing reads (``mosaic.fill = 0``), is refused too, but by a method of a
    subclass of yours, whose own attribute it is (:func:`_subclass_own`)."""

    shown_as: ClassVar[str] = ""
    """The class's name in the messages (empty: its own; a private subclass's public one)."""

    made_with: ClassVar[str] = ""
    """An attribute the constructor sets after every fixed setting it sets: until it is
    set, one of those may be set again to the value it holds (a subclass that sets it
    before calling the constructor, which sets it again), or to one made from that value
    (see :func:`_same`), or by a constructor given that value as its argument of that name
    (:func:`_given`: ``self.image_size = 16`` before ``SyntheticDetection``'s, which keeps
    ``(16, 16)``). Empty: refused once set."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self.fixed_settings and name in self.__dict__:
            made = not self.made_with or self.made_with in self.__dict__
            if made:
                raise _refused(self, name)
            check_set_before(self, name, self.__dict__[name], value)
        if name[:1] != "_" and name not in self.fixed_settings:
            spelled = _flat_keywords(self._keywords_of()).get(name)
            if spelled is not None and not _subclass_own(self, _assigner(self)):
                raise _flat(self, name, spelled)
        if name in self.arguments_only:
            raise _argument(self, name)
        object.__setattr__(self, name, value)

    def _keywords_of(self) -> type:
        """The class whose constructor takes this one's keywords (a stream's map-style class)."""
        return type(self)

    def __delattr__(self, name: str) -> None:
        if name in self.fixed_settings:
            raise _refused(self, name, "deleted")
        object.__delattr__(self, name)


def _shown(owner: object) -> str:
    """The name of ``owner``'s class in the messages (see ``FixedSettings.shown_as``)."""
    return getattr(owner, "shown_as", "") or type(owner).__name__


def _same(held: Any, value: Any) -> bool:
    """Whether ``value`` is the setting held, or the setting the constructor made of it.

    The same object, an equal number or string, an equal tuple or dataclass of the same
    type (a mosaic's ``config`` built again, a folder's ``extensions``), a list and a list
    or tuple of equal items (``[".png"]``, kept as ``(".png",)``), one path however
    spelled (a folder's ``root`` given as ``"data"``, kept resolved), or a value whose
    ``made_from(held)`` says it was made from the one held (a partner sampler from the
    ``Partners`` it was given).

    >>> _same("data", Path("data").resolve()), _same((".png",), (".png",)), _same("a", "./a")
    (True, True, False)
    >>> _same([".png"], [".png"]), _same([".png"], (".png",)), _same([16, 16], [16])
    (True, True, False)
    """
    if held is value:
        return True
    made_from = getattr(type(value), "made_from", None)
    try:
        if made_from is not None and made_from(value, held):
            return True
        alike = type(held) is type(value)
        if alike and (dataclasses.is_dataclass(held) or isinstance(held, tuple | frozenset)):
            return bool(held == value)
        if {type(held), type(value)} <= {list, tuple}:  # a sequence given, kept as a tuple
            return bool(list(held) == list(value))
        if isinstance(held, os.PathLike) or isinstance(value, os.PathLike):
            return _one_path(held, value)
        return isinstance(held, numbers.Number | str) and bool(held == value)
    except Exception:  # an array's ==, say: not the same setting
        return False


def check_set_before(
    owner: object, name: str, held: Any, value: Any, *, assignable: bool = False
) -> None:
    """Refuse ``value`` for a setting ``name`` that was set to ``held`` before the constructor.

    The rule of :class:`FixedSettings` (see ``made_with``) for a setting a subclass set
    before calling the constructor, which now sets it to ``value``: allowed when
    ``value`` is ``held`` or made from it (:func:`_same`), or when the constructor was
    given ``held`` as its argument ``name`` (:func:`_given`); else the constructor would
    replace the value set without a word. Call it from the code that sets the setting
    (``__setattr__``, a descriptor's ``__set__``).

    Raises:
        AttributeError: Naming both values (``assignable``: a setting that may be
            assigned after the constructor instead, see :func:`_set_before`).
    """
    if not _same(held, value) and not _given(owner, held, name, _assigner(owner)):
        raise _set_before(owner, name, held, value, assignable=assignable)


def _assigner(owner: object) -> FrameType:
    """The frame of the code assigning to ``owner``: the caller of ``FixedSettings.__setattr__``.

    Above the ``__setattr__`` of ``owner``'s classes that
    go on to this one (``RandomAugmentWrapper``'s, a subclass's of yours) and a
    descriptor's ``__set__`` (:class:`~rankaug.context.RankSetting`'s, given ``owner``):
    their own frame names the attribute and value (``name``, ``value``), not the
    constructor's arguments nor the method assigning.
    """
    frame = sys._getframe(2)
    while frame.f_back is not None and (
        (frame.f_code.co_name == "__setattr__" and frame.f_locals.get("self") is owner)
        or (frame.f_code.co_name == "__set__" and frame.f_locals.get("owner") is owner)
    ):
        frame = frame.f_back
    return frame


def _given(owner: object, held: Any, name: str, frame: FrameType) -> bool:
    """Whether the constructor setting ``name`` of ``owner`` was given ``held`` as its ``name``.

    Its argument of that name, as it holds it now (:func:`_same`): the constructor makes
    its setting from it, so a subclass that set ``held`` before calling it set what it
    gave it (``self.extensions = [".png"]``, which ``YoloFolder`` keeps as a tuple). The
    constructor is ``frame``, the one assigning, or else the nearest rankaug constructor
    of ``owner`` that called it and takes ``name``: a streaming wrapper's base sets
    ``stream`` from its map-style wrapper's, made from the ``stream=`` its own constructor
    was given. Never a subclass's of yours above: the one that set ``held``, from an
    argument of its own of that name, calls it.
    """
    here: FrameType | None = frame
    while here is not None and here.f_locals.get("self") is owner:
        code = here.f_code
        if name in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]:
            given = here.f_locals.get(name, _DELETED)
            return given is not _DELETED and _same(held, given)
        here = here.f_back
        if here is not None and not here.f_code.co_filename.startswith(_PACKAGE):
            break
    return False


_DELETED: Final = object()  # an argument the constructor deleted


def _one_path(held: Any, value: Any) -> bool:
    """Whether ``held`` and ``value``, one of them a path object, name one path.

    Spelled alike, or alike once resolved (absolute, links followed). Two strings are
    never paths here: a stream's name ``"a"`` is not ``"./a"``.
    """
    if not all(isinstance(v, str | os.PathLike) for v in (held, value)):
        return False
    return Path(held) == Path(value) or Path(held).resolve() == Path(value).resolve()


def _refused(owner: object, name: str, verb: str = "assigned") -> AttributeError:
    kind = _shown(owner)
    if _is_argument(type(owner), name):
        advice = f"make a new {kind} with the {name} you want"
    else:  # made from the arguments (a mosaic's config, a folder's image_paths)
        advice = f"make a new {kind} with the arguments that give the {name} you want"
    return AttributeError(
        f"{kind}.{name} cannot be {verb}: it is fixed when the {kind} is made (the "
        f"{kind} derived what it does from it then, and would go on with the old value); " + advice
    )


def _set_before(
    owner: object, name: str, held: Any, value: Any, *, assignable: bool = False
) -> AttributeError:
    """The error of a setting set before the constructor to another value than it sets.

    Both are named: ``held``, set before, and ``value``, the constructor's (reprs cut).
    An ``assignable`` setting (how a folder dataset loads an image) may be assigned after
    the constructor instead.
    """
    kind = _shown(owner)
    instead = (
        f"give the constructor {name}={_short(held)}, or assign it after the constructor "
        "(it is put to use then)"
        if assignable
        else "set it to what the constructor is given (or leave it to the constructor), "
        "or keep your own value under another attribute name"
    )
    return AttributeError(
        f"{kind}.{name} cannot be assigned: it was set before the constructor, which sets "
        f"{name} itself, to another value (set: {_short(held)}; the constructor's: "
        f"{_short(value)}): {kind} would go on with the constructor's, not the one "
        f"set; {instead}"
    )


def _short(value: Any) -> str:
    """``repr(value)``, cut to 160 characters."""
    text = repr(value)
    return text if len(text) <= 160 else text[:157] + "..."


def _is_argument(kind: type, name: str) -> bool:
    """Whether a constructor of ``kind`` (its own or a base's) takes ``name``."""
    for base in kind.__mro__:
        made = vars(base).get("__init__")
        if made is not None and name in inspect.signature(made).parameters:
            return True
    return False


def _argument(owner: object, name: str) -> AttributeError:
    kind = _shown(owner)
    hint = " (p= also takes a function of the epoch)" if name == "p" else ""
    return AttributeError(
        f"{kind}.{name} cannot be assigned: {name} is an argument of {kind}, checked into "
        f"its {getattr(owner, 'arguments_kept_in', 'config')} when it is made, and an "
        "attribute of that name would not be read; "
        f"make a new {kind} with the {name} you want{hint}"
    )


@functools.cache
def _flat_keywords(owner: type) -> dict[str, str]:
    """The deprecated flat keywords ``owner`` takes, by name: the new spelling of each.

    The fields of ``owner.parameter_objects`` (the one list of them) that are not
    arguments of its constructor (``CopyPasteDataset(min_visibility=)`` is its own).
    """
    spelled: dict[str, str] = {}
    for keyword, made in getattr(owner, "parameter_objects", {}).items():
        for field in dataclasses.fields(cast(Any, made)):
            if not _is_argument(owner, field.name):
                new = f"{keyword}=rankaug.{made.__name__}({field.name}=...)"
                spelled.setdefault(field.name, new)
    return spelled


_PACKAGE = os.path.join(os.path.dirname(__file__), "")


def _subclass_own(owner: object, frame: FrameType) -> bool:
    """Whether ``frame``, which assigns to ``owner``, is a method of a subclass of yours.

    Such a class owns its attribute names (a mix's subclass may keep ``self.weights``);
    ``mosaic.fill = 0`` from anywhere else is the deprecated keyword assigned.
    """
    return frame.f_locals.get("self") is owner and not frame.f_code.co_filename.startswith(_PACKAGE)


def _flat(owner: object, name: str, spelled: str) -> AttributeError:
    kind = _shown(owner)
    return AttributeError(
        f"{kind}.{name} cannot be assigned: {name}= is a deprecated spelling of {spelled}, "
        f"checked into the config when the {kind} is made, and an attribute of that name "
        f"would not be read; make a new {kind} with {spelled}"
    )


class Changes(SharedEpoch):
    """How many times a wrapper's settings were set after it was made, seen by its workers.

    A setting that can be assigned afterwards (``transform``, ``adapter``) is put to use
    in the process that assigns it; a persistent DataLoader worker keeps the copy of the
    wrapper it was given when it started, and would go on with the old setting. The count
    lives in shared memory (it is a :class:`~rankaug.shared_epoch.SharedEpoch`), so a
    worker whose copy was made before the latest assignment sees it differ from the count
    it was given, and the wrapper refuses to go on (:meth:`stale`). A rank forked after
    the wrapper was made counts in a slot of its own, as its epoch does: ``read`` follows
    it there.

    Args:
        value: The count to start from.

    Attributes:
        seen: The count this copy was made with.
        read: The shared count, read without a Python frame.
    """

    __slots__ = ("seen",)

    def __init__(self, value: int = 0) -> None:
        super().__init__(value)
        self.seen = value

    def changed(self) -> None:
        """Count one more assignment (in the process that makes it)."""
        self.seen = self.get() + 1
        self.set(self.seen)

    def copy(self) -> Changes:
        """An independent count: this one's, and what it was made with, in a slot of its own."""
        copied = Changes(self.get())
        copied.seen = self.seen
        return copied

    def stale(self, owner: object) -> RuntimeError:
        """The error of a copy made before the latest assignment (:meth:`read` differs)."""
        kind = type(owner).__name__
        return RuntimeError(
            f"{kind}: a setting (transform or adapter) was assigned after this DataLoader "
            "worker got its copy of the wrapper, so it would go on with the old one: "
            "persistent workers (persistent_workers=True) keep the copy they started "
            "with. Assign it before iter(loader) makes the workers, or make a new "
            "DataLoader after assigning it"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        self.claim()  # a rank's spawned workers share its own slot
        return (_changes, (self._block, self._slot, self.seen))


def _changes(block: torch.Tensor, slot: int, seen: int) -> Changes:
    """Unpickle :class:`Changes`: the same slot when the block arrived shared, else a copy."""
    changes = shared_slot(Changes, block, slot)
    changes.seen = seen
    return changes


def own_count(wrapper: Any) -> Any:
    """``copy.copy`` of a wrapper: its attributes shared, but a count of assignments of its own.

    A shallow copy shares every attribute, the count (:class:`Changes`) too, so assigning
    the copy's transform (``val = copy.copy(train); val.transform = ...``) was counted for
    the original as well: the original's persistent workers then refused to go on,
    though its transform had not changed. The copy counts in a slot of its own; a
    streaming wrapper's copy also takes a copy of the map-style wrapper (``_keyed``)
    whose transform and adapter it assigns, so the original keeps its own.
    """
    kind = type(wrapper)
    copied = object.__new__(kind)
    state = wrapper.__getstate__()  # what copy.copy copies
    if isinstance(state.get("_changes"), Changes):
        state["_changes"] = state["_changes"].copy()
    if "_keyed" in state:
        state["_keyed"] = copy.copy(state["_keyed"])
    setstate = getattr(copied, "__setstate__", None)
    if setstate is not None:
        setstate(state)
    else:
        copied.__dict__.update(state)
    return copied
