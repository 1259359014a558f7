"""How a wrapper may call a user's transform: ``transform(sample, rng=...)`` or ``(sample)``."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Final

import torch

__all__ = ["CALLS", "named", "rng_call"]

#: How rankaug calls a callable transform, for messages.
CALLS: Final = (
    "rankaug calls a transform as transform(sample, rng=generator) when it has a parameter "
    "named rng (the key's numpy Generator, passed by that name), else as transform(sample)"
)
_BY_NAME: Final = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def rng_call(transform: Callable[..., Any], name: str = "transform") -> bool | None:
    """Whether ``transform`` is called with ``rng=``; ``None`` if its signature is unknown.

    A callable with a parameter named ``rng`` (positional-or-keyword or keyword-only) is
    called as ``transform(sample, rng=generator)``, any other as ``transform(sample)``
    (a ``torch.nn.Module`` by its ``forward``).

    Raises:
        TypeError: If the signature can be read and the call would leave a parameter
            without a value (``def t(sample, generator)``): naming it, the transform, its
            signature and the two calls.

    >>> rng_call(lambda sample, rng: sample), rng_call(lambda sample, **options: sample)
    (True, False)
    >>> def jitter(sample, generator):
    ...     return sample
    >>> rng_call(jitter)
    Traceback (most recent call last):
    ...
    TypeError: transform must take (sample, rng=generator) or (sample), got jitter with ...: \
its parameter 'generator' would get no value; rankaug calls ...: rename it rng ...
    """
    target = transform.forward if isinstance(transform, torch.nn.Module) else _own(transform)
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):  # builtins without a signature: called as (sample)
        return None
    rng = signature.parameters.get("rng")
    takes = rng is not None and rng.kind in _BY_NAME
    given: dict[str, object] = {"rng": None} if takes else {}
    signature = _called(transform) or signature  # a decorator may supply a parameter
    try:
        signature.bind(None, **given)
    except TypeError as error:
        call = "transform(sample, rng=generator)" if takes else "transform(sample)"
        shown = f"{name} must take (sample, rng=generator) or (sample), got {named(transform)}"
        missing = _missing(signature, given)
        if missing is None:  # no parameter for the sample, say
            raise TypeError(f"{shown} with signature {signature}, which {call} does not fit "
                            f"({error}); {CALLS}") from None  # fmt: skip
        if missing.name == "rng":  # positional-only
            advice = "make rng a keyword parameter (drop the '/' before it)"
        elif takes:
            advice = "give it a default"
        else:
            advice = "rename it rng (if it takes the generator), or give it a default"
        raise TypeError(
            f"{shown} with signature {signature}: its parameter {missing.name!r} would get no "
            f"value; {CALLS}: {advice}"
        ) from None
    return takes


def _called(transform: Callable[..., Any]) -> inspect.Signature | None:
    """The signature of what ``transform(...)`` runs, not followed to a wrapped function.

    A module's ``forward`` unless its class has its own ``__call__``. A decorator's
    ``functools.wraps`` shows the decorated function's signature, though the decorator
    may supply a parameter (the generator) itself: its own call is what must fit.
    """
    target = _own(transform)
    if (
        isinstance(transform, torch.nn.Module)
        and type(transform).__call__ is torch.nn.Module.__call__
    ):
        target = transform.forward
    try:
        return inspect.signature(target, follow_wrapped=False)
    except (TypeError, ValueError):  # pragma: no cover (readable when followed)
        return None


def _own(transform: Callable[..., Any]) -> Callable[..., Any]:
    """``transform``, or its ``__call__`` where that is a static or class method.

    ``inspect.signature`` of such an instance drops the first parameter of its
    ``__call__`` as if it were ``self`` (in Python 3.11 at least): ``(sample)`` reads
    as ``()``.
    """
    call = inspect.getattr_static(type(transform), "__call__", None)
    if isinstance(call, staticmethod | classmethod):
        own: Callable[..., Any] = call.__get__(transform, type(transform))
        return own
    return transform


def named(transform: object) -> str:
    """A short name for ``transform``: a function's qualified name, else its short repr."""
    if inspect.isfunction(transform) or inspect.ismethod(transform) or inspect.isbuiltin(transform):
        return str(transform.__qualname__)
    shown = repr(transform)
    plain = len(shown) <= 80 and "\n" not in shown and " object at 0x" not in shown
    return shown if plain else f"a {type(transform).__qualname__}"


def _missing(signature: inspect.Signature, given: dict[str, object]) -> inspect.Parameter | None:
    """The first parameter the call ``(sample, **given)`` would leave without a value."""
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    parameters = list(signature.parameters.values())
    sample = next((p for p in parameters if p.kind in kinds), None)
    for parameter in parameters:
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        if (
            parameter is sample
            or parameter.name in given
            or parameter.default is not parameter.empty
        ):
            continue
        return parameter
    return None
