"""Choosing a BARTScore configuration on development documents and reporting it on held-out ones
(``bartscore meta-eval --select``; docs/selection.md).

The paper's best rows ("BARTScore Ω + Prompt", the machine-translation prompt) were chosen on the judgments they
report, which overstates what a chosen configuration keeps on unseen documents. Here:

    grid        the candidate configurations: checkpoints x directions x prompts (none, a prompt set averaged, each of
                its phrases alone) x prompt sides x chat instructions; the default configuration (the first
                checkpoint, the paper's direction, no prompt, the scorer's own instruction) always first
    split       each benchmark's documents into a development part and a held-out part by a seeded hash of the
                document's key (its doc_id; for WMT19 and data-to-text, where several records judge outputs for one
                input, the source text), so that the outputs for one input never straddle the parts
    GridPlan    every configuration's pairs gathered without a model, so that one engine call per checkpoint scores
                each distinct pair once (shared conditions and prefixes reused, the score cache making it resumable)
    select      per benchmark and aspect: the configuration best on the development part, its held-out value with a
                bootstrap interval that resamples held-out documents (scipy.stats.bootstrap), the default's beside it,
                and the paper's published value"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from ..errors import InputError
from ..options import ScoringOptions
from ..outputs import spreadsheet_cell
from ..pair_groups import PairCall
from ..scorer import ScorerIdentity
from .benchmarks import BENCHMARKS
from .protocol import MEASURES, correlate
from .published import PUBLISHED, Published
from .scoring import (
    BenchmarksPlan,
    benchmark_results,
    benchmark_signatures,
    moses_detokenizer,
    plan_benchmarks,
    planned_directions,
)
from .split import DEFAULT_DEV_FRACTION, DEFAULT_SEED, MIN_DOCUMENTS, split_keys, split_records, split_unit

RESAMPLES = 2000
CONFIDENCE = 0.95

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
    """A scorer's identity (bart_score.scorer.ScorerIdentity) as plain data: a loaded scorer's (of_scorer), or what
    the options that make one tell before it loads; a configuration with a chat instruction of its own plans with a
    copy that has it for every direction (for_configuration)."""

    model_label: str
    fields: tuple[str, ...]
    source_lang: str | None
    target_lang: str | None
    instructions: Mapping[str, str] | None

    @classmethod
    def of_scorer(cls, scorer: ScorerIdentity) -> ScorerRecord:
        return cls(
            model_label=scorer.model_label,
            fields=tuple(scorer.signature_fields()),
            source_lang=scorer.source_lang,
            target_lang=scorer.target_lang,
            instructions=scorer.instructions,
        )

    def signature_fields(self) -> list[str]:
        return list(self.fields)

    def for_configuration(self, configuration: Configuration) -> ScorerRecord:
        """The identity a configuration is planned and signed under: its own chat instruction, if it has one, for
        every direction."""
        if configuration.instruction is None:
            return self
        instruction = configuration.instruction
        return dataclasses.replace(self, instructions={d: instruction for d in ("faithfulness", "precision", "recall")})


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


# ----------------------------------------------------------------------------------------------------------------------
# choosing, and the held-out values


def measure(benchmark: str) -> str:
    """The measure the paper reports for a benchmark (its protocol's first)."""
    return MEASURES[BENCHMARKS[benchmark].protocol][0]


def value_on(benchmark: str, dataset: Any, aspect: str, scores: np.ndarray, rows: np.ndarray) -> dict[str, float]:
    """The protocol's measures on the records at `rows`, with the documents used."""
    all_ids = dataset["doc_id"]  # a Dataset builds a column anew at each lookup: once here
    doc_ids = [all_ids[row] for row in rows]
    human = np.asarray(dataset[f"human_{aspect}"], dtype=np.float64)[rows]
    measures = correlate(BENCHMARKS[benchmark].protocol, doc_ids, human, np.asarray(scores)[rows])
    return {"value": float(measures[measure(benchmark)]), "documents": int(measures["documents"])}


def bootstrap_interval(
    benchmark: str,
    dataset: Any,
    aspect: str,
    scores: np.ndarray,
    rows: np.ndarray,
    *,
    seed: int,
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """A percentile bootstrap interval of the measure on the records at `rows`, resampling their split units
    (documents; source texts for WMT19 and data-to-text) with replacement. Summary-level Spearman is the mean of
    per-document values, so its documents' values are resampled directly; the other protocols recompute the measure
    on each resample's records, a unit drawn twice counting twice. (nan, nan) with fewer than two units."""
    protocol = BENCHMARKS[benchmark].protocol
    human = np.asarray(dataset[f"human_{aspect}"], dtype=np.float64)
    scores = np.asarray(scores, dtype=np.float64)
    doc_ids = list(dataset["doc_id"])
    keys = split_keys(benchmark, dataset)
    units: dict[str, list[int]] = {}
    for row in rows:
        units.setdefault(keys[row] if protocol != "summary_level" else doc_ids[row], []).append(int(row))
    rng = np.random.default_rng(seed)
    if protocol == "summary_level":
        per_document = []
        for positions in units.values():
            truth, predicted = human[positions], scores[positions]
            if len(set(truth.tolist())) > 1 and len(set(predicted.tolist())) > 1:
                per_document.append(stats.spearmanr(truth, predicted)[0])
        if len(per_document) < 2:
            return float("nan"), float("nan")
        result = stats.bootstrap(
            (np.asarray(per_document),),
            np.mean,
            n_resamples=resamples,
            confidence_level=confidence,
            method="percentile",
            random_state=rng,  # rng= is scipy 1.15's name; the project allows 1.11
        )
        return float(result.confidence_interval.low), float(result.confidence_interval.high)
    members = list(units.values())
    if len(members) < 2:
        return float("nan"), float("nan")

    def statistic(drawn: np.ndarray) -> float:
        positions = [position for unit in drawn.astype(int) for position in members[unit]]
        relabelled = [f"{place}:{doc_ids[p]}" for place, unit in enumerate(drawn.astype(int)) for p in members[unit]]
        measures = correlate(protocol, relabelled, human[positions], scores[positions])
        return float(measures[measure(benchmark)])

    result = stats.bootstrap(
        (np.arange(len(members)),),
        statistic,
        n_resamples=resamples,
        confidence_level=confidence,
        method="percentile",
        vectorized=False,
        random_state=rng,
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def check_aspects(benchmarks: Sequence[str], aspects: Sequence[str] | None) -> None:
    """Every benchmark has human judgments of every requested aspect (InputError naming both, else)."""
    for benchmark in benchmarks:
        for aspect in aspects or ():
            if aspect not in BENCHMARKS[benchmark].aspects:
                raise InputError(
                    f"{benchmark} ({BENCHMARKS[benchmark].title}) has no human judgments of {aspect!r}; its aspects "
                    f"are {', '.join(BENCHMARKS[benchmark].aspects)}"
                )


def paper_value(benchmark: str, aspect: str) -> Published | None:
    """The paper's BARTScore value for the column: its chosen "Ω + Prompt" row where it has one, else its first
    BARTScore row."""
    entries = [e for e in PUBLISHED if e.column == f"{benchmark}/{aspect}" and e.metric.startswith("BARTScore")]
    chosen = [e for e in entries if e.variant == "omega"]
    found = chosen or entries
    return found[0] if found else None


def select(
    datasets: Mapping[str, Any],
    scores: Mapping[str, Mapping[Configuration, np.ndarray]],
    *,
    dev_fraction: float = DEFAULT_DEV_FRACTION,
    seed: int = DEFAULT_SEED,
    aspects: Sequence[str] | None = None,
    resamples: int = RESAMPLES,
) -> dict[str, Any]:
    """Per benchmark and aspect (all of the benchmark's, or `aspects`): the configuration best on the development
    part (a tie keeps the earlier one; the default, first, wins ties), its held-out value with a bootstrap interval,
    the default configuration's (each benchmark's first) beside it, the paper's value, and every configuration's
    development and held-out values. scores: {benchmark: {configuration: per-record scores}}, from GridPlan.scores.
    Returns a dict ready for JSON."""
    check_aspects(list(datasets), aspects)
    lone = lone_configuration({benchmark: list(scores[benchmark]) for benchmark in datasets})
    if lone is not None:
        raise InputError(
            f"{lone[0]}: the grid has one configuration ({lone[1]}), so there is nothing to select; score_benchmarks "
            f"gives its value on all the documents"
        )
    columns = []
    split = {}
    for benchmark, records in datasets.items():
        # The columns read, as lists: a Dataset builds a column anew at each lookup.
        wanted = ["doc_id", "source", *(f"human_{a}" for a in aspects or BENCHMARKS[benchmark].aspects)]
        dataset = {column: list(records[column]) for column in wanted}
        development, held_out = split_records(benchmark, dataset, dev_fraction, seed)
        keys = split_keys(benchmark, dataset)
        split[benchmark] = {
            "unit": split_unit(benchmark),
            "development": list(dict.fromkeys(keys[row] for row in development)),
            "held_out": list(dict.fromkeys(keys[row] for row in held_out)),
        }
        for aspect in aspects or BENCHMARKS[benchmark].aspects:
            columns.append(
                _column(benchmark, dataset, aspect, scores[benchmark], (development, held_out), seed, resamples)
            )
    return {
        "selection": {
            "dev_fraction": dev_fraction,
            "seed": seed,
            "split": "SHA-256 of '<seed>:<key>', its first 8 bytes as a fraction of 2**64, below dev_fraction",
            "minimum_documents": MIN_DOCUMENTS,
            "bootstrap": {
                "method": "percentile",
                "resamples": resamples,
                "confidence": CONFIDENCE,
                "resampled": "held-out documents (source texts for WMT19 and data-to-text)",
            },
        },
        "split": split,
        "columns": columns,
    }


def _column(
    benchmark: str,
    dataset: Mapping[str, list[Any]],
    aspect: str,
    scores: Mapping[Configuration, np.ndarray],
    parts: tuple[np.ndarray, np.ndarray],
    seed: int,
    resamples: int,
) -> dict[str, Any]:
    """One column of the selection (a benchmark's aspect): every configuration's development and held-out values, the
    best on the development part and the default (the first) with held-out bootstrap intervals, and the paper's
    value. parts: the (development, held-out) rows of the dataset."""
    development, held_out = parts
    candidates: list[dict[str, Any]] = []
    for configuration in scores:
        values = scores[configuration]
        candidates.append(
            {
                "configuration": configuration,
                "development": value_on(benchmark, dataset, aspect, values, development),
                "held_out": value_on(benchmark, dataset, aspect, values, held_out),
            }
        )
    usable = [c for c in candidates if not np.isnan(c["development"]["value"])]
    best = max(usable, key=lambda c: c["development"]["value"]) if usable else candidates[0]
    chosen = {}
    for role, entry in (("best", best), ("default", candidates[0])):
        low, high = bootstrap_interval(
            benchmark,
            dataset,
            aspect,
            scores[entry["configuration"]],
            held_out,
            seed=seed,
            resamples=resamples,
        )
        chosen[role] = {
            "name": entry["configuration"].name,
            "development": entry["development"]["value"],
            "held_out": entry["held_out"]["value"],
            "interval": [low, high],
            "development_documents": entry["development"]["documents"],
            "held_out_documents": entry["held_out"]["documents"],
        }
    paper = paper_value(benchmark, aspect)
    return {
        "key": f"{benchmark}/{aspect}",
        "benchmark": benchmark,
        "aspect": aspect,
        "measure": measure(benchmark),
        **chosen,
        "optimism": chosen["best"]["development"] - chosen["best"]["held_out"],
        "paper": {"metric": paper.metric, "value": paper.value, "source": paper.source} if paper else None,
        "configurations": [
            {
                "name": c["configuration"].name,
                "development": c["development"]["value"],
                "held_out": c["held_out"]["value"],
            }
            for c in candidates
        ],
    }


# ----------------------------------------------------------------------------------------------------------------------
# the table and files


def _number(value: float | None, signed: bool = False) -> str:
    if value is None or math.isnan(value):
        return "nan"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _interval(bounds: Sequence[float]) -> str:
    return f"[{_number(bounds[0])}, {_number(bounds[1])}]"


def render(report: Mapping[str, Any]) -> str:
    """The printed table: per benchmark and aspect, the configuration chosen on the development part with its
    development and held-out values, the default's, and the paper's value."""
    selection = report["selection"]
    lines = [
        f"Configuration chosen on the development documents ({selection['dev_fraction']:.0%} by a hash of each "
        f"document, seed {selection['seed']}), reported on the held-out documents with a "
        f"{selection['bootstrap']['confidence']:.0%} bootstrap interval ({selection['bootstrap']['resamples']} "
        f"resamples of the held-out documents); optimism = development - held-out"
    ]
    for column in report["columns"]:
        benchmark = column["benchmark"]
        split = report["split"][benchmark]
        unit = "documents" if split["unit"] == "doc_id" else "source texts"
        lines += [
            "",
            f"{BENCHMARKS[benchmark].title} {column['aspect']} ({column['measure']}; {len(split['development'])} "
            f"development, {len(split['held_out'])} held-out {unit})",
        ]
        width = max(len(column["best"]["name"]), len(column["default"]["name"]))
        for role, label in (("best", "chosen "), ("default", "default")):
            entry = column[role]
            line = (
                f"  {label}  {entry['name'].ljust(width)}  development {_number(entry['development'])}  held-out "
                f"{_number(entry['held_out'])} {_interval(entry['interval'])}"
            )
            if role == "best":
                line += f"  optimism {_number(column['optimism'], signed=True)}"
            lines.append(line)
        paper = column["paper"]
        if paper:
            lines.append(f"  paper    {paper['metric']} {paper['value']:.3f} (all documents; {paper['source']})")
    return "\n".join(lines)


CSV_FIELDS = (
    "column",
    "benchmark",
    "aspect",
    "measure",
    "configuration",
    "role",
    "development",
    "held_out",
    "held_out_low",
    "held_out_high",
    "paper",
    "paper_metric",
)


def report_csv(report: Mapping[str, Any]) -> str:
    """One line per benchmark-aspect column and configuration; role says which was chosen and which is the default
    (intervals are computed for those two)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    for column in report["columns"]:
        for entry in column["configurations"]:
            roles = [
                label
                for role, label in (("best", "chosen"), ("default", "default"))
                if column[role]["name"] == entry["name"]
            ]
            interval = column["best" if "chosen" in roles else "default"]["interval"] if roles else [None, None]
            paper = column["paper"] or {}
            line = {
                "column": column["key"],
                "benchmark": column["benchmark"],
                "aspect": column["aspect"],
                "measure": column["measure"],
                "configuration": spreadsheet_cell(entry["name"]),
                "role": ", ".join(roles),
                "development": entry["development"],
                "held_out": entry["held_out"],
                "held_out_low": interval[0],
                "held_out_high": interval[1],
                "paper": paper.get("value"),
                "paper_metric": paper.get("metric", ""),
            }
            writer.writerow(
                {k: "" if v is None or (isinstance(v, float) and math.isnan(v)) else v for k, v in line.items()}
            )
    return out.getvalue()
