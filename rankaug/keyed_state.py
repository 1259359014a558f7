"""What a keyed wrapper saves and what its pickle leaves out: :class:`KeyedState`.

Resuming mid-epoch: :meth:`KeyedState.state_dict` holds each stream's position (for
``"stream"`` keying) of every rankaug wrapper in the tree (:mod:`rankaug.streams`), in
the form torchdata's ``StatefulDataLoader`` saves per worker; with
:class:`~rankaug.EpochSampler` saving the epoch and position of the pass, a resumed run
continues bit for bit. Stream positions are per rank: each rank loads its own.

A wrapper pickled for a spawned worker (or copied) leaves its live streams, their
drawers and the per-process caches behind, and takes the rank the main process's
process group gives, which the worker cannot reach.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch.distributed as dist

from rankaug import nesting, streams
from rankaug._process import current_pid
from rankaug.context import DISTRIBUTED, check_rank, process_group_rank

if TYPE_CHECKING:
    from rankaug.keyed import KeyedDataset

__all__ = ["KeyedState"]


class KeyedState:
    """:class:`~rankaug.KeyedDataset`'s saved state and pickling (see the module)."""

    stream: int
    rank: int | None
    _rank_checked: bool
    _streams: streams.Streams
    _saved_ranks: streams.SavedRanks
    _key_builder: Any

    def keyed_tree(self) -> list[KeyedDataset[Any]]:
        """This wrapper and every rankaug wrapper inside it, depth first."""
        return [self, *(d for d in nesting.walk(self) if isinstance(d, KeyedState))]  # type: ignore[list-item]

    def state_dict(self) -> dict[str, Any]:
        """The positions of this process's streams, for this wrapper and those inside it.

        Empty stream lists for the per-sample keyings, which need no state to resume.
        torchdata's ``StatefulDataLoader`` calls it in each worker and hands each
        worker's state back to :meth:`load_state_dict` on resume.

        Returns:
            A picklable dict (its layout: :mod:`rankaug.streams`).
        """
        pid = current_pid()
        return streams.saved(
            [(type(w).__qualname__, w.stream, streams.positions(w._streams, pid))
             for w in self.keyed_tree()]
        )  # fmt: skip

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved, in this process.

        Args:
            state: A dict from :meth:`state_dict` of an identically built wrapper,
                saved on this rank (another rank's streams are refused when this rank
                would start them over: :func:`rankaug.streams.check_rank`).

        Raises:
            TypeError: If a part of ``state`` has the wrong type.
            ValueError: If ``state`` does not come from this wrapper's structure.
        """
        tree = self.keyed_tree()
        saved = streams.entries(state, [(type(w).__qualname__, w.stream) for w in tree])
        pid = current_pid()
        for wrapper, entry in zip(tree, saved, strict=True):
            wrapper._streams = streams.restored(entry, wrapper._key_builder, pid)
            wrapper._saved_ranks = streams.ranks(wrapper._streams)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_streams"], state["_saved_ranks"], state["_drawers"] = streams.Streams(), {}, {}
        state["_rank_cache"] = state["_stacking_epoch"] = None
        # Pickled for a spawned worker: record the rank while the process group is
        # still reachable; the worker has none.
        if self.rank is None:
            rank = process_group_rank()
            if rank is not None:
                state["_captured_rank"] = rank
        elif not self._rank_checked and DISTRIBUTED and dist.is_initialized():
            check_rank(self.rank)  # the last moment the process group is reachable
            state["_rank_checked"] = self._rank_checked = True
        return state
