"""The scorers of a run on Ray (bart_score.scaling.cluster): the pool the cluster can hold (actors, GPUs, rows per
batch), what a scorer of the run's options gives (found on the cluster before any row is scored), the actor that
scores batches of rows, its errors named by row, and the rows' signatures."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..corpora.corpus import Corpus, score_corpus
from ..errors import BARTScoreError, InputError, ScoringError, first_line
from ..inputs import check_text, counted, describe
from ..messages import Mention, Part
from ..options import (
    BATCHES_PER_ACTOR,
    BATCHES_PER_ACTOR_TARGET,
    MAX_AUTO_BATCH_ROWS,
    ClusterOptions,
    EngineOptions,
    ScoringOptions,
)
from ..scoring.signature import Signature
from ._cluster_input import _Columns

if TYPE_CHECKING:
    import pyarrow

    from ..scoring.engine import BARTScorer

# Ray Data reads a table with one task and writes with another besides the scorers, and a rerun adds its checkpoint
# filter (an actor of one CPU): a pool that leaves them no CPU waits forever.
READ_AND_WRITE_CPUS = 2
CHECKPOINT_FILTER_CPUS = 1
SHOWN_IDS = 3
SIGNATURE_COLUMN = "signature"


@dataclass(frozen=True)
class _Placement:
    """Where the scorers run: how many actors, the GPUs of each (0 or 1), and the rows of a batch."""

    actors: int
    gpus: int
    rows_per_batch: int


@dataclass(frozen=True)
class _Scoring:
    """What a scorer of these options gives, found before any row is scored: the signature of its scores without the
    number of references (Signature.reference_counts None), and the output's columns after the id."""

    identity: str
    columns: tuple[str, ...]


def _placement(
    ray: ModuleType, engine: EngineOptions, cluster: ClusterOptions, *, rows: int, rerun: bool
) -> _Placement:
    """The pool the cluster can hold for `rows` rows to score: one actor per GPU (each with its GPU) or the actors
    asked for, no more than the batches need (_sized), and the CPUs they, the reads and writes, and on a rerun the
    checkpoint filter need; refused rather than left waiting."""
    resources = ray.cluster_resources()
    cpus, gpus = int(resources.get("CPU", 0)), int(resources.get("GPU", 0))
    device = str(engine.device) if engine.device is not None else None
    if device == "cuda" and not gpus:
        raise InputError(
            Mention("device", "cuda"),
            " asks for GPUs, and the Ray cluster has none",
            remedy="leave it out to score on the CPUs",
        )
    on_gpus = gpus > 0 and device in (None, "cuda")
    actors = cluster.actors or (gpus if on_gpus else 1)
    if on_gpus and actors > gpus:
        raise InputError(
            Mention("actors", actors),
            f" need a GPU each, and the Ray cluster has {counted(gpus, 'GPU')}",
            remedy=f"ask for {gpus} at most",
        )
    actors, rows_per_batch = _sized(actors, rows, cluster.rows_per_batch)
    needed = actors + READ_AND_WRITE_CPUS + (CHECKPOINT_FILTER_CPUS if rerun else 0)
    if cpus < needed:
        uses = f"{READ_AND_WRITE_CPUS} for reading and writing" + (", 1 for the checkpoint filter" if rerun else "")
        raise InputError(
            Mention("actors", actors),
            f" take a CPU each, and with {uses} the run needs {needed}; the Ray cluster has {cpus}",
            remedy=f"ask for {max(cpus - needed + actors, 0)} actors at most, or give the cluster more CPUs",
        )
    return _Placement(actors, 1 if on_gpus else 0, rows_per_batch)


