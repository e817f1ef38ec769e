"""What plain meta-eval (bart_score.cli.meta_eval) and its --select (bart_score.cli.meta_eval_select) share: a
checkpoint's name in the table, what a run stopped while scoring says, and the writing of the report's files."""

from __future__ import annotations

import os
import sys
from typing import Any

from ..errors import CacheFileError


def model_name(model: str) -> str:
    """A checkpoint directory or GGUF file by its own name; variants and Hub ids as given."""
    return os.path.basename(os.path.normpath(model)) if os.path.exists(model) else model


def is_rank_0() -> bool:
    """Whether this process reports and keeps the cache: rank 0 under torchrun, or the only process."""
    import torch

    return not torch.distributed.is_initialized() or torch.distributed.get_rank() == 0


def stopped_while_scoring(command: str, error: BaseException, scored_pairs: int, cache: str) -> int:
    """The exit status of a run stopped by `error` while scoring (130 for Ctrl-C, else 1), after saying that the pairs
    scored before it are kept in the cache for a rerun (by rank 0 alone, which keeps the cache); a cache file that
    cannot be used keeps nothing, and is only named."""
    if isinstance(error, CacheFileError):
        print(f"{command}: {error}", file=sys.stderr)
        return 1
    stopped = "interrupted" if isinstance(error, KeyboardInterrupt) else f"scoring failed: {error}"
    if is_rank_0():
        print(
            f"{command}: {stopped}\n{command}: the {scored_pairs} pair(s) scored before are kept in {cache}; run the "
            "same command again to resume",
            file=sys.stderr,
        )
    return 130 if isinstance(error, KeyboardInterrupt) else 1


def write_report(command: str, prefix: str, report: Any, csv_text: str) -> tuple[str, str] | None:
    """The files written (PREFIX.json, the whole report, and PREFIX.csv), or None after saying why they cannot be."""
    from ..outputs import write_json_and_csv

    try:
        return write_json_and_csv(prefix, report, csv_text)
    except OSError as error:
        print(f"{command}: cannot write {prefix}.json/.csv: {error.strerror or error}", file=sys.stderr)
        return None
