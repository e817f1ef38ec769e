"""Scoring a `datasets` corpus: one column per direction added by a batched ``map``, in one process or several."""

from __future__ import annotations

import ast
import contextlib
import sys
import types
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import InputError, InputTypeError
from ..inputs import describe
from ..messages import FileName, Mention, Part
from ..options import DIRECTIONS, RESULT_SUFFIXES, ScoringOptions

if TYPE_CHECKING:
    from ..scoring.engine import BARTScorer


_SCORERS_OF_THIS_PROCESS: dict[str, BARTScorer] = {}  # repr of the arguments -> the scorer


def score_dataset(
    dataset: Any,
    scorer: BARTScorer | dict[str, Any],
    *,
    predictions: str = "prediction",
    references: str | None = None,
    sources: str | None = None,
    prefix: str = "bartscore_",
    rows_per_batch: int = 1000,
    num_proc: int | None = None,
    options: ScoringOptions | None = None,
    **keywords: Any,
) -> Any:
    """Adds one column per direction (``bartscore_faithfulness``, ...) to a ``datasets.Dataset`` or
    ``IterableDataset`` with a batched ``map``: a Dataset is written batch by batch to datasets' cache files, an
    IterableDataset is scored lazily as it is iterated, so corpora larger than memory stream through.

    scorer: a ``BARTScorer``, or a dict of ``BARTScorer`` arguments (``{"checkpoint": "cnn"}``) from which each
    process builds its own: with ``num_proc=N`` (one process per GPU), process k uses ``cuda:k`` (modulo the GPU count)
    or the CPU. Under torchrun, give each rank its shard (``datasets.distributed.split_dataset_by_node``); a dict builds
    scorers with distributed=False, since each rank scores different rows.
    predictions, references, sources: column names (a reference cell may hold a list of references).
    options (a ScoringOptions) or its fields as keywords (directions, aggregation, prompt, prompt_side, batch_size,
    ...); rescaling takes a baseline file (rescale="baseline", baseline=...), which adds
    ``bartscore_<direction>_rescaled`` columns. rescale="corpus" is refused: each batch would get reference points of
    its own."""
    import datasets

    from ..scoring.engine import BARTScorer

    options = ScoringOptions.resolve(options, **keywords)
    if isinstance(scorer, BARTScorer) and num_proc and num_proc > 1:
        raise InputError(
            Mention("scorer"), " must be a dict of arguments with ", Mention("num_proc"), " > 1", value=scorer
        )
    if not isinstance(scorer, (BARTScorer, dict)):
        raise InputTypeError(
            Mention("scorer"), f" must be a BARTScorer or a dict of its arguments, got {describe(scorer)}", value=scorer
        )
    columns = dataset.column_names or []
    for argument, column in (("predictions", predictions), ("references", references), ("sources", sources)):
        if column is not None and columns and column not in columns:
            raise InputError(Mention(argument, column), f" is not a column of the dataset; its columns are {columns}")
    options.directions_for(has_references=references is not None, has_sources=sources is not None)
    if options.rescale == "corpus":
        raise InputError(
            Mention("rescale", "corpus"),
            " would give each batch reference points of its own (score_dataset scores in batches)",
            remedy=["rescale with a baseline file: ", Mention("rescale", "baseline")],
        )

    arguments = {
        "scorer": scorer,
        "predictions": predictions,
        "references": references,
        "sources": sources,
        "prefix": prefix,
        "options": options,
    }
    if isinstance(dataset, datasets.IterableDataset):
        return dataset.map(_score_rows, batched=True, batch_size=rows_per_batch, with_indices=True, fn_kwargs=arguments)
    if num_proc and num_proc > 1:
        _check_the_script_is_guarded(num_proc)
    # Forked workers inherit torch's thread pools mid-flight and can deadlock; spawned ones start clean.
    with _start_method("spawn" if num_proc else None):
        return dataset.map(
            _score_rows,
            batched=True,
            batch_size=rows_per_batch,
            num_proc=num_proc,
            with_indices=True,
            with_rank=bool(num_proc),
            fn_kwargs=arguments,
            desc="BARTScore",
        )


