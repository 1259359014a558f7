from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rankaug import RandomAugmentWrapper, RankaugWarning
from rankaug.stream import ids
from rankaug.stream.ids import Repeats, SampleIds, id_word


def _same(sample: Any, rng: np.random.Generator) -> Any:
    return sample


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

    def test_a_0d_integer_tensor_is_its_int(self) -> None:
        # Hugging Face's with_format("torch") gives an int64 column as 0-d tensors
        for dtype in (torch.int64, torch.int32, torch.uint8):
            read = SampleIds("id")({"id": torch.tensor(17, dtype=dtype)})
            assert (type(read), read) == (int, 17)
        for bad in (torch.tensor(1.5), torch.tensor(True), torch.tensor([17])):
            with pytest.raises(TypeError, match="a sample id must be a str, bytes or int"):
                SampleIds("id")({"id": bad})

    def test_a_hugging_face_torch_stream(self) -> None:
        datasets = pytest.importorskip("datasets")
        rows = datasets.Dataset.from_dict({"image_id": [3, 4]}).with_format("torch")
        assert [SampleIds("image_id")(row) for row in rows] == [3, 4]
        stream = datasets.Dataset.from_dict({"image_id": [3, 4]}).to_iterable_dataset()
        train: Any = RandomAugmentWrapper(stream.with_format("torch"), _same, seed=0,
                                     keying="sample", sample_id="image_id")  # fmt: skip
        assert [int(row["image_id"]) for row in train] == [3, 4]  # the rows as they were

    def test_names_what_is_missing(self) -> None:
        with pytest.raises(KeyError, match=r"sample_id='id': the sample has no such key"):
            SampleIds("id")({"image": 0})
        with pytest.raises(TypeError, match="must be a dict"):
            SampleIds("id")(("image", 0))
        with pytest.raises(TypeError, match="a sample id must be"):
            SampleIds("id")({"id": 1.5})
        with pytest.raises(TypeError, match="sample_id must be a key of the samples"):
            SampleIds(3)  # type: ignore[arg-type]


class TestRepeats:
    def test_an_id_repeated_warns_once_naming_it_and_the_pass(self) -> None:
        repeats = Repeats(3, 1, 2)
        assert [repeats.word(name, repeats) for name in ("a", "b")] == [id_word("a"), id_word("b")]
        with pytest.warns(RankaugWarning) as caught:
            words = [repeats.word(name, repeats) for name in ("a", "b", "a")]  # warned once
        assert words == [id_word("a"), id_word("b"), id_word("a")]
        assert len(caught) == 1
        assert str(caught[0].message).startswith(
            "Repeats: sample id 'a' came twice in the pass of epoch 3 (rank 1, worker 2): "
            "with keying='sample' both samples draw the same augmentation"
        )
        assert (repeats.seen, len(repeats.order)) == (set(), 0)  # let go once warned

    def test_holds_only_the_latest_ids(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(ids, "REPEAT_WINDOW", 2)
        repeats = Repeats(0, 0, 0)
        for name in ("a", "b", "c", "a", "d"):  # "a" is 3 outputs back: out of the window
            repeats.word(name, repeats)
        assert repeats.seen == {id_word("a"), id_word("d")}
        assert list(repeats.order) == [id_word("a"), id_word("d")]
        with pytest.warns(RankaugWarning, match="sample id 'd' came twice"):
            repeats.word("d", repeats)

    def test_a_numpy_str_id_is_named_as_text(self) -> None:
        # Hugging Face's with_format("numpy") hands string columns out as np.str_
        repeats = Repeats(0, 0, 0)
        repeats.word(np.str_("a"), repeats)
        with pytest.warns(RankaugWarning, match="^Repeats: sample id 'a' came twice"):
            repeats.word(np.str_("a"), repeats)
