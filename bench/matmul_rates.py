"""Matmul rates, and the timing they share with bench_machine.py: the peak (torch.mm on square matrices), and the rate
that a call's own shapes allow. For the latter, each distinct matrix product of a profiled call (aten::mm, addmm and
bmm, at the input shapes torch's profiler recorded) runs again alone, on fresh operands of those shapes, so that a
stage's matmul rate in the call can be set beside the rate its products reach with nothing between them. Where the
two are close, the stage's products run as fast as their shapes allow on this machine, and the gap to the square peak
is the shapes' (few rows, narrow widths), not the engine's."""

from __future__ import annotations

import time
from collections import defaultdict

import torch

PEAK_SIZE = {"cpu": 2048, "cuda": 8192}  # the square matmul that measures the peak
MATMUL_OPS = ("aten::mm", "aten::addmm", "aten::bmm")
# The distinct products timed per stage, the most FLOPs first; the rest (a small share of a stage's FLOPs, on the
# longest-tailed calls) are taken at the timed ones' rate.
MOST_PRODUCTS = 40


class CallProducts:
    """FLOPs of each stage's matrix products, per (op, operand shapes), gathered from a profile's events."""

    def __init__(self) -> None:
        self.flops: dict[str, dict[tuple, float]] = defaultdict(lambda: defaultdict(float))

    def add(self, stage: str, event) -> None:
        if event.name in MATMUL_OPS and event.flops:
            shapes = tuple(tuple(shape) for shape in event.input_shapes[: 3 if event.name == "aten::addmm" else 2])
            self.flops[stage][(event.name, shapes)] += event.flops

    def rates_alone(self, dtype: torch.dtype, device: torch.device) -> dict[str, float]:
        """{stage: FLOP/s of its products run alone}: their FLOPs over the time each product takes at its own rate."""
        rates = {}
        for stage, products in self.flops.items():
            largest = sorted(products.items(), key=lambda item: -item[1])[:MOST_PRODUCTS]
            seconds = sum(flops / _rate_alone(name, shapes, dtype, device) for (name, shapes), flops in largest)
            rates[stage] = sum(flops for _, flops in largest) / seconds
        return rates


def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def matmul_peak(dtype, device, seconds=1.0):
    """FLOP/s of the best of torch.mm calls on square matrices (at least 3 calls, and `seconds`), and the cores that
    call had (its process CPU time over its wall time)."""
    size = PEAK_SIZE[device.type]
    a, b = (torch.randn(size, size, device=device).to(dtype) for _ in range(2))
    out = torch.empty(size, size, device=device, dtype=dtype)
    torch.mm(a, b, out=out)
    calls, start = [], time.perf_counter()
    while len(calls) < 3 or time.perf_counter() - start < seconds:
        calls.append(timed(lambda: torch.mm(a, b, out=out), device, 1))
    wall, cpu, _ = min(calls, key=lambda call: call[0])
    return 2 * size**3 / wall, cpu / wall


def timed(run, device, repeat):
    """(wall seconds, process CPU seconds, result) of the fastest of `repeat` calls."""
    calls = []
    for _ in range(repeat):
        synchronize(device)
        wall, cpu = time.perf_counter(), time.process_time()
        result = run()
        synchronize(device)
        calls.append((time.perf_counter() - wall, time.process_time() - cpu, result))
    return min(calls, key=lambda call: call[0])


def _rate_alone(name: str, shapes: tuple, dtype: torch.dtype, device: torch.device) -> float:
    """FLOP/s of the best of three calls of one product (after one call to warm it up) on random operands."""
    operands = [torch.randn(shape, dtype=dtype, device=device) for shape in shapes]
    product = {"aten::mm": torch.mm, "aten::addmm": torch.addmm, "aten::bmm": torch.bmm}[name]
    *batch, rows, inner = operands[-2].shape
    flops = 2 * rows * inner * operands[-1].shape[-1] * (batch[0] if batch else 1)
    product(*operands)
    wall, _, _ = timed(lambda: product(*operands), device, 3)
    return flops / wall
