"""``prefetched``: the crop itself, each of its cache lines read once, in order."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankaug.mosaic.prefetch import prefetched


class TestPrefetched:
    @given(h=st.integers(1, 30), w=st.integers(1, 30), channels=st.sampled_from([None, 1, 3, 6]),
           rows=st.tuples(st.integers(0, 29), st.integers(1, 30)),
           cols=st.tuples(st.integers(0, 29), st.integers(1, 30)),
           dtype=st.sampled_from([np.uint8, np.int64, np.float16, np.bool_]),
           mirrored=st.booleans())  # fmt: skip
    def test_the_crop_itself_unchanged_and_every_line_read(
        self, h: int, w: int, channels: int | None, rows: tuple[int, int],
        cols: tuple[int, int], dtype: Any, mirrored: bool,
    ) -> None:  # fmt: skip
        shape = (h, w) if channels is None else (h, w, channels)
        tile = np.random.default_rng(h * 31 + w).integers(0, 256, shape).astype(dtype)
        tile.flags.writeable = False  # a mapped cache file's arrays are read-only
        crop = tile[min(rows) : max(rows), min(cols) : max(cols)]
        if mirrored:  # a negative stride
            crop = crop[:, ::-1]
        before = crop.copy()
        assert prefetched(crop) is crop
        assert np.array_equal(crop, before)

    def test_one_value_of_each_cache_line_is_read(self, monkeypatch: pytest.MonkeyPatch) -> None:
        read: list[np.ndarray] = []

        class Spy(np.ndarray):  # sees every ufunc call on it, the reduction that reads
            def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kw: Any) -> Any:
                plain = [np.asarray(x) if isinstance(x, Spy) else x for x in inputs]
                if ufunc is np.maximum and method == "reduce":
                    read.append(plain[0])
                return getattr(ufunc, method)(*plain, **kw)

        tile = np.zeros((8, 100, 3), np.uint8)
        prefetched(tile[2:6, 10:90].view(Spy))
        (values,) = read
        # every 21st pixel's first channel: 63 bytes apart, so no 64-byte line is skipped
        assert values.shape == (4, 4)
        assert values.strides == (300, 63)