def _check_the_script_is_guarded(num_proc: int) -> None:
    """Refuses num_proc > 1 called from a script's top level outside ``if __name__ == "__main__":``. Each spawned
    worker runs the script again from the top; unguarded, that run calls score_dataset again, the worker dies at
    start-up, and datasets waits for it for minutes instead of failing."""
    script = getattr(sys.modules.get("__main__"), "__file__", None)
    frame: types.FrameType | None = sys._getframe(1)
    line = None
    while frame is not None:  # the line of the script's own top level that led here, if it is running
        if frame.f_code.co_name == "<module>" and frame.f_globals.get("__name__") == "__main__":
            line = frame.f_lineno
        frame = frame.f_back
    if line is None or not script or not script.endswith(".py"):
        return  # from a function run later, a notebook or `python -c`: the workers do not run this call again
    try:
        with open(script, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        return
    guards = [node for node in ast.walk(tree) if isinstance(node, ast.If) and _is_main_test(node.test)]
    if any(node.lineno < line <= (node.end_lineno or node.lineno) for node in guards):
        return
    raise InputError(
        "score_dataset(",
        Mention("num_proc", num_proc),
        ") starts worker processes that run ",
        FileName(script),
        f" again from the top, and line {line} would call score_dataset again in each of them",
        remedy=['put the script\'s code under `if __name__ == "__main__":` (or pass ', Mention("num_proc", None), ")"],
    )


def _is_main_test(test: ast.expr) -> bool:
    """Whether an if's test is ``__name__ == "__main__"`` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = {ast.dump(test.left), ast.dump(test.comparators[0])}
    return sides == {ast.dump(ast.Name("__name__", ast.Load())), ast.dump(ast.Constant("__main__"))}


def _score_rows(
    batch: Mapping[str, list[Any]],
    indices: Sequence[int],
    rank: int | None = None,
    *,
    scorer: BARTScorer | dict[str, Any],
    predictions: str,
    references: str | None,
    sources: str | None,
    prefix: str,
    options: ScoringOptions,
) -> dict[str, Any]:
    engine = scorer if not isinstance(scorer, dict) else _scorer_of_this_process(scorer, rank)
    try:
        result = engine.score_directions(
            batch[predictions],
            references=batch[references] if references else None,
            sources=batch[sources] if sources else None,
            options=options,
        )
    except InputError as error:  # named by the dataset's column and row, not the batch's argument
        columns = {"predictions": predictions, "references": references, "sources": sources}
        raise _in_the_dataset(error, columns, indices) from None
    keys = [d + suffix for d in DIRECTIONS for suffix in RESULT_SUFFIXES]
    # A scorer of this process scores alone, so it has results.
    return {prefix + key: result[key] for key in keys if key in result}  # type: ignore[index, operator]


def _in_the_dataset(error: InputError, columns: Mapping[str, str | None], indices: Sequence[int]) -> InputError:
    """A batch's error with each entry of an input it names (Mention("predictions", index=3)) said as the dataset's
    column and row ("column 'summary' at row 1003"), since the batch's position is not the dataset's, and the
    column's name as the value of an error about a whole input."""

    def said(parts: Sequence[Part]) -> list[Part]:
        return [
            f"column {columns[part.option]!r} at row {indices[part.index]}"
            if isinstance(part, Mention) and columns.get(part.option) and isinstance(part.index, int)
            else part
            for part in parts
        ]

    value = columns.get(error.option or "", error.value)
    return type(error)(*said(error.parts), option=error.option, value=value, remedy=said(error.remedy))


@contextlib.contextmanager
def _start_method(method: str | None) -> Iterator[None]:

    import multiprocess

    previous = multiprocess.get_start_method(allow_none=True)
    if method:
        multiprocess.set_start_method(method, force=True)
    try:
        yield
    finally:
        if method:
            multiprocess.set_start_method(previous, force=True)


def _scorer_of_this_process(arguments: Mapping[str, Any], rank: int | None) -> BARTScorer:
    import torch

    from ..scoring.engine import BARTScorer

    arguments = dict(arguments)
    if "device" not in arguments and rank is not None and torch.cuda.is_available():
        arguments["device"] = f"cuda:{rank % torch.cuda.device_count()}"
    arguments.setdefault("distributed", False)
    key = repr(sorted(arguments.items()))
    if key not in _SCORERS_OF_THIS_PROCESS:
        _SCORERS_OF_THIS_PROCESS[key] = BARTScorer(**arguments)
    return _SCORERS_OF_THIS_PROCESS[key]
