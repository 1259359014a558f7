"""The ``adapter`` attribute of the multi-sample wrappers: setting one puts it to use.

A mosaic or a mix reads its samples through a reader made with the adapter; assigning
``wrapper.adapter`` afterwards changed the attribute (by which the output was repacked)
but not the reader's, so the samples were unpacked by the old adapter and repacked by
the new one. :class:`ReaderAdapter` checks the new adapter as the constructor does
(against the wrapper's box format and dataset) and makes the reader again with it.
"""

from __future__ import annotations

from typing import Any

from rankaug.samples import SampleAdapter, check_adapter

__all__ = ["ReaderAdapter"]


class ReaderAdapter:
    """The wrapper's sample adapter; setting another (``None``: the default) puts it to use.

    The wrapper has ``config.box_format``, ``dataset`` and a method ``make_reader(adapter)``
    returning its reader, kept as ``_reader`` (the adapter as ``_adapter``).
    """

    def __get__(self, owner: Any, kind: type | None = None) -> Any:
        if owner is None:
            return self
        adapter: SampleAdapter = owner._adapter
        return adapter

    def __set__(self, owner: Any, adapter: SampleAdapter | None) -> None:
        if "_changes" not in owner.__dict__:  # a subclass's, before the constructor runs
            owner._adapter = adapter  # the constructor checks and sets its own
            return
        checked = check_adapter(adapter, box_format=owner.config.box_format, dataset=owner.dataset)
        owner._reader = owner.make_reader(checked)
        owner._adapter = checked
        owner._changes.changed()  # workers made before go on with the old one: refused
