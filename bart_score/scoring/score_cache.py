"""Scores that survive an interruption: a scorer wrapper backed by an append-only cache file.

``ResumableScorer(scorer, path)`` wraps an engine and is a scorer as bart_score.scoring.protocols describes it (an
IdentifiedScorer: what ``score_directions``, meta-eval and baselines call on a scorer). Its
``score(conditions, targets)`` answers every pair it finds in the cache file, scores only the missing ones (each
distinct pair once) in chunks, and appends each chunk to the file, flushed and fsynced, before the next starts: a run
that is stopped keeps every finished chunk, and running it again scores nothing twice.

The file is JSON lines. A line ``{"scorer": ID, "signature": [...]}`` describes each scorer the file holds scores of
(the model's identity, see models.loading.checkpoint_identity, the token policy and the engine's signature fields;
ID is a hash of them); each score is a line ``{"scorer": ID, "pair": KEY, "score": S}``, KEY being a hash of the
(condition, target) texts, and of the per-pair options that change a score when a call gives them (the condition's
language, a chat instruction). Scores of other scorers in the same file are kept and left alone. A served model's
header also keeps its answer to a probe pair (models.served: probe_field), and a run whose server answers it otherwise
refuses the file: the server's weights changed under the same name.

With show_progress, one bar spans the whole call: its total is the pairs to score, and it advances after each model
batch inside every chunk, with pairs/s."""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import re
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..corpora._reading import parse_json, read_bounded
from ..errors import CacheFileError, CacheWarning, InputError
from ..inputs import whole_number
from ..messages import FileName, Mention, Part

if TYPE_CHECKING:
    import torch

    from ..models.served._server import ServedModel
    from .engine import BARTScorer

Value = TypeVar("Value")

DEFAULT_CHUNK_PAIRS = 2048
# What a damaged cache file asks of its owner.
AFRESH = "delete the file to score afresh"


def pair_key(condition: str, target: str, options: dict | None = None) -> str:
    """The cache's key of a pair; `options`: its per-pair options that were given ({"instruction": ...})."""
    described = [condition, target, options] if options else [condition, target]
    return hashlib.sha256(json.dumps(described, ensure_ascii=False).encode("utf-8")).hexdigest()[:32]


