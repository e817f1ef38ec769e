"""Corpora: the segments every system is scored on (`Corpus`), read from plain-text files (one file per system,
one segment per line), and scored all at once (`score_corpus`). Table files are read by tables.py, `datasets` corpora
scored by dataset_scoring.py."""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..baselines.rescale import LIBRARY_REMEDY, corpus_documents
from ..errors import InputError
from ..inputs import counted
from ..messages import FileName, Mention, Part
from ..options import DIRECTIONS, RESULT_SUFFIXES, ScoringOptions
from ..scoring._directions import score_directions
from ..scoring.protocols import Scorer
from ._reading import open_bounded, read_bounded


@dataclass
class Corpus:
    """Segments to score: one hypothesis list per system, aligned with the sources and/or references."""

    systems: dict[str, list[str]]  # system name -> hypotheses
    sources: list[str] | None = None
    references: list[list[str]] | None = None  # one list of references per segment
    ids: list[str] | None = None  # segment ids, when the input names them
    blank_references: int = 0  # blank reference lines or cells, which are not references and were skipped


def utf8_text(path: str) -> str:
    """A UTF-8 file's text (a byte-order mark is dropped); unreadable, unbounded (a device) or non-UTF-8 files are
    usage errors."""
    raw = read_bounded(path, error=InputError)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise InputError(
            FileName(path),
            f" is not UTF-8 text (byte 0x{raw[error.start]:02x} on line {line})",
            remedy="save it as UTF-8",
        ) from None


@contextlib.contextmanager
def utf8_lines(path: str) -> Iterator[io.TextIOWrapper]:
    """The lines of a UTF-8 file (a byte-order mark is dropped), read and decoded as they are needed, so that a
    reader that stops early (a limit crossed) costs little; non-UTF-8 files are usage errors naming byte and line."""
    try:
        with io.TextIOWrapper(open_bounded(path, error=InputError), encoding="utf-8-sig", newline="") as handle:
            yield handle
    except OSError as error:
        raise InputError("cannot read ", FileName(path), f": {error.strerror or error}") from None
    except UnicodeDecodeError:
        utf8_text(path)  # finds the byte and its line, and raises the usage error that names them
        raise


def _read_lines(path: str) -> list[str]:
    """One segment per line ("\n" or "\r\n"); a final newline does not make an extra segment."""
    lines = utf8_text(path).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def read_texts(path: str) -> tuple[list[str], int]:
    """A plain-text file's texts, one per line, and the number of blank lines, which are not texts and are skipped."""
    lines = _read_lines(path)
    texts = [line for line in lines if line.strip()]
    if not texts:
        raise InputError(f"{path} has no text: it is empty or blank")
    return texts, len(lines) - len(texts)


def read_plain_corpus(
    sources: str | None = None, references: Sequence[str] = (), hypotheses: Sequence[str] = ()
) -> Corpus:
    """Plain-text files, one segment per line: a sources file, reference files (one reference each per segment; a
    blank line is no reference, so segments may have different counts, but each needs one), and one file per system
    (named after the file)."""
    if not hypotheses:
        raise InputError(
            Mention("hypotheses"),
            " must name at least one file (one per system), or read a table with system columns instead",
            value=hypotheses,
        )
    files = {}
    if sources:
        files[sources] = _read_lines(sources)
    for path in [*references, *hypotheses]:
        files[path] = _read_lines(path)
    first = next(iter(files))
    lines: Sequence[str]  # a file's lines, then below a segment's line in each reference file
    for path, lines in files.items():
        if len(lines) != len(files[first]):
            raise InputError(
                f"{path} has {counted(len(lines), 'line')} but {first} has {len(files[first])}; every file needs "
                f"one line per segment"
            )
    if not files[first]:
        raise InputError(f"{', '.join(files)} {'are' if len(files) > 1 else 'is'} empty: no segments to score")
    systems = {}
    for path in hypotheses:
        name = os.path.basename(path)
        if name in systems:
            raise InputError(f"two hypothesis files are named {name}; system names come from file names")
        systems[name] = files[path]
    refs, blank = None, 0
    if references:
        refs = []
        for number, lines in enumerate(zip(*(files[path] for path in references)), start=1):
            refs.append([line for line in lines if line.strip()])
            blank += len(lines) - len(refs[-1])
            if not refs[-1]:
                raise InputError(
                    f"segment {number} has no reference: line {number} is blank in {', '.join(references)}"
                )
    return Corpus(systems, files[sources] if sources else None, refs, blank_references=blank)


def check_corpus_request(
    corpus: Corpus, options: ScoringOptions, *, remedy: Sequence[Part] | Part = LIBRARY_REMEDY
) -> tuple[str, ...]:
    """The directions `options` compute on `corpus`, every problem found before any model is used: the directions
    against the corpus's sources and references, and rescale="corpus" on rows from two documents or more (checked on
    the segments as given, not once per system). remedy: what the one-document error says to do instead (the command
    line's own words name its flags), as parts."""
    directions = options.directions_for(
        has_references=corpus.references is not None, has_sources=corpus.sources is not None
    )
    if options.rescale == "corpus" and not options.corpus_points.unrelated_texts:  # type: ignore[union-attr]  # set for corpus
        segments = len(next(iter(corpus.systems.values())))
        corpus_documents(segments, corpus.sources, corpus.references, remedy=remedy)
    return directions


def score_corpus(
    scorer: Scorer, corpus: Corpus, options: ScoringOptions | None = None, **keywords: Any
) -> tuple[dict[str, dict[str, list[float]]], str] | tuple[None, None]:
    """Scores every system in one planned call (sources and references shared by all systems are encoded once) and
    returns ({system: {direction: per-segment scores}}, signature), or (None, None) on ranks that get no results.
    `options` (a ScoringOptions) or its fields as keywords. When rescaling, each system also has
    ``<direction>_rescaled``; with long_source="windows", ``faithfulness_sentences`` and ``faithfulness_windows``
    (per segment, the sentences scored and the distinct windows); rescale="corpus" takes the reference points from
    every system's outputs together, so that the systems share one scale."""
    options = ScoringOptions.resolve(options, **keywords)
    check_corpus_request(corpus, options)
    names = list(corpus.systems)
    segments = len(corpus.systems[names[0]])
    result = score_directions(
        scorer,
        [hypothesis for name in names for hypothesis in corpus.systems[name]],
        references=corpus.references * len(names) if corpus.references is not None else None,
        sources=corpus.sources * len(names) if corpus.sources is not None else None,
        options=options,
    )
    if result is None:
        return None, None
    directions = [key for d in DIRECTIONS for key in (d + suffix for suffix in RESULT_SUFFIXES) if key in result]
    per_system = {
        name: {d: result[d][k * segments : (k + 1) * segments] for d in directions} for k, name in enumerate(names)
    }
    return per_system, result["signature"]
