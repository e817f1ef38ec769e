"""Choosing a BARTScore configuration on development documents and reporting it on held-out ones
(``bartscore meta-eval --select``; docs/selection.md): the candidates, and the plan that scores them.

The paper's best rows ("BARTScore Ω + Prompt", the machine-translation prompt) were chosen on the judgments they
report, which overstates what a chosen configuration keeps on unseen documents. Here:

    grid        the candidate configurations: checkpoints x directions x prompts (none, a prompt set averaged, each of
                its phrases alone) x prompt sides x chat instructions; the default configuration (the first
                checkpoint, the paper's direction, no prompt, the scorer's own instruction) always first
    GridPlan    every configuration's pairs gathered without a model (plan_benchmarks, under the scorer's identity),
                so that one engine call per checkpoint scores each distinct pair once (shared conditions and prefixes
                reused, the score cache making it resumable), and each configuration's scores read back from them

The split of each benchmark's documents into a development part and a held-out part is meta_eval._split; the choice
on the development part and the held-out values with their bootstrap intervals are meta_eval._selection_statistics;
the printed table and the CSV file are meta_eval._selection_report."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..options import EngineOptions, ScoringOptions
from ..scoring._pair_groups import PairCall
from ..scoring.protocols import ScorerIdentity
from .benchmarks import BENCHMARKS
from .scoring import (
    BenchmarksPlan,
    benchmark_results,
    benchmark_signatures,
    moses_detokenizer,
    plan_benchmarks,
    planned_directions,
)

# A pair as the engine sees it: condition, target, the condition's language code, the chat instruction.
PairKey = tuple[str, str, str | None, str | None]


@dataclass(frozen=True)
class Configuration:
    """One candidate. direction None: the paper's for each benchmark; prompt: the phrases scored (their mean), with
    prompt_name saying what they are (a set's name, "phrases", or the phrase itself); instruction: a chat instruction
    for every direction, or None for the scorer's own."""

    checkpoint: str
    checkpoint_name: str
    direction: str | None = None
    prompt: tuple[str, ...] | None = None
    prompt_name: str | None = None
    prompt_side: str = "encoder"
    instruction: str | None = None
    instruction_number: int = 0  # its place among the candidate instructions (1, 2, ...); 0 for the scorer's own

    def for_benchmark(self, benchmark: str) -> Configuration:
        """The configuration with the benchmark's direction filled in."""
        if self.direction is not None:
            return self
        return dataclasses.replace(self, direction=planned_directions(benchmark)[0])

    @property
    def name(self) -> str:
        name = f"{self.checkpoint_name} {self.direction or 'paper direction'}"
        if self.prompt is not None:
            label = f"'{self.prompt_name}'" if len(self.prompt) == 1 else f"{self.prompt_name}({len(self.prompt)})"
            name += f" +prompt {label} @{self.prompt_side}"
        if self.instruction is not None:
            name += f" +instruction {self.instruction_number}"
        return name

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "checkpoint": self.checkpoint,
            "direction": self.direction,
            "prompt": self.prompt_name,
            "prompt_phrases": list(self.prompt) if self.prompt else None,
            "prompt_side": self.prompt_side if self.prompt else None,
            "instruction": self.instruction,
        }


