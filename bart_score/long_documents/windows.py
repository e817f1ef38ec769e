"""Source-window faithfulness for sources longer than the model reads (LongDocFACTScore: Bishop et al., LREC-COLING
2024), on any model family.

For each prediction: its sentences; for each sentence, the ``windows_k`` source sentences most like it (a retriever,
bart_score.long_documents.retrievers); each widened into a window of source sentences around it (``window``); the
sentence scored given each window; the best window's score kept; the prediction's score the mean over its sentences.

Window rules, for the source sentence at index i of n:

    "longdocfactscore"  LongDocFACTScore's rule, edge cases included: sentences i-1 and i (its slice [i-1 : i+1] keeps
                        the sentence and the one before it), and at i = 0 sentences 0 and 1 (0 alone when n = 1)
    an integer m >= 0   the sentence and m neighbours on each side: sentences max(0, i-m) to min(n-1, i+m)

A window is the sentences joined by single spaces. Every window is an ordinary condition, so the engine's planning
runs each distinct window through the encoder (or prefix) once for all the sentences and systems that retrieve it, and
scores each distinct (window, sentence) pair once.

Sentences come from pysbd (rule-based, English, nothing downloaded at run time); docs/long-documents.md says where it
splits differently from nltk's punkt, which LongDocFACTScore uses."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError, LongSourceWarning, MissingExtraError
from ..messages import Mention, Part
from ..options import LONGDOCFACTSCORE, WindowSettings
from .retrievers import load_retriever

# The mode as messages name it.
WINDOWS = Mention("long_source", "windows")


@functools.lru_cache(maxsize=1)
def _segmenter() -> Any:  # a pysbd.Segmenter, from the optional pysbd package
    try:
        import pysbd
    except ImportError:
        raise MissingExtraError.needs(WINDOWS, "pysbd (to split texts into sentences)", "long") from None

    return pysbd.Segmenter(language="en", clean=False)


# pysbd's time grows faster than the text in one call: it finds each sentence again from the start of the text
# ("a. " * 8000 took 43 s), and some of its rules (runs of abbreviations, lettered lists) are quadratic on their own.
# So it is given pieces of at most PIECE_CHARS characters: cut after a line break where there is one (pysbd ends a
# sentence at every line break), else at a space; a piece cut at a space keeps only the sentences that end at least
# LOOKAHEAD_CHARS before the cut (so each of their ends was decided with the text after it, as on the whole text),
# and the next piece starts after them.
PIECE_CHARS = 2000
LOOKAHEAD_CHARS = 200
# The split's identity in the signature, beside pysbd's version: the pieces it is given (a change to how they are cut
# changes sentences, and so changes this).
SPLITTER_RULE = f"pieces{PIECE_CHARS}-{LOOKAHEAD_CHARS}"


@dataclass
class SentenceSplit:
    """A text's sentences, and how many of them were cut at a space because they ran over PIECE_CHARS characters
    without an end pysbd finds; `dropped`: the pieces pysbd made that are not sentences (without a letter or digit).
    `complete` is False when splitting stopped at a limit."""

    sentences: list[str]
    cut: int = 0
    dropped: int = 0
    complete: bool = True


def _piece_sentences(piece: str) -> list[str]:
    return _segmenter().processor(piece).process()


def _settled(piece: str, sentences: list[str], lookahead: int) -> tuple[list[str], int]:
    """The sentences of a piece cut at a space that end `lookahead` characters or more before the cut (never the
    last, which the cut may have ended), and the offset after them; ([], 0) when none does."""
    settled: list[str] = []
    end = 0
    for sentence in sentences[:-1]:
        found = piece.find(sentence, end)
        if found < 0 or found + len(sentence) > len(piece) - lookahead:
            break
        settled.append(sentence)
        end = found + len(sentence)
    return settled, end


def _cut(text: str, start: int) -> tuple[int, bool]:
    """Where the piece that starts at `start` ends, and whether that is after a line break."""
    stop = start + PIECE_CHARS
    line_break = text.rfind("\n", start, stop)
    if line_break >= 0:
        return line_break + 1, True
    space = max(text.rfind(" ", start + PIECE_CHARS // 2, stop), text.rfind("\t", start + PIECE_CHARS // 2, stop))
    return (space if space > start else stop), False


# The splits kept within splitting_once(): (text, limit) -> its split; None outside it.
_KEPT_SPLITS: contextvars.ContextVar[dict[tuple[str, int | None], SentenceSplit] | None] = contextvars.ContextVar(
    "kept_splits", default=None
)


@contextlib.contextmanager
def splitting_once() -> Iterator[None]:
    """Within it, a text is split once for each limit: a front end that checks texts' sentences before the model
    loads (the command line) and the plan that splits them once it has loaded share each split, which is let go at
    the end."""
    token = _KEPT_SPLITS.set({})
    try:
        yield
    finally:
        _KEPT_SPLITS.reset(token)


def split(text: str, limit: int | None = None) -> SentenceSplit:
    """The sentences of a text (see _split), kept within splitting_once()."""
    kept = _KEPT_SPLITS.get()
    if kept is None:
        return _split(text, limit)
    if (text, limit) not in kept:
        kept[text, limit] = _split(text, limit)
    return kept[text, limit]


def _split(text: str, limit: int | None) -> SentenceSplit:
    """The sentences of a text (pysbd, English, in bounded pieces), each stripped of surrounding white space; pieces
    without a letter or digit (a stray "." that pysbd makes a sentence of its own) are not sentences and are dropped.
    With a limit, splitting stops once the text has more than `limit` sentences, or more than `limit` dropped
    pieces (a text of punctuation alone has no sentence, and would otherwise be split to its end)."""
    result = SentenceSplit([])

    def take(sentences: list[str]) -> bool:
        for sentence in sentences:
            sentence = sentence.strip()
            if any(character.isalnum() for character in sentence):
                result.sentences.append(sentence)
            else:
                result.dropped += 1
        result.complete = limit is None or max(len(result.sentences), result.dropped) <= limit
        return result.complete

    start = 0
    while len(text) - start > PIECE_CHARS:
        stop, at_line_break = _cut(text, start)
        piece = text[start:stop]
        sentences = _piece_sentences(piece)
        if at_line_break:
            settled, end = sentences, len(piece)
        else:
            settled, end = _settled(piece, sentences, LOOKAHEAD_CHARS)
            if not settled:  # a long sentence ends in the look-ahead: all but the last, with less look-ahead
                settled, end = _settled(piece, sentences, 0)
            if not settled:  # one sentence runs over the whole piece: it is cut here
                settled, end = sentences, len(piece)
                result.cut += bool(sentences)
        if not take(settled):
            return result
        start += end
    if text[start:].strip():
        take(_piece_sentences(text[start:]))
    return result


# Where pysbd ends English sentences. Each piece of a split ends at one of them, at a cut (at most one per
# PIECE_CHARS // 2 characters: a piece is cut in its second half) or at the text's end; so a text with fewer ends and
# cuts than a limit has no more pieces than the limit, and over_limit passes most texts without splitting them.
_SENTENCE_ENDS = ".!?\n\r…。？！"


def over_limit(text: str, limit: int) -> SentenceSplit | None:
    """For a text of more than `limit` sentences or dropped pieces (see `split`), its split as far as it went (for
    over_limit_error); else None."""
    if sum(text.count(mark) for mark in _SENTENCE_ENDS) + len(text) // (PIECE_CHARS // 2) < limit:
        return None
    result = split(text, limit)
    return None if result.complete else result


def over_limit_error(result: SentenceSplit, limit: int, text: Part) -> InputError:
    """The refusal of a text (`text`: the message's name for it) whose split stopped at `limit`."""
    if len(result.sentences) > limit:
        counted = f"more than {limit} sentences ({len(result.sentences)} counted when splitting stopped)"
    else:
        counted = (
            f"more than {limit} pieces without a letter or digit, which are not sentences ({result.dropped} counted "
            f"when splitting stopped)"
        )
    return InputError(
        text,
        f" has {counted}; ",
        WINDOWS,
        " takes at most ",
        Mention("max_sentences", limit),
        " per text",
        remedy=["raise ", Mention("max_sentences"), ", or shorten or divide the text"],
    )


def split_sentences(text: str) -> list[str]:
    """The sentences of a text (see `split`)."""
    return split(text).sentences


def splitter_label() -> str:
    import importlib.metadata

    return f"pysbd{importlib.metadata.version('pysbd')}+{SPLITTER_RULE}"


def window_size(window: str | int) -> int:
    """How many sentences a window spans away from the source's edges."""
    return 2 if window == LONGDOCFACTSCORE else 2 * window + 1  # type: ignore[operator]  # else an int


def window_span(index: int, count: int, window: str | int) -> tuple[int, int]:
    """The window around source sentence `index` of `count`, as [start, stop) sentence indices."""
    if window == LONGDOCFACTSCORE:
        return (0, min(2, count)) if index == 0 else (index - 1, index + 1)
    return max(0, index - window), min(count, index + window + 1)  # type: ignore[operator]  # an int here


def windows_label(settings: WindowSettings) -> str:
    """The signature's field of long_source="windows": mode, k, window rule, retriever and sentence splitter."""
    window = "ldfs" if settings.window == LONGDOCFACTSCORE else f"pm{settings.window}"
    return f"windows(k={settings.k},window={window},retriever={settings.retriever_label},split={splitter_label()})"


class WindowPlan:
    """The work of one call: the distinct (window, sentence) pairs to score, and per prediction the pairs of each of
    its sentences, its sentence count and its distinct window count."""

    def __init__(self) -> None:
        self._pair_index: dict[tuple[str, str], int] = {}
        self.sentence_pairs: list[list[list[int]]] = []  # prediction -> sentence -> pair indices
        self.sentences: list[int] = []
        self.windows: list[int] = []
        self.short_sources = 0  # distinct sources with fewer sentences than one window spans

    @property
    def pairs(self) -> list[tuple[str, str]]:
        return list(self._pair_index)

    def add_prediction(self, sentence_windows: Sequence[tuple[str, Sequence[str]]]) -> None:
        """A prediction's sentences, each with its windows."""
        pairs_of_sentences, distinct_windows = [], set()
        for sentence, windows in sentence_windows:
            indices = []
            for window in windows:
                indices.append(self._pair_index.setdefault((window, sentence), len(self._pair_index)))
                distinct_windows.add(window)
            pairs_of_sentences.append(indices)
        self.sentence_pairs.append(pairs_of_sentences)
        self.sentences.append(len(pairs_of_sentences))
        self.windows.append(len(distinct_windows))

    def aggregate(self, pair_scores: Sequence[float] | np.ndarray) -> np.ndarray:
        """Per prediction: the mean over its sentences of the best (highest) score over the sentence's windows."""
        scores = np.asarray(pair_scores, dtype=np.float64)
        return np.array([np.mean([scores[pairs].max() for pairs in sentences]) for sentences in self.sentence_pairs])


def plan_windows(
    predictions: Sequence[str], sources: Sequence[str], settings: WindowSettings, device: object = None
) -> WindowPlan:
    """Splits, retrieves and builds the windows of every prediction (each distinct text split once, each distinct
    sentence embedded once). A prediction or source without a sentence, or with more than max_sentences, is an
    InputError naming it; sentences cut at a space (see `split`) are reported in a warning."""
    by_text: dict[str, list[str]] = {}
    cut = 0

    def sentences_of(texts: Sequence[str], name: str) -> list[list[str]]:
        nonlocal cut
        result = []
        for index, text in enumerate(texts):
            if text not in by_text:
                sentences = split(text, settings.max_sentences)
                if not sentences.complete:
                    raise over_limit_error(sentences, settings.max_sentences, Mention(name, index=index))
                by_text[text] = sentences.sentences
                cut += sentences.cut
            if not by_text[text]:
                kind = "empty" if not text else "blank" if not text.strip() else "without a letter or digit"
                raise InputError(
                    Mention(name, index=index), f" has no sentence (it is {kind}), and ", WINDOWS, " scores by sentence"
                )
            result.append(by_text[text])
        return result

    sentences_of(sources, "sources")  # each source split, and checked to have a sentence
    prediction_sentences = sentences_of(predictions, "predictions")
    by_source: dict[str, dict[str, None]] = {}
    for source, sentences in zip(sources, prediction_sentences):
        by_source.setdefault(source, {}).update(dict.fromkeys(sentences))
    documents = [by_text[source] for source in by_source]
    queries = [list(asked) for asked in by_source.values()]
    ranks = load_retriever(settings.retriever, device).top_k(documents, queries, settings.k)

    windows_of = {}
    plan = WindowPlan()
    for source, sentences, asked, ranked in zip(by_source, documents, queries, ranks):
        plan.short_sources += len(sentences) < window_size(settings.window)
        for query, indices in zip(asked, ranked):
            spans = [window_span(i, len(sentences), settings.window) for i in indices]
            windows_of[source, query] = [" ".join(sentences[start:stop]) for start, stop in spans]
    for source, sentences in zip(sources, prediction_sentences):
        plan.add_prediction([(sentence, windows_of[source, sentence]) for sentence in sentences])
    if cut:
        warnings.warn(
            LongSourceWarning(
                WINDOWS,
                f": {cut} sentence(s) ran over {PIECE_CHARS} characters without an end the splitter finds, and were "
                f"cut at a space",
            ),
            stacklevel=4,
        )
    if plan.short_sources:
        warnings.warn(
            LongSourceWarning(
                WINDOWS,
                f": {plan.short_sources} distinct source(s) have fewer sentences than one window spans "
                f"({window_size(settings.window)}): their windows are cut at the source's edges",
            ),
            stacklevel=4,
        )
    return plan
