"""What the cache must know of a Hugging Face ``datasets.Dataset`` it is given.

Two things :mod:`datasets` does not say out loud: a transform set by
``with_transform``/``set_transform`` (the format type ``"custom"``) runs on every
access, so a cache would keep its first output; and a fingerprint that ``datasets``
could not compute (a transform or argument it could not hash) is a random one, new in
every process and run. Neither needs ``datasets`` to be importable: a dataset of another
library is never one of these.
"""

from __future__ import annotations

import sys
from typing import Final

__all__ = ["custom_transform", "is_hf_dataset", "random_fingerprint"]

#: The key of ``datasets.fingerprint.fingerprint_warnings`` set when hashing failed.
_HASH_FAILED: Final = "update_fingerprint_transform_hash_failed"


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


def random_fingerprint(dataset: object) -> str | None:
    """Why the ``datasets`` fingerprint of ``dataset`` may be random, else ``None``.

    ``datasets`` falls back to a random fingerprint when it cannot hash a transform or
    one of its arguments (``map`` of a function holding something that does not pickle,
    say), logs "a random hash was used instead" once per process and sets a flag. A
    ``with_transform`` transform that cannot be hashed now could not be then either;
    for any other dataset, the flag says only that some transform of this process fell
    back, which may have made this one.

    >>> random_fingerprint([1, 2]) is None
    True
    """
    if not is_hf_dataset(dataset):
        return None
    module = sys.modules.get("datasets.fingerprint")
    transform = custom_transform(dataset)
    if module is not None and transform is not None:
        try:
            module.Hasher.hash(transform)
        except Exception:  # what datasets catches too: pickle or dill failing, anything
            return (
                f"its with_transform/set_transform transform {transform!r:.80} cannot be "
                "hashed, so datasets gave it a random fingerprint"
            )
    flags = getattr(module, "fingerprint_warnings", None)
    if isinstance(flags, dict) and flags.get(_HASH_FAILED):
        return (
            "datasets could not hash a transform or its arguments in this process (it "
            "logged 'a random hash was used instead'); if this dataset was made by that "
            "transform, its fingerprint is random"
        )
    return None
