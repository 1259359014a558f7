from __future__ import annotations

import pytest

from rankaug.cache._identity import key_bytes, mismatch, older

KEY = "0123456789abcdef" * 2


class TestKeyBytes:
    def test_the_keys_16_bytes_or_zeros(self) -> None:
        assert key_bytes(KEY) == bytes.fromhex(KEY)
        assert len(key_bytes(KEY)) == 16
        assert key_bytes(None) == bytes(16)


class TestMismatch:
    def test_none_where_index_and_key_agree(self) -> None:
        assert mismatch("e", (4, key_bytes(KEY)), (4, KEY)) is None
        assert mismatch("e", (4, key_bytes(KEY)), (4, None)) is None  # any key

    @pytest.mark.parametrize(
        ("held", "expected", "text"),
        [
            ((5, KEY), (4, KEY), f"e: holds dataset[5] of the cache {KEY}, not dataset[4] ("),
            ((4, KEY), (4, "f" * 32), f"not dataset[4] of the cache {'f' * 32} ("),
            ((5, KEY), (4, None), "not dataset[4] (copied or moved from elsewhere): not served"),
        ],
    )
    def test_names_what_it_holds_and_what_was_wanted(
        self, held: tuple[int, str], expected: tuple[int, str | None], text: str
    ) -> None:
        found = mismatch("e", (held[0], key_bytes(held[1])), expected)
        assert found is not None
        assert text in found


class TestOlder:
    def test_names_the_file_and_the_fix(self) -> None:
        assert older("e").startswith("e: an entry of an older rankaug cache format")
        assert "CachedDataset.prune()" in older("e")
