"""Data-parallel scoring on torch.distributed: how one call's work is split across ranks, and how results meet again.

Under torchrun or accelerate every rank passes the same inputs to the engine, scores its share on its own device, and
the results are gathered to every rank (or to rank 0)."""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import torch

from ..errors import InputError, ScoringError
from ..inputs import ascii_integer
from ..messages import Mention, Part

Result = TypeVar("Result")
# A plan's pairs grouped by condition: condition -> its pairs.
Share = dict[int, list[int]]


class Workload(Protocol):
    """What ProcessGroup.share needs of a call's plan (bart_score.scoring.engine.Plan is one), so that this module
    stands below the engine: the distinct pairs as (condition, target) indices, each condition's pairs, and token
    lengths."""

    @property
    def pairs(self) -> Sequence[tuple[int, int]]: ...

    @property
    def pairs_by_condition(self) -> Mapping[int, Sequence[int]]: ...

    def condition_length(self, condition: int) -> int: ...

    def target_length(self, target: int) -> int: ...


def process_group(enabled: bool = True) -> ProcessGroup | None:
    """This process's torch.distributed group as a ProcessGroup, or None when not distributed (or not enabled)."""
    if not enabled or not torch.distributed.is_available() or not torch.distributed.is_initialized():
        return None
    world = torch.distributed.get_world_size()
    return ProcessGroup(world, torch.distributed.get_rank()) if world > 1 else None


