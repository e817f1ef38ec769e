"""The matmul rate that a call's own shapes allow. Each distinct matrix product of a profiled call (aten::mm, addmm
and bmm, at the input shapes torch's profiler recorded) runs again alone, on fresh operands of those shapes, so that
a stage's matmul rate in the call can be set beside the rate its products reach with nothing between them. Where the
two are close, the stage's products run as fast as their shapes allow on this machine, and the gap to the square
peak is the shapes' (few rows, narrow widths), not the engine's. Used by bench_machine.py."""

from __future__ import annotations

import time
from collections import defaultdict

import torch

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


def _rate_alone(name: str, shapes: tuple, dtype: torch.dtype, device: torch.device) -> float:
    """FLOP/s of the best of three calls of one product (after one call to warm it up) on random operands."""
    operands = [torch.randn(shape, dtype=dtype, device=device) for shape in shapes]
    product = {"aten::mm": torch.mm, "aten::addmm": torch.addmm, "aten::bmm": torch.bmm}[name]
    *batch, rows, inner = operands[-2].shape
    flops = 2 * rows * inner * operands[-1].shape[-1] * (batch[0] if batch else 1)
    product(*operands)
    best = float("inf")
    for _ in range(3):
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        start = time.perf_counter()
        product(*operands)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        best = min(best, time.perf_counter() - start)
    return flops / best
