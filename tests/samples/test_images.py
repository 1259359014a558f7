from __future__ import annotations

import numpy as np
import torch

from rankaug.samples.images import value_to_numpy


class TestValueToNumpy:
    def test_tensors_and_lists_of_tensors_become_arrays(self) -> None:
        masks = torch.arange(6, dtype=torch.uint8).reshape(2, 3)
        assert type(value_to_numpy(masks)) is np.ndarray
        listed = value_to_numpy([masks, masks + 1])
        assert type(listed) is list
        assert [(type(m), m.dtype) for m in listed] == [(np.ndarray, np.dtype(np.uint8))] * 2
        np.testing.assert_array_equal(listed[1], masks.numpy() + 1)
        assert type(value_to_numpy((masks,))) is tuple

    def test_anything_else_is_as_it_is(self) -> None:
        labels = [1, 2]
        assert value_to_numpy(labels) is labels
        empty: list[int] = []
        assert value_to_numpy(empty) is empty
        array = np.zeros(3)
        assert value_to_numpy(array) is array
