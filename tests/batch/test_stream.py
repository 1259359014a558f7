"""The default stream of a BatchAugment: its transform's repr, the same in every run."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import torch

from rankaug.batch._stream import default_stream

K = pytest.importorskip("kornia.augmentation")


class Printed:
    """An object that prints as it is told (a transform with a tensor, a device, an address)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


class Thirds:
    """An object whose repr holds a numpy array, printed when it is printed."""

    def __repr__(self) -> str:
        return f"Thirds({np.arange(3) / 3!r})"


@pytest.fixture
def caller_print_options() -> Iterator[None]:
    """Print options a caller might have set, put back to the defaults afterwards."""
    torch.set_printoptions(precision=1, sci_mode=True)
    try:
        with np.printoptions(precision=1):
            yield
    finally:
        torch.set_printoptions(profile="default", sci_mode=None)


class TestDefaultStream:
    def test_different_transforms_print_apart_and_the_same_one_alike(self) -> None:
        flip = default_stream(K.RandomHorizontalFlip(p=0.5))
        assert flip == default_stream(K.RandomHorizontalFlip(p=0.5))
        assert flip != default_stream(K.RandomHorizontalFlip(p=0.4))
        assert flip != default_stream(K.RandomVerticalFlip(p=0.5))
        assert flip.startswith("rankaug.BatchAugment/RandomHorizontalFlip(")

    @pytest.mark.usefixtures("caller_print_options")
    def test_the_caller_print_options_change_nothing_and_stay(self) -> None:
        mean = torch.tensor([0.485, 0.456, 0.406, 0.5])
        transform = K.Normalize(mean=mean, std=mean)
        stream = default_stream(transform)
        assert "mean=tensor([0.4850, 0.4560, 0.4060, 0.5000])" in stream
        assert repr(mean) == "tensor([4.9e-01, 4.6e-01, 4.1e-01, 5.0e-01])"  # the caller's, back

    @pytest.mark.usefixtures("caller_print_options")
    def test_numpy_arrays_print_with_the_defaults(self) -> None:
        stream = default_stream(Thirds())
        assert stream == "rankaug.BatchAugment/Thirds(array([0.        , 0.33333333, 0.66666667]))"
        assert repr(np.arange(3) / 3) == "array([0. , 0.3, 0.7])"  # the caller's, back

    def test_addresses_and_devices_are_left_out(self) -> None:
        at = default_stream(Printed("Lambda(<function f at 0x7f3a2b1c>)"))
        assert at == "rankaug.BatchAugment/Lambda(<function f>)"
        gpu = default_stream(Printed("Normalize(mean=tensor([0.5000], device='cuda:0'))"))
        assert gpu == default_stream(Printed("Normalize(mean=tensor([0.5000]))"))
