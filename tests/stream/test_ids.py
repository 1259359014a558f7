from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankaug.stream.ids import SampleIds, id_word


class TestIdWord:
    def test_pinned_values(self) -> None:
        # Pinned: sample ids enter every streamed sample's key.
        assert id_word("a") == 1410542633125930404
        assert id_word(17) == id_word(np.int64(17))

    @settings(max_examples=20)
    @given(st.text())
    def test_types_never_collide_and_fit_64_bits(self, text: str) -> None:
        assert id_word(text) != id_word(text.encode("utf-8"))
        assert 0 <= id_word(text) < 2**64

    @pytest.mark.parametrize("value", [True, 1.0, None, ("a",)])
    def test_refuses_other_ids(self, value: object) -> None:
        with pytest.raises(TypeError, match="a sample id must be a str, bytes or int"):
            id_word(value)


class TestSampleIds:
    def test_reads_a_key_or_calls(self) -> None:
        assert SampleIds("__key__")({"__key__": "000001", "x": 1}) == "000001"
        assert SampleIds(lambda s: s[1])(("image", 7)) == 7
        assert SampleIds(None)({"id": 1}) is None

    def test_names_what_is_missing(self) -> None:
        with pytest.raises(KeyError, match=r"sample_id='id': the sample has no such key"):
            SampleIds("id")({"image": 0})
        with pytest.raises(TypeError, match="must be a dict"):
            SampleIds("id")(("image", 0))
        with pytest.raises(TypeError, match="a sample id must be"):
            SampleIds("id")({"id": 1.5})
        with pytest.raises(TypeError, match="sample_id must be a key of the samples"):
            SampleIds(3)  # type: ignore[arg-type]
