"""BatchAugment against plain kornia on the same transform, on CPU and (when present) CUDA.

Standalone: ``python benchmarks/batch_augment.py [--quick] [--json]``. CPU rows run on one
thread (``torch.set_num_threads(1)``), B=256, 64x64; CUDA rows at B=256, 224x224. Each
row is the median of interleaved rounds (plain, keyed, plain, keyed...) after a warm-up;
``speed`` is plain time / keyed time (the goal is >= 0.9, with ColorJitter's order fixed;
a second row shows the cost of a random order drawn per sample). On CUDA it also checks the
device properties of issue 18: keyed parameters within 1e-6 of the CPU ones and
``torch.cuda.get_rng_state()`` unchanged. Without CUDA those rows are skipped, and say so.
Where torchvision imports (``.venv-tv``), a torchvision v2 row races a plain per-sample
loop against ``BatchAugment`` (both one call per sample); elsewhere it says it is skipped.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import kornia
import kornia.augmentation as K

from rankaug import BatchAugment
from rankaug.batch._keys import DrawKeys


def make_transform(size: int = 64, order: tuple[int, ...] | None = (0, 1, 2, 3)) -> Any:
    """A detection-style batch transform: affine, flip, colour, resized crop to ``size``."""
    return K.AugmentationSequential(
        K.RandomAffine(degrees=10.0, translate=(0.1, 0.1), scale=(0.8, 1.2), p=0.8),
        K.RandomHorizontalFlip(p=0.5),
        K.ColorJitter(0.3, 0.3, 0.3, 0.02, p=0.8, order=order),
        K.RandomResizedCrop((size, size), scale=(0.5, 1.0), p=1.0),
    )


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def race(
    device: torch.device, size: int, batch: int, rounds: int, reps: int, fixed: bool = True
) -> dict[str, Any]:
    """Median seconds per call of plain kornia and of BatchAugment, interleaved.

    ``fixed=False`` gives ColorJitter a random order: one per batch in plain kornia, one
    per sample (applied per group) in BatchAugment; not like for like, shown for its cost.
    """
    plain = make_transform(size, (0, 1, 2, 3) if fixed else None).to(device)
    keyed = BatchAugment(copy.deepcopy(plain), seed=0)
    images = torch.rand(batch, 3, size, size, generator=torch.Generator().manual_seed(0)).to(device)
    index = torch.arange(batch)
    times = _interleaved(
        device,
        lambda _: plain(images),
        lambda step: keyed(images, index=index + step * batch, epoch=0),
        rounds,
        reps,
    )
    plain_s, keyed_s = statistics.median(times["plain"]), statistics.median(times["keyed"])
    return {
        "device": str(device),
        "jitter_order": "fixed" if fixed else "random",
        "size": size,
        "batch": batch,
        "plain_ms": plain_s * 1e3,
        "keyed_ms": keyed_s * 1e3,
        "speed": plain_s / keyed_s,
    }


def _interleaved(
    device: torch.device, plain: Any, keyed: Any, rounds: int, reps: int
) -> dict[str, list[float]]:
    """Seconds per call of ``plain(step)`` and ``keyed(step)``, interleaved, after a warm-up."""
    times: dict[str, list[float]] = {"plain": [], "keyed": []}
    step = 0
    for round_ in range(rounds + 1):  # round 0 is the warm-up
        for name, run in (("plain", plain), ("keyed", keyed)):
            _sync(device)
            start = time.perf_counter()
            for _ in range(reps):
                run(step)
                step += 1
            _sync(device)
            if round_:
                times[name].append((time.perf_counter() - start) / reps)
    return times


def torchvision_race(size: int, batch: int, rounds: int, reps: int) -> dict[str, Any] | str:
    """A torchvision v2 pipeline per sample: a plain loop against BatchAugment (CPU).

    Like for like: both call the transform once per sample (the only way torchvision gives
    each sample its own parameters); plain draws from the global generator, BatchAugment
    seeds it from each key and puts it back. Needs torchvision (``.venv-tv``).
    """
    try:
        from torchvision.transforms import v2
    except ImportError:
        return "skipped: torchvision is not installed here (run this in .venv-tv)"
    transform = v2.Compose(
        [
            v2.RandomAffine(degrees=10.0, translate=(0.1, 0.1), scale=(0.8, 1.2)),
            v2.RandomHorizontalFlip(p=0.5),
            v2.ColorJitter(0.3, 0.3, 0.3, 0.02),
            v2.RandomResizedCrop((size, size), scale=(0.5, 1.0)),
        ]
    )
    keyed = BatchAugment(transform, seed=0)
    images = torch.rand(batch, 3, size, size, generator=torch.Generator().manual_seed(0))
    index = torch.arange(batch)
    times = _interleaved(
        torch.device("cpu"),
        lambda _: torch.stack([transform(image) for image in images]),
        lambda step: keyed(images, index=index + step * batch, epoch=0),
        rounds,
        reps,
    )
    plain_s, keyed_s = statistics.median(times["plain"]), statistics.median(times["keyed"])
    return {
        "device": "cpu",
        "library": "torchvision v2, one call per sample",
        "size": size,
        "batch": batch,
        "plain_ms": plain_s * 1e3,
        "keyed_ms": keyed_s * 1e3,
        "speed": plain_s / keyed_s,
    }


def _param_rows(params: list[Any]) -> torch.Tensor:
    columns = [
        value.reshape(value.shape[0], -1).double().cpu()
        for item in params
        for name, value in sorted(item.data.items())
        if name != "forward_input_shape" and value.is_floating_point() and value.dim() >= 1
    ]
    return torch.cat(columns, dim=1)


def device_checks(device: torch.device, batch: int, size: int) -> dict[str, Any]:
    """Keyed parameters on ``device`` against the CPU's; the device generator untouched."""
    images = torch.rand(batch, 3, size, size, generator=torch.Generator().manual_seed(1))
    index = torch.arange(batch)
    cpu = BatchAugment(make_transform(size), seed=3)
    on_device = BatchAugment(make_transform(size).to(device), seed=3)
    _, cpu_params = cpu(images, index=index, epoch=2, return_params=True)
    before = torch.cuda.get_rng_state(device)
    for _ in range(10):
        _, params = on_device(images.to(device), index=index, epoch=2, return_params=True)
    _sync(device)
    unchanged = bool(torch.equal(before, torch.cuda.get_rng_state(device)))
    got, expected = _param_rows(params), _param_rows(cpu_params)
    diff = float((got - expected).abs().max())
    close = bool(torch.allclose(got, expected, rtol=1e-6, atol=1e-6))
    epochs = torch.full((batch,), 2)
    keys = {d: DrawKeys.of_samples(3, cpu.stream, index, epochs, d) for d in ("cpu", device)}
    shape = torch.Size((batch, 7))
    uniforms = [
        keys[d].uniform(shape, (0, 1, 2), torch.device(d), torch.float32).cpu() for d in keys
    ]
    return {
        "uniforms_identical": bool(torch.equal(*uniforms)),
        "param_max_abs_diff": diff,
        "params_ok": close,  # within 1e-6, absolute or relative
        "cuda_rng_unchanged": unchanged,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the rows; print them (or JSON); exit 1 if a CUDA device check fails."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds and repetitions")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    rounds, reps = (5, 2) if args.quick else (11, 5)
    torch.set_num_threads(1)
    settings = {
        "torch": torch.__version__,
        "kornia": kornia.__version__,
        "threads": torch.get_num_threads(),
        "rounds": rounds,
        "reps_per_round": reps,
        "warmup_rounds": 1,
    }
    cpu = torch.device("cpu")
    rows = [race(cpu, 64, 256, rounds, reps), race(cpu, 64, 256, rounds, reps, fixed=False)]
    checks: dict[str, Any] = {"cuda": "skipped: no CUDA device (no CUDA row, no device check)"}
    if torch.cuda.is_available():
        cuda = torch.device("cuda")
        checks = device_checks(cuda, 256, 64)
        rows.append(race(cuda, 224, 256, rounds, reps))
    tv_reps = max(1, reps // 2)
    tv_row = torchvision_race(64, 256, rounds, tv_reps)
    settings["torchvision_reps_per_round"] = tv_reps
    result = {"settings": settings, "rows": rows, "torchvision": tv_row, "device_checks": checks}
    if args.json:
        print(json.dumps(result))
    else:
        print("settings:", ", ".join(f"{k}={v}" for k, v in settings.items()))
        for row in rows:
            print(
                f"{row['device']:>5} B={row['batch']} {row['size']}x{row['size']} "
                f"({row['jitter_order']} jitter order): plain "
                f"{row['plain_ms']:.1f} ms, BatchAugment {row['keyed_ms']:.1f} ms, "
                f"speed {row['speed']:.2f}x (goal >= 0.9)"
            )
        if isinstance(tv_row, dict):
            print(
                f"  cpu B={tv_row['batch']} {tv_row['size']}x{tv_row['size']} "
                f"({tv_row['library']}): plain loop {tv_row['plain_ms']:.1f} ms, "
                f"BatchAugment {tv_row['keyed_ms']:.1f} ms, speed {tv_row['speed']:.2f}x"
            )
        else:
            print("torchvision:", tv_row)
        print("device checks:", checks)
    names = ("uniforms_identical", "params_ok", "cuda_rng_unchanged")
    failed = "params_ok" in checks and not all(checks[name] for name in names)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