@dataclass
class ProcessGroup:
    """This process's place in a torch.distributed group, and how a scoring call is split across the group."""

    world: int
    rank: int

    def share(self, plan: Workload) -> Share:
        """This rank's pairs, grouped by condition. The work (each condition's tokens, then its targets' tokens) is
        laid end to end and cut into consecutive runs, one per rank, at the smallest per-rank token load that ranks
        filled in turn can hold (found by bisection, to within 0.5%). A condition cut between two ranks is encoded by
        both: at most world - 1 extra encoder passes. Every rank computes the same assignment."""
        low = (
            max(
                plan.condition_length(c) + max(plan.target_length(plan.pairs[p][1]) for p in pairs)
                for c, pairs in plan.pairs_by_condition.items()
            )
            if plan.pairs
            else 0
        )
        high = sum(map(plan.condition_length, plan.pairs_by_condition)) + sum(
            plan.target_length(t) for _, t in plan.pairs
        )
        while high - low > max(1, low // 200):
            middle = (low + high) // 2
            if self._fill(plan, middle) is None:
                low = middle
            else:
                high = middle
        shares = self._fill(plan, high)
        assert shares is not None  # bisection keeps `high` at a load the ranks can hold
        return shares[self.rank]

    def _fill(self, plan: Workload, capacity: int) -> list[Share] | None:
        """Ranks take the work in order, each up to `capacity` tokens; None if `world` ranks cannot hold it."""
        shares: list[Share] = [{}]
        load = 0
        for condition, pairs in plan.pairs_by_condition.items():
            for pair in pairs:
                target = plan.target_length(plan.pairs[pair][1])
                cost = target if condition in shares[-1] else target + plan.condition_length(condition)
                if load and load + cost > capacity:
                    if len(shares) == self.world:
                        return None
                    shares.append({})
                    load, cost = 0, target + plan.condition_length(condition)
                shares[-1].setdefault(condition, []).append(pair)
                load += cost
        return shares + [{} for _ in range(self.world - len(shares))]

    def raise_if_any_failed(self, error: BaseException | None, device: torch.device) -> None:
        """Every rank learns that another failed (rather than waiting forever for its results) and raises too."""
        errors: list[str | None] = [None] * self.world
        with current_device(device):
            torch.distributed.all_gather_object(errors, None if error is None else f"{type(error).__name__}: {error}")
        if error is not None:
            raise error
        for rank, message in enumerate(errors):
            if message is not None:
                raise ScoringError(f"rank {rank} failed, so this call has no results: {message}")

    def gather(
        self, results: dict[int, Result] | None, results_on: str, device: torch.device
    ) -> dict[int, Result] | None:
        """Every rank's results, merged, on every rank (results_on="all") or on rank 0 only (others get None)."""
        parts: list[Any] | None  # each rank's results, as the collectives fill them in
        with current_device(device):
            if results_on == "all":
                parts = [None] * self.world
                torch.distributed.all_gather_object(parts, results)
            else:
                parts = [None] * self.world if self.rank == 0 else None
                torch.distributed.gather_object(results, parts, dst=0)
        if parts is None:
            return None
        return {pair: value for part in parts for pair, value in part.items()}

    def check_same_inputs(self, conditions: Sequence[str], targets: Sequence[str], device: torch.device) -> None:
        """The engine splits one shared workload across ranks; ranks that pass different inputs would get wrong
        results, so that is refused on every rank (the metric gathers per-rank examples itself)."""
        digest = hashlib.sha1()
        for text in (*conditions, *targets):
            digest.update(text.encode("utf-8", "surrogatepass") + b"\0")
        digests: list[Any] = [None] * self.world  # (pair count, digest) per rank, once gathered
        with current_device(device):
            torch.distributed.all_gather_object(digests, (len(conditions), digest.hexdigest()))
        if len(set(digests)) > 1:
            raise InputError(
                Mention("srcs"),
                " and ",
                Mention("tgts"),
                f" differ between ranks ({[count for count, _ in digests]} pairs per rank), which split one workload",
                remedy=["use the metric's compute (it gathers the ranks' examples) or ", Mention("distributed", False)],
            )

    def gather_examples(
        self,
        predictions: Sequence[Any],
        references: Sequence[Any],
        sources: Sequence[Any],
        given: dict[str, bool],
        device: torch.device,
    ) -> tuple[list[Any], list[Any], list[Any], dict[str, bool]]:
        """All ranks' metric examples, in rank order, on every rank; refused on every rank if the ranks gave
        different kinds of inputs."""
        parts: list[Any] = [None] * self.world  # (predictions, references, sources, given) per rank, once gathered
        with current_device(device):
            torch.distributed.all_gather_object(parts, (predictions, references, sources, given))
        kinds = {tuple(sorted(part[3].items())) for part in parts}
        if len(kinds) > 1:
            described: list[Part] = []  # each rank's inputs: "references and sources, predictions only"
            for rank, part in enumerate(parts):
                described += [", "] if rank else []
                names = [name for name, was_given in part[3].items() if was_given]
                for number, name in enumerate(names):
                    described += [" and ", Mention(name)] if number else [Mention(name)]
                described += [] if names else ["predictions only"]
            raise InputError("the ranks gave different inputs (", *described, "); every rank must give the same ones")
        return (
            [x for part in parts for x in part[0]],
            [x for part in parts for x in part[1]],
            [x for part in parts for x in part[2]],
            given,
        )


def current_device(device: torch.device) -> contextlib.AbstractContextManager[Any]:
    """Object collectives over NCCL run on the current CUDA device, which must be this process's own."""
    return torch.cuda.device(device) if device.type == "cuda" else contextlib.nullcontext()


def default_device() -> str:
    """CUDA when available (under torchrun / accelerate, this process's GPU: LOCAL_RANK), else the CPU."""
    if not torch.cuda.is_available():
        return "cpu"
    return f"cuda:{_launcher_number('LOCAL_RANK', 0) % torch.cuda.device_count()}"


def _launcher_number(name: str, default: int) -> int:
    """A count or index that torchrun or accelerate sets in the environment (WORLD_SIZE, LOCAL_RANK): ASCII digits."""
    text = os.environ.get(name)
    if text is None:
        return default
    number = ascii_integer(text)
    if number is None or number < 0:
        raise InputError(f"the environment variable {name} is {text!r}, not a whole number in ASCII digits (0-9)")
    return number


@contextlib.contextmanager
def torchrun_process_group() -> Iterator[None]:
    """Under torchrun (WORLD_SIZE > 1, no group yet) joins the group for the duration, then leaves it cleanly."""
    launched = _launcher_number("WORLD_SIZE", 1) > 1 and not torch.distributed.is_initialized()
    if launched:
        torch.distributed.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    try:
        yield
    finally:
        if launched:
            torch.distributed.barrier()  # no rank tears the group down while another still uses it
            torch.distributed.destroy_process_group()
