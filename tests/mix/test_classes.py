from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import torch

from rankaug.mix.classes import class_vector, refuse_unmixed, soft_target


class TestClassVector:
    def test_integers_become_one_hot(self) -> None:
        for value in (2, np.int16(2), torch.tensor(2), np.array(2)):
            assert class_vector(value, 3, "dataset[0]").tolist() == [0.0, 0.0, 1.0]

    def test_vectors_pass_as_weights(self) -> None:
        soft = class_vector(torch.tensor([0.25, 0.75]), 2, "dataset[0]")
        assert soft.tolist() == [0.25, 0.75]
        assert soft.dtype == np.float64

    def test_bad_classes_name_the_sample(self) -> None:
        with pytest.raises(ValueError, match=r"dataset\[4\] has no class"):
            class_vector(None, 3, "dataset[4]")
        with pytest.raises(ValueError, match=r"dataset\[4\] class must be an integer in \[0, 2\]"):
            class_vector(-1, 3, "dataset[4]")
        with pytest.raises(ValueError, match=r"vector of num_classes=3 weights, got shape \(2,\)"):
            class_vector([0.5, 0.5], 3, "dataset[4]")
        with pytest.raises(TypeError, match=r"dataset\[4\] class must be an integer or a vector"):
            class_vector(True, 3, "dataset[4]")
        with pytest.raises(TypeError, match=r"dataset\[4\] class must be an integer or a vector"):
            class_vector("cat", 3, "dataset[4]")


class TestSoftTarget:
    def test_float32_of_the_class_container(self) -> None:
        vector = np.array([0.5, 0.5])
        assert soft_target(vector, 3).dtype == np.float32
        assert soft_target(vector, torch.tensor(3)).dtype == torch.float32


class TestRefuseUnmixed:
    def test_values_that_are_no_class_pass(self) -> None:
        for value in (None, "cat", np.zeros((4, 4)), True, np.float64(0.5), [], ["a", "b"]):
            refuse_unmixed(value, "dataset[0]")

    def test_integer_classes_are_refused(self) -> None:
        for value in (3, np.int64(3), torch.tensor(3), np.array(3)):
            with pytest.raises(ValueError, match=r"dataset\[0\] has the class 3 but num_classes="):
                refuse_unmixed(value, "dataset[0]")

    def test_vectors_are_refused(self) -> None:
        vectors = (
            np.array([3]), torch.tensor([3]), np.eye(3, dtype=np.float32)[1], torch.eye(3)[1],
            [0.25, 0.75], torch.zeros(3),
        )  # fmt: skip
        for value in vectors:
            with pytest.raises(ValueError, match=r"dataset\[0\] has the class vector .* \(shape"):
                refuse_unmixed(value, "dataset[0]")

    @pytest.mark.parametrize("kind", ["array", "tensor"])
    def test_a_mask_passes_without_a_copy(self, kind: str) -> None:
        # An (image, mask) pair's mask was copied into float64 for every sample (32 MB here).
        mask = np.zeros((2000, 2000), np.uint8)
        value = mask if kind == "array" else torch.from_numpy(mask)[None]
        tracemalloc.start()
        try:
            refuse_unmixed(value, "dataset[0]")
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 1_000_000

    def test_the_advice_ends_the_message(self) -> None:
        with pytest.raises(ValueError, match=r"has the class 3 but rename it$"):
            refuse_unmixed(3, "dataset[0]", "rename it")
        with pytest.raises(ValueError, match=r"\(shape \(2,\)\) but rename it \(a class is"):
            refuse_unmixed([0.25, 0.75], "dataset[0]", "rename it")
