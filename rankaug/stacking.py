"""Guards for stacked wrappers: identical keys, wrappers out of sight, mixed keyings.

Stacked wrappers draw independent streams because each one's default stream names its
depth (:mod:`rankaug.nesting`). Two things defeat that silently, and are caught here:

* **A wrapper out of sight.** An inner wrapper held under an attribute other than
  ``.dataset`` / ``.datasets`` (a wrapper of your own storing ``self.base``) is not
  counted in the outer wrapper's depth: both take depth 1, and the same class with the
  same seed draws the same numbers. Nor does the outer wrapper's
  :meth:`~rankaug.KeyedDataset.state_dict` save it, or its ``set_epoch`` reach it. The
  inner wrapper finds the wrappers whose calls it runs inside when it starts a stream (for
  ``keying="stream"``) or on its first sample of an epoch (per-sample keyings): an
  enclosing wrapper with its seed, stream and keying raises :class:`ValueError` (every
  draw would repeat the outer's); one that cannot see it warns, once.
* **A per-sample wrapper over a ``keying="stream"`` one.** The inner draws follow its
  worker's stream, so the outer's samples depend on ``num_workers`` and the sampler after
  all, and a resume or a replayed index differs. It warns, once: when the outer wrapper
  is built over a wrapper it sees, or when the inner one starts a stream inside it.

The same key in a tree the outer wrapper sees (both given the same ``stream=``) is
refused when the outer is built, a streaming wrapper's too (:func:`check_same_key`).
None of this runs for every sample.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterable
from types import FrameType
from typing import TYPE_CHECKING, Any

from rankaug.errors import RankaugWarning, outside_level

if TYPE_CHECKING:
    from rankaug.keyed import KeyedDataset

__all__ = ["check_built", "check_enclosing", "check_same_key", "enclosing", "mixed_keyings"]


def _key(wrapper: Any) -> tuple[int, int, str]:
    return wrapper.seed, wrapper.stream, wrapper.keying


def _named(wrapper: Any) -> str:
    return f"{type(wrapper).__name__}(keying={wrapper.keying!r}, stream={wrapper.stream})"


def _same_key(inner: Any, outer: Any, seen: bool) -> str:
    why = (
        "both were given this stream="
        if seen
        else f"the {type(outer).__name__} cannot see the {type(inner).__name__} inside it, "
        "held under an attribute other than .dataset or .datasets, so both took the "
        "default stream of depth 1, and its state_dict() cannot save the inner one's "
        "streams either"
    )
    return (
        f"{_named(inner)} runs inside {_named(outer)} with the same seed={inner.seed}, "
        f"stream and keying, so every draw of the inner wrapper repeats the outer one's: "
        f"{why}. Pass a distinct stream= to one of them, e.g. stream='inner'"
        + ("" if seen else ", and hold the inner one as .dataset so that the outer sees it")
    )


def mixed_keyings(outer: str, keying: str, inner: str) -> str:
    """The warning for a per-sample ``outer`` wrapper over a ``keying="stream"`` ``inner`` one.

    Args:
        outer: The outer wrapper's class name.
        keying: The outer wrapper's keying.
        inner: The inner wrapper's class name.
    """
    return (
        f"{outer}(keying={keying!r}) holds {inner}(keying='stream'): the inner wrapper "
        "draws from its worker's stream, so this wrapper's samples depend on num_workers, "
        "the batch size and the sampler after all, and a resumed run or a replayed index "
        f"differs. Pass keying={keying!r} to the {inner} as well"
    )


def _warn_once(wrapper: Any, kind: str, message: str, stacklevel: int = 4) -> None:
    warned: set[str] = wrapper._stacking_warned
    if kind not in warned:
        warned.add(kind)
        warnings.warn(message, RankaugWarning, stacklevel=stacklevel)


def check_same_key(wrapper: Any, inside: Iterable[Any]) -> None:
    """Refuse the wrappers ``inside`` one just built that have its seed, stream and keying.

    Args:
        wrapper: The wrapper just built (a map-style or a streaming one).
        inside: The rankaug wrappers it sees inside it.

    Raises:
        ValueError: If one has its seed, stream and keying (every draw would repeat).
    """
    for inner in inside:
        if _key(inner) == _key(wrapper):
            raise ValueError(_same_key(inner, wrapper, seen=True))


def check_built(wrapper: KeyedDataset[Any]) -> None:
    """Check a wrapper just built against the rankaug wrappers it sees inside it.

    Raises:
        ValueError: If one has its seed, stream and keying.

    Warns:
        RankaugWarning: If ``wrapper`` keys per sample and one inside has
            ``keying="stream"``.
    """
    inside = wrapper.keyed_tree()[1:]
    check_same_key(wrapper, inside)
    if wrapper.keying == "stream":
        return
    for inner in inside:
        if inner.keying == "stream":
            inner._stacking_warned.add("keying")  # told here, not again when it starts
            message = mixed_keyings(type(wrapper).__name__, wrapper.keying, type(inner).__name__)
            _warn_once(wrapper, "keying", message, outside_level() + 1)  # the wrapper's maker
            return


def enclosing(wrapper: object) -> list[KeyedDataset[Any]]:
    """The rankaug wrappers whose calls this one runs inside, nearest first.

    Read from the calling frames (``self`` of each method running), so it costs nothing
    until asked, and sees wrappers whatever attribute holds them.
    """
    from rankaug.keyed import KeyedDataset  # it imports this module

    found: list[KeyedDataset[Any]] = []
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_argcount and code.co_varnames[0] == "self":
            owner = frame.f_locals.get("self")
            if (
                isinstance(owner, KeyedDataset)
                and owner is not wrapper
                and hasattr(owner, "_stacking_warned")  # built (not inside its __init__)
                and all(owner is not other for other in found)
            ):
                found.append(owner)
        frame = frame.f_back
    return found


def check_enclosing(wrapper: KeyedDataset[Any]) -> None:
    """Check ``wrapper`` against the rankaug wrappers it runs inside (module docstring).

    Raises:
        ValueError: If one of them has its seed, stream and keying.

    Warns:
        RankaugWarning: If the nearest cannot see ``wrapper``, or, for
            ``keying="stream"``, if one of them keys per sample.
    """
    around = enclosing(wrapper)
    if not around:
        return
    for outer in around:
        if _key(outer) == _key(wrapper):
            seen = any(inner is wrapper for inner in outer.keyed_tree())
            raise ValueError(_same_key(wrapper, outer, seen))
    nearest = around[0]
    if all(inner is not wrapper for inner in nearest.keyed_tree()):
        lost = ""
        if wrapper.keying == "stream":
            lost = " or save its keying='stream' positions in state_dict() (a resumed run "
            lost += "draws other numbers)"
        _warn_once(wrapper, "sight", (
            f"{_named(wrapper)} runs inside {_named(nearest)}, which cannot see it: it is "
            f"held under an attribute other than .dataset or .datasets, so the "
            f"{type(nearest).__name__} cannot reach it with set_epoch(){lost}. Hold it as "
            ".dataset (or in a .datasets list, tuple or dict)"))  # fmt: skip
    if wrapper.keying == "stream":
        per_sample = next((outer for outer in around if outer.keying != "stream"), None)
        if per_sample is not None:
            _warn_once(wrapper, "keying", mixed_keyings(
                type(per_sample).__name__, per_sample.keying, type(wrapper).__name__))  # fmt: skip
