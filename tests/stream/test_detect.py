from __future__ import annotations

from typing import Any

import pytest
from torch.utils.data import IterableDataset

from rankaug.stream.detect import check_stream, is_stream


class _IndexedStream(IterableDataset[int]):
    """An IterableDataset with __getitem__ and __len__ (litdata's, mosaicml's)."""

    def __iter__(self) -> Any:
        return iter(range(3))

    def __getitem__(self, index: int) -> int:
        return index

    def __len__(self) -> int:
        return 3


class TestIsStream:
    def test_the_rule(self) -> None:
        assert is_stream(_IndexedStream())  # an IterableDataset always streams
        assert is_stream({"a": 1}.keys())  # iterable, no __getitem__
        assert not is_stream([1, 2])  # map-style keeps the map-style wrappers
        assert not is_stream("abc")
        assert not is_stream(3)


class TestCheckStream:
    def test_refuses_map_style_and_one_shot_iterators(self) -> None:
        with pytest.raises(TypeError, match="dataset must be an IterableDataset"):
            check_stream([1, 2])
        with pytest.raises(TypeError, match="one-shot iterator generator"):
            check_stream(x for x in range(3))
        assert check_stream(_IndexedStream()) is not None


class TestStreamable:
    @pytest.mark.parametrize("name", ["MosaicDataset", "MixUpDataset", "CutMixDataset",
                                      "CopyPasteDataset"])  # fmt: skip
    @pytest.mark.parametrize("argument", [{"buffer_size": 3}, {"sample_id": "id"}])
    def test_stream_only_argument_over_a_map_style_dataset_is_named(
        self, name: str, argument: dict[str, Any]
    ) -> None:
        import rankaug
        from rankaug.datasets import SyntheticDetection

        wrapper = getattr(rankaug, name)
        ((keyword, value),) = argument.items()
        expected = rf"^{keyword}={value!r} is for streams .*{name} over a map-style dataset"
        with pytest.raises(ValueError, match=expected):
            wrapper(SyntheticDetection(4, image_size=16), seed=0, **argument)