def _sized(actors: int, rows: int, rows_per_batch: int | None) -> tuple[int, int]:
    """(actors, rows per batch) for `rows` rows and the actors asked for: the batches BATCHES_PER_ACTOR_TARGET per
    actor, of at most MAX_AUTO_BATCH_ROWS rows, unless rows_per_batch is given; then the actors cut to one per
    BATCHES_PER_ACTOR batches, so that each gets several and none loads a model for nothing."""
    if rows_per_batch is None:
        rows_per_batch = min(MAX_AUTO_BATCH_ROWS, max(1, -(-rows // (actors * BATCHES_PER_ACTOR_TARGET))))
    batches = -(-max(rows, 1) // rows_per_batch)
    return min(actors, -(-batches // BATCHES_PER_ACTOR)), rows_per_batch


def _scoring_remotely(
    ray: ModuleType, placement: _Placement, engine: EngineOptions, options: ScoringOptions, columns: _Columns
) -> _Scoring:
    """_scoring on one of the cluster's workers, placed as a scorer is: the model loaded where the scorers load it,
    checked against the options (and a baseline found) before anything is scored."""
    task = ray.remote(num_cpus=1, num_gpus=placement.gpus)(_scoring)
    try:
        return ray.get(task.remote(engine, options, columns))
    except Exception as error:
        raise _said_as_ours(error) from None


def _scoring(engine: EngineOptions, options: ScoringOptions, columns: _Columns) -> _Scoring:
    """What a scorer of `engine` gives under `options` for the input's columns (see _Scoring): score_corpus on no
    rows."""
    return _scoring_of(_scorer(engine), options, columns)


def _scoring_of(scorer: BARTScorer, options: ScoringOptions, columns: _Columns) -> _Scoring:
    nothing = Corpus(
        {system: [] for system in columns.systems},
        sources=[] if columns.source is not None else None,
        references=[] if columns.references else None,
    )
    per_system, signature = score_corpus(scorer, nothing, options)
    assert per_system is not None and signature is not None  # a scorer of its own (distributed=False) has results
    keys = list(next(iter(per_system.values())))
    names = tuple(f"{system}/{key}" for system in columns.systems for key in keys)
    return _Scoring(_on_ray(Signature.parse(signature)).format(), names)


def _scorer(engine: EngineOptions) -> BARTScorer:
    from ..scoring.engine import BARTScorer

    return BARTScorer(engine.replace(distributed=False))


def _on_ray(signature: Signature) -> Signature:
    """The signature of a score computed on Ray: the engine's fields and Ray's version."""
    import ray

    return dataclasses.replace(signature, scorer_fields=(*signature.scorer_fields, f"ray:{ray.__version__}"))


def _said_as_ours(error: BaseException) -> BARTScoreError:
    """A failure on the cluster as an error of the family: the error of ours it carries (a batch's, naming its rows,
    or a check's), else a ScoringError saying Ray's in one line."""
    chain = [error]
    while len(chain) < 10:
        cause = getattr(chain[-1], "cause", None) or chain[-1].__cause__  # a RayTaskError keeps the original as cause
        if not isinstance(cause, BaseException) or cause in chain:
            break
        chain.append(cause)
    ours = [e for e in chain if isinstance(e, BARTScoreError) and type(e).__module__.startswith("bart_score")]
    if ours:
        return ours[-1]
    return ScoringError(f"the run on Ray failed: {type(error).__name__}: {first_line(error)}")


class _BatchScorer:
    """A Ray actor of the pool: one scorer, loaded once, scoring batches of rows into the output's columns (names,
    in the order _scoring found them) with each row's signature. A batch that fails raises an error of the family
    naming its row, or its rows."""

    def __init__(self, engine: EngineOptions, options: ScoringOptions, columns: _Columns, names: Sequence[str]) -> None:
        self.scorer = _scorer(engine)
        self.options, self.columns, self.names = options, columns, names

    def __call__(self, batch: pyarrow.Table) -> pyarrow.Table:
        import pyarrow

        ids = batch.column(self.columns.id).to_pylist()
        try:
            corpus = _batch_corpus(batch, self.columns, ids)
            per_system, signature = score_corpus(self.scorer, corpus, self.options)
        except BARTScoreError as error:
            raise _named_by_row(error, ids, self.columns) from None
        except Exception as error:  # from outside the library (torch, CUDA): perhaps passing, so a ScoringError
            raise ScoringError(
                _ids_said(ids, "rows"), f" could not be scored: {type(error).__name__}: {first_line(error)}"
            ) from None
        assert per_system is not None and signature is not None  # a scorer of its own has results
        table = {self.columns.id: batch.column(self.columns.id)}
        for name in self.names:
            system, _, key = name.rpartition("/")
            table[name] = per_system[system][key]
        counts = [len(references) for references in corpus.references] if corpus.references is not None else None
        table[SIGNATURE_COLUMN] = _row_signatures(signature, counts, len(ids))
        return pyarrow.table(table)


def _batch_corpus(batch: pyarrow.Table, columns: _Columns, ids: Sequence[Any]) -> Corpus:
    """A batch's rows as a Corpus, every text checked and a bad one named by its row's id and its column."""

    def texts(column: str) -> list[str]:
        return [_text(value, row_id, column) for value, row_id in zip(batch.column(column).to_pylist(), ids)]

    references = None
    if columns.references:
        cells = [batch.column(column).to_pylist() for column in columns.references]
        references = [_references(row_id, [cell[row] for cell in cells], columns) for row, row_id in enumerate(ids)]
    return Corpus(
        {system: texts(system) for system in columns.systems},
        sources=texts(columns.source) if columns.source is not None else None,
        references=references,
    )


def _text(value: Any, row_id: Any, column: str) -> str:
    where = f"row {row_id!r}, column {column!r}"
    if not isinstance(value, str):
        raise InputError(f"{where}: expected text, got {'nothing' if value is None else describe(value)}")
    return check_text(value, where)


def _references(row_id: Any, cells: Sequence[Any], columns: _Columns) -> list[str]:
    """A row's references, in column order (a cell may hold a list): an empty or blank one is no reference, but
    every row needs one."""
    references = []
    for column, cell in zip(columns.references, cells):
        for value in cell if isinstance(cell, list) else [cell]:
            if value is not None and (not isinstance(value, str) or value.strip()):
                references.append(_text(value, row_id, column))
    if not references:
        raise InputError(f"row {row_id!r} has no reference (its columns {list(columns.references)} are empty)")
    return references


def _named_by_row(error: BARTScoreError, ids: Sequence[Any], columns: _Columns) -> BARTScoreError:
    """The error of a batch, its texts named by row and column (a Mention of predictions[i] or sources[i], as
    score_corpus numbers them: system after system), else said to be about the batch's rows."""
    parts: list[Part] = []
    for part in error.parts:
        if isinstance(part, Mention) and part.option in ("predictions", "sources") and isinstance(part.index, int):
            column = columns.systems[part.index // len(ids)] if part.option == "predictions" else columns.source
            parts.append(f"the text of row {ids[part.index % len(ids)]!r} in column {column!r}")
        else:
            parts.append(part)
    if parts == list(error.parts):
        parts = [_ids_said(ids, "rows"), ": ", *parts]
    named = copy.copy(error)
    named.parts = tuple(parts)
    named.args = (named.said(),)
    return named


def _ids_said(ids: Sequence[Any], noun: str | None = None) -> str:
    """Row ids for a message: all of a few, the first ones of many ("rows 'a', 'b', 'c' and 997 more")."""
    shown = ", ".join(map(repr, ids[:SHOWN_IDS]))
    more = f" and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else ""
    if noun is None:
        return f"{'the first: ' if more else ''}{shown}{'...' if more else ''}"
    return f"{noun if len(ids) > 1 else noun.rstrip('s')} {shown}{more}"


def _row_signatures(signature: str, reference_counts: Sequence[int] | None, rows: int) -> list[str]:
    """Each row's signature: the batch's, on Ray, with the row's own number of references."""
    batch = _on_ray(Signature.parse(signature))
    if reference_counts is None:
        return [batch.format()] * rows
    by_count: dict[int, str] = {}
    for count in set(reference_counts):
        by_count[count] = dataclasses.replace(batch, reference_counts=(count, count)).format()
    return [by_count[count] for count in reference_counts]


def _merged_signature(signatures: Iterable[str]) -> Signature:
    """The signature of rows scored under `signatures` (each row's): their one identity, with the fewest and most
    references of any row; rows of two identities are an error (never merged)."""
    parsed = {Signature.parse(text) for text in signatures}
    identities = {dataclasses.replace(signature, reference_counts=None) for signature in parsed}
    if len(identities) != 1:
        shown = " and ".join(sorted(repr(identity.format()) for identity in identities)[:2])
        raise ScoringError(f"the rows were scored under {len(identities)} signatures ({shown}), not one")
    counts = [signature.reference_counts for signature in parsed if signature.reference_counts is not None]
    merged = (min(fewest for fewest, _ in counts), max(most for _, most in counts)) if counts else None
    return dataclasses.replace(identities.pop(), reference_counts=merged)
