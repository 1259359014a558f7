"""What the cache must know of a Hugging Face ``datasets.Dataset`` it is given.

What :mod:`datasets` does not say out loud: a transform set by
``with_transform``/``set_transform`` (the format type ``"custom"``) runs on every
access, so a cache would keep its first output. This needs no ``datasets`` to be
importable: a dataset of another library is never one of these.
"""

from __future__ import annotations

__all__ = ["custom_transform", "is_hf_dataset"]


def is_hf_dataset(value: object) -> bool:
    """Whether ``value`` is a Hugging Face ``datasets`` dataset (by its class's module).

    >>> is_hf_dataset([1, 2])
    False
    """
    module = getattr(type(value), "__module__", "") or ""
    return module == "datasets" or module.startswith("datasets.")


def custom_transform(value: object) -> object | None:
    """The ``with_transform``/``set_transform`` transform of ``value``, else ``None``.

    >>> custom_transform({"_format_type": "custom"}) is None
    True
    """
    if not is_hf_dataset(value):
        return None
    try:
        attributes = object.__getattribute__(value, "__dict__")
    except AttributeError:
        return None
    if attributes.get("_format_type") != "custom":
        return None
    arguments = attributes.get("_format_kwargs")
    transform = arguments.get("transform") if isinstance(arguments, dict) else None
    return transform if transform is not None else "custom"