def build_grid(
    checkpoints: Sequence[str],
    *,
    directions: Sequence[str] | None = None,
    prompt: str | Sequence[str] | None = None,
    prompt_sides: Sequence[str] = ("encoder",),
    instructions: Sequence[str] = (),
    names: Callable[[str], str] = str,
) -> list[Configuration]:
    """The candidates, the default first: every checkpoint; the paper's direction and each of `directions`; no
    prompt, and for `prompt` (a set's name, one phrase, or phrases) the phrases averaged and each phrase alone, on
    each of `prompt_sides`; the scorer's own chat instruction and each of `instructions`. names: a checkpoint's
    display name."""
    phrases, prompt_name = _prompt_phrases(prompt)
    prompts: list[tuple[tuple[str, ...] | None, str | None]] = [(None, None)]
    if phrases:
        if len(phrases) > 1:
            prompts.append((phrases, prompt_name))
        prompts += [((phrase,), phrase) for phrase in phrases]
    grid = []
    for checkpoint in dict.fromkeys(checkpoints):
        for direction in [None, *dict.fromkeys(directions or ())]:
            for number, instruction in enumerate([None, *dict.fromkeys(instructions)]):
                for phrase_tuple, name in prompts:
                    for side in prompt_sides if phrase_tuple else prompt_sides[:1]:
                        grid.append(
                            Configuration(
                                checkpoint,
                                names(checkpoint),
                                direction,
                                phrase_tuple,
                                name,
                                side,
                                instruction,
                                number,
                            )
                        )
    return grid


def _prompt_phrases(prompt: str | Sequence[str] | None) -> tuple[tuple[str, ...], str | None]:
    if prompt is None:
        return (), None
    if isinstance(prompt, str):
        phrases = ScoringOptions(prompt=prompt).prompts
        return tuple(p for p in phrases if p is not None), prompt
    return tuple(prompt), "phrases"


def benchmark_grids(grid: Sequence[Configuration], benchmarks: Sequence[str]) -> dict[str, list[Configuration]]:
    """Each benchmark's candidates, directions filled in; a candidate that the paper's direction makes the same as
    another (a direction asked for that is the paper's) is kept once, in its first place."""
    return {name: list(dict.fromkeys(c.for_benchmark(name) for c in grid)) for name in benchmarks}


def lone_configuration(grids: Mapping[str, Sequence[Configuration]]) -> tuple[str, str] | None:
    """(the first benchmark whose grid leaves nothing to choose, the name of its one configuration or "none"), or None
    when every benchmark's grid has two configurations or more: a selection needs a choice on each."""
    for benchmark, configurations in grids.items():
        if len(configurations) < 2:
            return benchmark, configurations[0].name if configurations else "none"
    return None


# ----------------------------------------------------------------------------------------------------------------------
# scoring every configuration in one engine call per checkpoint


@dataclass(frozen=True)
class ScorerRecord:
    """A scorer's identity (bart_score.scoring.protocols.ScorerIdentity) as plain data: a loaded scorer's (of_scorer),
    or the options that make one, before it loads; a configuration with a chat instruction of its own plans with a
    copy whose options have it for every direction (for_configuration)."""

    model_label: str
    fields: tuple[str, ...]
    options: EngineOptions

    @classmethod
    def of_scorer(cls, scorer: ScorerIdentity) -> ScorerRecord:
        return cls(model_label=scorer.model_label, fields=tuple(scorer.signature_fields()), options=scorer.options)

    def signature_fields(self) -> list[str]:
        return list(self.fields)

    def for_configuration(self, configuration: Configuration) -> ScorerRecord:
        """The identity a configuration is planned and signed under: its own chat instruction, if it has one, for
        every direction."""
        if configuration.instruction is None:
            return self
        return dataclasses.replace(self, options=self.options.replace(instruction=configuration.instruction))


