"""Tests for rankaug.cache._refusals: what the cache does not store, said with the fix."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest
import torch

from rankaug.cache import CachedDataset
from rankaug.cache._refusals import Unstorable, cannot_store, internal, unstorable
from rankaug.cache._unpickle import Refused
from tests.cache.helpers import ListDataset


class _Tagged(torch.Tensor):
    """A tensor subclass of the user's own (not a tv_tensor)."""


class TestInternal:
    @pytest.mark.parametrize(
        ("module", "name", "expected"),
        [("torch._utils", "_rebuild_tensor_v2", True), ("torch.storage", "_load_from_bytes", True),
         ("torchvision.tv_tensors", "Outer._Inner", True), ("numpy", "_frombuffer", True),
         ("torch", "Size", False), ("mymodule", "_Sample", False), ("pathlib", "Path", False)],
    )  # fmt: skip
    def test_a_private_name_of_torch_torchvision_or_numpy(
        self, module: str, name: str, expected: bool
    ) -> None:
        assert internal(module, name) is expected


class TestUnstorable:
    @pytest.mark.parametrize(
        ("tensor", "why"),
        [
            (torch.zeros(2, device="meta"), "a tensor on meta"),
            (torch.ones(2).to_sparse(), "a tensor of layout torch.sparse_coo"),
            (torch.ones(2, requires_grad=True) * 2, "a tensor that requires grad and is no leaf"),
            (torch.nn.Parameter(torch.ones(2)), "a torch.nn.parameter.Parameter, a tensor "
             "subclass other than torchvision's tv_tensors"),
            (torch.ones(2).as_subclass(_Tagged), "a tests.cache.test_refusals._Tagged, a tensor"),
        ],
    )  # fmt: skip
    def test_says_what_the_tensor_is(self, tensor: torch.Tensor, why: str) -> None:
        error = unstorable(tensor)
        assert isinstance(error, Unstorable)
        assert isinstance(error, TypeError)
        assert f"it holds {why}" in str(error)
        assert "it stores CPU tensors, dense, detached or leaves, and torchvision's" in str(error)

    @pytest.mark.parametrize(
        "value",
        [torch.nn.Parameter(torch.ones(3)), torch.zeros(2, device="meta"),
         torch.ones(2).to_sparse(), torch.ones(2).as_subclass(_Tagged)],
    )  # fmt: skip
    def test_the_cache_refuses_them_without_offering_torch_internals(
        self, tmp_path: Path, value: Any
    ) -> None:
        # torch pickles these through _rebuild_parameter, _load_from_bytes...: the error
        # said "pass trusted_types=[_rebuild_parameter]", and trusting them runs torch.load
        cached = CachedDataset(ListDataset([{"x": value}]), tmp_path)
        with pytest.raises(TypeError, match=r"^CachedDataset cannot store dataset\[0\]: it "
                           r"holds a .*, which the cache does not store") as info:  # fmt: skip
            cached[0]
        assert "trusted_types" not in str(info.value)
        assert "_rebuild" not in str(info.value)
        assert not cached.is_cached(0)


class TestCannotStore:
    def test_a_type_of_the_users_is_to_trust(self) -> None:
        assert "trusted_types=[_Sample]" in str(cannot_store("x", Refused("mine", "_Sample")))
        error = cannot_store("dataset[3]", Refused("pathlib", "PurePosixPath"))
        assert str(error) == (
            "CachedDataset cannot store dataset[3]: it holds pathlib.PurePosixPath, which the "
            "cache reads back only when named; pass trusted_types=[PurePosixPath] if you "
            "trust that type's unpickling"
        )

    @pytest.mark.parametrize(
        ("module", "name"),
        [("torch._utils", "_rebuild_tensor_v2"), ("torch.storage", "_load_from_bytes"),
         ("torch._tensor", "_rebuild_from_type_v2")],
    )  # fmt: skip
    def test_a_library_function_is_never_to_trust(self, module: str, name: str) -> None:
        text = str(cannot_store("dataset[0]", Refused(module, name)))
        assert f"pickles through {module}.{name}, a private function, which the cache " in text
        assert "do not trust it" in text
        assert "trusted_types" not in text

    def test_other_errors_are_pickling_errors(self) -> None:
        error = cannot_store("dataset[1]", pickle.PicklingError("no"))
        assert str(error) == (
            "CachedDataset cannot store dataset[1]: the sample cannot be pickled "
            "(PicklingError: no)"
        )