class ResumableScorer:
    """See the module's text. Under torch.distributed, rank 0 reads and writes the file, tells the other ranks which
    pairs are missing, and is the only rank that gets results (the others get None, as with results_on="rank0")."""

    def __init__(self, scorer: BARTScorer, path: str, *, chunk_pairs: int = DEFAULT_CHUNK_PAIRS) -> None:
        if whole_number(chunk_pairs) is None or chunk_pairs < 1:
            raise InputError(
                Mention("chunk_pairs"), f" must be a positive integer, got {chunk_pairs!r}", value=chunk_pairs
            )
        chunk_pairs = whole_number(chunk_pairs)  # type: ignore[assignment]  # a whole number, checked above
        self.scorer = scorer
        self.path = path
        self.chunk_pairs = chunk_pairs
        # Keyed on the model's identity (its real path and files, or Hub commit), not the name it was given: a
        # checkpoint saved again at the same path must never be answered with the scores of the old one.
        self.description = [
            f"ckpt:{scorer.model_identity}",
            f"tokens:{scorer.token_policy}",
            *scorer.signature_fields(),
        ]
        self.scorer_id = hashlib.sha256("|".join(self.description).encode("utf-8")).hexdigest()[:16]
        # A served model's probe, which its header keeps beside the description, out of the id: it moves a little
        # from run to run.
        self.served: ServedModel | None = getattr(scorer, "served", None)
        self.probe: tuple[float, ...] | None = None  # asked as this run's first call starts
        self.cached_pairs = 0  # distinct pairs answered from the file, over all calls
        self.scored_pairs = 0  # distinct pairs the model scored, over all calls
        self.repaired_lines = 0  # torn last lines (an interrupted write) dropped from the file

    def __getattr__(self, name: str) -> Any:
        """Everything but score() is the scorer's own (its label, identity, token policy, options, signature fields):
        the cache stands in for its scoring only, and is the scorer in all else."""
        scorer = self.__dict__.get("scorer")  # absent while a copy is being made: no attribute to hand on
        if scorer is None:
            raise AttributeError(name)
        return getattr(scorer, name)

    def score(
        self,
        conditions: Sequence[str],
        targets: Sequence[str],
        batch_size: int | None = None,
        *,
        max_tokens: int | None = None,
        show_progress: bool = False,
        condition_lang: str | Sequence[str] | None = None,
        instruction: str | Sequence[str] | None = None,
    ) -> list[float] | None:
        """The scorer's scores of the pairs (from the file where it has them), or None on ranks other than 0.
        condition_lang and instruction: as the scorer's, one per pair (or one for all)."""
        from ._progress import progress_bar

        if len(conditions) != len(targets):
            raise InputError.entries_differ(
                Mention("srcs"), len(conditions), Mention("tgts"), len(targets), value=conditions
            )
        per_pair: dict[str, list[str]] = {  # score()'s per-pair keywords
            name: [value] * len(conditions) if isinstance(value, str) else list(value)
            for name, value in (("condition_lang", condition_lang), ("instruction", instruction))
            if value is not None
        }
        for name, values in per_pair.items():
            if len(values) != len(conditions):
                raise InputError.entries_differ(
                    Mention(name), len(values), Mention("srcs"), len(conditions), value=values
                )
        keys = [
            pair_key(c, t, {name: values[index] for name, values in per_pair.items()})
            for index, (c, t) in enumerate(zip(conditions, targets))
        ]
        group = self.scorer.process_group()
        lead = group is None or group.rank == 0
        known, missing, failure = {}, [], None
        if lead:
            try:
                known = self._read()
            except CacheFileError as error:
                if group is None:
                    raise
                failure = error
            first_position = {}
            for position, key in enumerate(keys):
                if key not in known and key not in first_position:
                    first_position[key] = position
            missing = list(first_position.values())
            self.cached_pairs += len(set(keys)) - len(missing)
        if group is not None:  # every rank takes part in each chunk's scoring, so all must know the missing pairs
            missing, failure = _from_rank0((missing, failure), self.scorer.options.device)
            if failure is not None:
                raise failure

        with progress_bar(len(missing), enabled=show_progress and lead) as bar:
            for start in range(0, len(missing), self.chunk_pairs):
                chunk = missing[start : start + self.chunk_pairs]
                done = bar.n
                scores = self.scorer.score(
                    [conditions[p] for p in chunk],
                    [targets[p] for p in chunk],
                    batch_size,
                    max_tokens=max_tokens,
                    progress=bar.update,  # advanced per model batch
                    # condition_lang and instruction lists, which mypy cannot tell from score()'s other keywords
                    **{name: [values[p] for p in chunk] for name, values in per_pair.items()},  # type: ignore[arg-type]
                )
                if lead:
                    new = {keys[p]: float(s) for p, s in zip(chunk, scores)}  # type: ignore[arg-type]  # rank 0 has them
                    self._append(new, first=not known)
                    known.update(new)
                    self.scored_pairs += len(chunk)
                # The engine counts the pairs it scored, which are fewer when two pairs tokenize alike (or, under
                # torch.distributed, when they were rank 0's share): the chunk is done.
                bar.update(done + len(chunk) - bar.n)
        return [known[key] for key in keys] if lead else None

    def _read(self) -> dict[str, float]:
        """This scorer's scores in the file (checked as read_cache_file checks it); a torn last line (a write cut
        short) is dropped from the file, with a warning."""
        if self.served is not None and self.probe is None:  # before any pair, whether or not the file is there yet
            self.probe = self.served.ask_probe()
        if not os.path.lexists(self.path):
            return {}
        entries, torn, size = read_cache_file(self.path)
        scores = {
            entry["pair"]: float(entry["score"])
            for entry in entries
            if entry["scorer"] == self.scorer_id and entry["pair"] is not None
        }
        if self.served is not None and self.probe is not None:
            self._check_probe(self.served, self.probe, entries)
        if torn:
            self.repaired_lines += 1
            warnings.warn(
                f"the score cache {self.path} ended in an unfinished line (an interrupted write); it was dropped and "
                f"its pair will be scored again",
                CacheWarning,
                stacklevel=3,
            )
            descriptor = os.open(self.path, os.O_WRONLY | os.O_NOFOLLOW)
            try:
                os.ftruncate(descriptor, size - len(torn))
            finally:
                os.close(descriptor)
        return scores

    def _check_probe(self, served: ServedModel, probe: tuple[float, ...], entries: list[dict[str, Any]]) -> None:
        """Refuses the file when a header of this scorer keeps a probe that its served model's answer now (`probe`)
        differs from."""
        for entry in entries:
            if entry["scorer"] != self.scorer_id or entry["pair"] is not None:
                continue
            for field in entry["signature"][len(self.description) :]:
                problem = served.probe_problem(field, probe) if field.startswith("probe:") else None
                if problem is not None:
                    raise _cache_error(
                        self.path,
                        f" holds scores of {self.model_identity}, and {problem}; its scores are not the model's now",
                        remedy="give the cache another file name, or delete it to score afresh",
                    )

    def _append(self, scores: Mapping[str, float], first: bool) -> None:
        lines = []
        if first:
            probe = [self.served.probe_field(self.probe)] if self.served is not None and self.probe else []
            lines.append(json.dumps({"scorer": self.scorer_id, "signature": [*self.description, *probe]}))
        for key, value in scores.items():
            lines.append(json.dumps({"scorer": self.scorer_id, "pair": key, "score": value}))
        folder = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(folder, exist_ok=True)
        try:  # never through a link, even one made since the file was read
            descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o666)
        except OSError as error:
            if error.errno == errno.ELOOP:
                _refuse_a_link(self.path)
            raise
        with open(descriptor, "a", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")
            handle.flush()
            os.fsync(handle.fileno())


def _refuse_a_link(path: str) -> None:
    """A cache is read and appended to where it is named: a symbolic link there (which could point anywhere, or at
    a file not yet made) is refused rather than written through."""
    if os.path.islink(path):
        raise _cache_error(
            path,
            " is a symbolic link, and a cache is not written through one",
            remedy="give the file it points to, or a new file name",
        )


def _cache_error(path: str, *parts: Part, remedy: str) -> CacheFileError:
    """An error about the score cache at `path`: "the score cache <path><parts>"."""
    return CacheFileError("the score cache ", FileName(path), *parts, remedy=remedy)


# How every line the cache writes starts (json.dumps of a dict whose first key is "scorer").
_LINE_START = '{"scorer": "'
_SCORER_ID = re.compile(r"[0-9a-f]{16}")
_PAIR_KEY = re.compile(r"[0-9a-f]{32}")


def read_cache_file(path: str) -> tuple[list[dict[str, Any]], bytes, int]:
    """Every line of a score cache file, checked: (entries, torn, size). Each complete line is a scorer's header
    ``{"scorer", "signature"}`` or a score ``{"scorer", "pair", "score"}`` (a finite number, not a boolean or a
    text); entries holds the lines as dicts (a header's "pair" None). torn: the bytes after the last newline, an
    interrupted write, which must be the start of a line of ours; size: the file's size.

    CacheFileError names the file, and the line, when the file is not a cache (its first line is no header, or its
    only, unfinished, line is none of ours: a note, a minified JSON): such a file is never changed; or when a line of
    a cache is damaged or edited (a score that is not a number): the run stops, rather than score over a guess."""
    _refuse_a_link(path)
    data = read_bounded(path, f"the score cache {path}", error=CacheFileError)
    lines = data.split(b"\n")
    complete, torn = lines[:-1], lines[-1]
    first = complete[0] if complete else torn
    if not first.startswith(_LINE_START.encode()) and not (not complete and _LINE_START.encode().startswith(torn)):
        raise CacheFileError(
            f"{path} is not a score cache (its first line is not a bartscore cache header), so it was left as it is",
            remedy="give the cache another file name",
        )
    entries = []
    for number, line in enumerate(complete, start=1):
        where = f"the score cache {path} line {number}"
        try:
            entry = parse_json(line, where, error=CacheFileError)
        except CacheFileError as error:
            raise CacheFileError(*error.parts, remedy=AFRESH) from None
        problem = _line_problem(entry, header=number == 1)
        if problem:
            raise CacheFileError(f"{where} is damaged ({problem})", remedy=AFRESH)
        entries.append({"pair": None, **entry})
    if torn and not (torn.startswith(_LINE_START.encode()) or _LINE_START.encode().startswith(torn)):
        raise _cache_error(
            path, f" ends in text that is not a line of a cache (line {len(complete) + 1})", remedy=AFRESH
        )
    return entries, torn, len(data)


def _line_problem(entry: Any, header: bool) -> str | None:
    """What is wrong with a parsed cache line, or None (the first line must be a header)."""
    if (
        not isinstance(entry, dict)
        or not isinstance(entry.get("scorer"), str)
        or not _SCORER_ID.fullmatch(entry["scorer"])
    ):
        return "not a cache line"
    if set(entry) == {"scorer", "signature"}:
        signature = entry["signature"]
        return None if isinstance(signature, list) and all(isinstance(f, str) for f in signature) else "bad signature"
    if header:
        return "the first line is not a scorer's header"
    if set(entry) != {"scorer", "pair", "score"} or not isinstance(entry["pair"], str):
        return "not a cache line"
    if not _PAIR_KEY.fullmatch(entry["pair"]):
        return "its pair key is not one the cache writes"
    score = entry["score"]
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        return f"its score {score!r} is not a finite number"
    return None


def check_cache_file(path: str) -> None:
    """read_cache_file's checks of a cache file that exists (a missing one is made), before any model loads."""
    if os.path.lexists(path):
        read_cache_file(path)


def _from_rank0(value: Value, device: str | torch.device | None) -> Value:
    """Rank 0's `value` on every rank; device: the scorer's (its options', resolved: a device name)."""
    import torch

    from ..scaling._distributed import current_device

    holder = [value]
    with current_device(torch.device(device)):  # type: ignore[arg-type]  # resolved: a device name
        torch.distributed.broadcast_object_list(holder, src=0)
    return holder[0]