class GridPlan:
    """The pairs of one checkpoint's configurations on the benchmarks, and their scores once given.

    texts: {benchmark: {"source", "references", "hypothesis"}} as score_benchmarks reads them (already detokenized
    where the release does); grids: {benchmark: configurations of this checkpoint}; options: batching and progress,
    and the aggregation over references (None: the release's per benchmark); identity: the scorer's, loaded, or as
    its options tell before it loads (a ScorerRecord). Each configuration is planned once, by plan_benchmarks, and
    nothing is scored here: pairs holds the distinct pairs of them all, and scores() gives each configuration's
    results from the pairs' scores."""

    def __init__(
        self,
        texts: Mapping[str, Mapping[str, Sequence[Any]]],
        grids: Mapping[str, Sequence[Configuration]],
        options: ScoringOptions,
        identity: ScorerIdentity,
    ) -> None:
        record = ScorerRecord.of_scorer(identity)
        self.plans: dict[str, dict[Configuration, BenchmarksPlan]] = {}
        self.signatures: dict[str, dict[Configuration, str]] = {}
        self.pairs: dict[PairKey, None] = {}
        for benchmark, configurations in grids.items():
            self.plans[benchmark], self.signatures[benchmark] = {}, {}
            for configuration in configurations:
                plan = plan_benchmarks(
                    record.for_configuration(configuration),
                    {benchmark: texts[benchmark]},
                    options.replace(
                        directions=(configuration.direction,),
                        prompt=configuration.prompt,
                        prompt_side=configuration.prompt_side,
                    ),
                    detokenize=False,
                )
                self.plans[benchmark][configuration] = plan
                self.signatures[benchmark][configuration] = benchmark_signatures(plan)[benchmark]
                for request in plan.requests:
                    self.pairs.update(dict.fromkeys(_pair_keys(request.plan.call)))

    def ordered_pairs(self) -> list[PairKey]:
        """The distinct pairs, those of one instruction and condition together, so that the score cache's chunks
        keep a condition's pairs in one engine call."""
        return sorted(self.pairs, key=lambda key: (key[3] or "", key[2] or "", key[0]))

    def scores(self, values: Mapping[PairKey, float]) -> dict[str, dict[Configuration, np.ndarray]]:
        """Every configuration's per-record scores on each benchmark, from the scores of the pairs."""
        scores: dict[str, dict[Configuration, np.ndarray]] = {}
        for benchmark, plans in self.plans.items():
            scores[benchmark] = {}
            for configuration, plan in plans.items():
                calls = [[values[key] for key in _pair_keys(request.plan.call)] for request in plan.requests]
                result, _ = benchmark_results(plan, calls)
                assert configuration.direction is not None  # benchmark_grids fills it in
                scores[benchmark][configuration] = result[benchmark][configuration.direction]
        return scores


def _pair_keys(call: PairCall) -> list[PairKey]:
    """Each pair of an engine call as the engine sees it: with its condition's language code and chat instruction,
    which change its score."""
    count = len(call.conditions)
    languages: Sequence[str | None] = call.condition_lang or [None] * count
    instructions: Sequence[str | None] = call.instruction or [None] * count
    return list(zip(call.conditions, call.targets, languages, instructions))


def engine_arguments(pairs: Sequence[PairKey]) -> tuple[list[str], list[str], dict[str, list[Any]]]:
    """(conditions, targets, per-pair keywords) for scorer.score: condition_lang and instruction where any pair has
    one."""
    conditions = [key[0] for key in pairs]
    targets = [key[1] for key in pairs]
    keywords: dict[str, list[Any]] = {}
    for index, name in ((2, "condition_lang"), (3, "instruction")):
        if any(key[index] is not None for key in pairs):
            keywords[name] = [key[index] for key in pairs]
    return conditions, targets, keywords


def prepared_texts(datasets: Mapping[str, Any], detokenize: bool) -> dict[str, dict[str, Any]]:
    """Each benchmark's sources, references and hypotheses, Moses-detokenized once where the release does (with
    detokenize), so that the grid's many passes over them do not detokenize again."""
    detokenizer = moses_detokenizer() if detokenize and any(BENCHMARKS[n].detokenize for n in datasets) else None
    texts = {}
    for name, dataset in datasets.items():
        prepare = detokenizer if detokenizer and BENCHMARKS[name].detokenize else (lambda text: text)
        texts[name] = {
            "source": [prepare(text) for text in dataset["source"]],
            "references": [[prepare(text) for text in refs] for refs in dataset["references"]],
            "hypothesis": [prepare(text) for text in dataset["hypothesis"]],
        }
    return texts
