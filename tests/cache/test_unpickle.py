"""Tests for rankaug.cache._unpickle: the reader builds rankaug's types and nothing else."""

from __future__ import annotations

import io
import os
import pickle
import subprocess
import sys
import textwrap
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest
import torch

from rankaug.cache._unpickle import NOTHING, Refused, load, tensor_reduction, trusted
from tests import ahead
from tests.cache.helpers import Planted, Point, assert_identical


class TensorPickler(pickle.Pickler):
    def reducer_override(self, obj: object) -> object:  # type: ignore[override]
        return tensor_reduction(obj) if isinstance(obj, torch.Tensor) else NotImplemented


def round_trip(value: object, extra: object = NOTHING) -> object:
    buffers: list[pickle.PickleBuffer] = []
    stream = io.BytesIO()
    TensorPickler(stream, protocol=5, buffer_callback=buffers.append).dump(value)
    data = stream.getbuffer()
    return load(data, [b.raw() for b in buffers], extra)  # type: ignore[arg-type]


class TestLoad:
    def test_what_rankaug_stores_is_admitted(self) -> None:
        value = {
            "arrays": [np.ones((3, 4), ">u2"), np.zeros(5000, np.float32), np.array(7)],
            "objects": np.array(["a", 1, None], dtype=object),
            "scalars": (np.float32(1.5), np.int8(-3), 2 + 3j, float("inf")),
            "containers": [{1, 2}, frozenset({3}), bytearray(b"x"), OrderedDict(a=1)],
            "others": (slice(1, 2), range(3), b"raw", None, True),
            "structured": np.zeros(2, [("a", "f4"), ("b", "i8")]),
        }
        assert_identical(round_trip(value), value)

    def test_a_planted_call_is_refused_before_it_runs(self, tmp_path: Path) -> None:
        target = tmp_path / "pwned"
        data = pickle.dumps({"image": Planted(str(target))})
        with pytest.raises(Refused, match=r"posix\.system") as info:
            load(memoryview(data), [], NOTHING)
        assert (info.value.module, info.value.name) == ("posix", "system")
        assert not target.exists()

    @pytest.mark.parametrize("value", [Path("a"), os.getcwd, pickle.loads, Point(1, 2)])
    def test_other_globals_are_refused(self, value: object) -> None:
        with pytest.raises(Refused):
            round_trip(value)

    def test_a_trusted_type_is_the_object_named(self) -> None:
        assert round_trip(Point(1, [2.0]), trusted([Point])) == Point(1, [2.0])


class TestTensorReduction:
    @pytest.mark.parametrize(
        "tensor",
        [
            torch.arange(12, dtype=torch.int64).reshape(3, 4),
            torch.ones(3000, dtype=torch.bfloat16),
            torch.ones(5, requires_grad=True),
            torch.arange(6.0).reshape(2, 3)[:, ::2],
            torch.tensor([1 + 2j]).conj(),
        ],
    )
    def test_round_trip(self, tensor: torch.Tensor) -> None:
        back = round_trip(tensor)
        assert isinstance(back, torch.Tensor)
        assert back.dtype == tensor.dtype
        assert back.requires_grad == tensor.requires_grad
        assert torch.equal(back.detach(), tensor.detach().resolve_conj())

    def test_what_it_leaves_to_pickle(self) -> None:
        assert tensor_reduction(torch.ones(2).to_sparse()) is NotImplemented
        assert tensor_reduction(torch.ones(2, requires_grad=True) * 2) is NotImplemented


class TestTrusted:
    def test_table(self) -> None:
        assert trusted(None) == {}
        assert trusted([Point]) == {("tests.cache.helpers", "Point"): Point}

    @pytest.mark.parametrize("value", ["Point", 3, [3], [None]])
    def test_bad_values(self, value: object) -> None:
        with pytest.raises(TypeError, match=r"trusted_types must (be|hold)"):
            trusted(value)  # type: ignore[arg-type]


# numpy 1.x (pyproject allows numpy>=1.24.4) has numpy.core, not numpy._core: the reader
# falls back to it. Simulated here by refusing numpy._core to that module alone.
NUMPY_1 = textwrap.dedent(
    """
    import builtins, pickle, warnings
    import numpy as np
    real = builtins.__import__
    def numpy_1(name, globals=None, locals=None, fromlist=(), level=0):
        if name.startswith("numpy._core") and (globals or {}).get("__name__") == MODULE:
            raise ModuleNotFoundError(f"No module named {name!r}")
        return real(name, globals, locals, fromlist, level)
    MODULE = "rankaug.cache._unpickle"
    builtins.__import__ = numpy_1
    warnings.simplefilter("ignore", DeprecationWarning)  # numpy 2's numpy.core shim
    import rankaug
    from rankaug.cache import _unpickle
    builtins.__import__ = real
    value = [np.arange(6, dtype=np.int16).reshape(2, 3), np.float32(1.5)]
    back = _unpickle.load(memoryview(pickle.dumps(value, protocol=5)), [], _unpickle.NOTHING)
    assert np.array_equal(back[0], value[0]) and back[1] == value[1]
    print(rankaug.__file__, _unpickle._multiarray.__name__)
    """
)


def numpy_1(_: Path) -> subprocess.CompletedProcess[str]:
    """:data:`NUMPY_1` in a new interpreter (a job of tests.ahead)."""
    root = Path(__file__).resolve().parents[2]
    return subprocess.run(
        [sys.executable, "-c", NUMPY_1], cwd=root, capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip


@pytest.mark.slow  # a new interpreter, run ahead (tests/ahead.py)
def test_numpy_1_core_is_the_fallback(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    result = ahead.result("numpy-1", lambda: tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    where, multiarray = result.stdout.split()
    assert Path(where).is_relative_to(root)
    assert multiarray == "numpy.core.multiarray"
