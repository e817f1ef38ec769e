"""long_source="windows"'s settings (LongDocFACTScore; bart_score.long_documents, which does the work): their
defaults, their checks, the interface a retriever meets, and WindowSettings, the checked settings of a call."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import InputError, InputTypeError
from ..inputs import ascii_integer, positive_option, whole_number
from ..messages import Mention

LONGDOCFACTSCORE = "longdocfactscore"
DEFAULT_WINDOWS_K = 3
DEFAULT_WINDOW = LONGDOCFACTSCORE
DEFAULT_MAX_SENTENCES = 10_000
DEFAULT_RETRIEVER = "sentence-transformers/bert-base-nli-mean-tokens"
BM25 = "bm25"
# The option as messages name it.
RETRIEVER = Mention("retriever")


class Retriever(ABC):
    """Ranks a source's sentences for each query sentence (bart_score.long_documents.retrievers has two). `label`
    names it in the signature."""

    label: str = ""

    @abstractmethod
    def top_k(self, documents: Sequence[Sequence[str]], queries: Sequence[Sequence[str]], k: int) -> list:
        """For each document (its sentences) and its query sentences: per query, the indices of the (at most) k
        document sentences most similar to it, most similar first. Every document has at least one sentence."""


def check_retriever(retriever: object) -> str | Retriever:
    """The retriever as given, checked: a name (bm25 or an encoder checkpoint) or a loaded Retriever."""
    if not isinstance(retriever, Retriever) and not (isinstance(retriever, str) and retriever):
        raise InputTypeError.must_be(
            RETRIEVER,
            f"{BM25!r}, a sentence-embedding encoder checkpoint (a Hub id or a directory) or a Retriever",
            value=retriever,
        )
    return retriever


def check_window(window: object) -> str | int:
    """The window rule as given, checked: "longdocfactscore" or a whole number of neighbours (0 or more)."""
    if isinstance(window, str) and window == LONGDOCFACTSCORE:  # a numpy array would answer == with an array
        return LONGDOCFACTSCORE
    neighbours = ascii_integer(window) if isinstance(window, str) else whole_number(window)  # text as flags give it
    if neighbours is None or neighbours < 0:
        raise InputError.must_be(
            Mention("window"),
            f"{LONGDOCFACTSCORE!r} or a whole number of neighbour sentences on each side (0 or more)",
            value=window,
        )
    return neighbours


@dataclass(frozen=True)
class WindowSettings:
    """The checked settings of long_source="windows": k windows per sentence, the window rule, the retriever (a
    name, or a loaded Retriever), and the most sentences a text may have (a text with more is refused; the limit
    changes no score, so the signature leaves it out: bart_score.long_documents.windows.windows_label)."""

    k: int = DEFAULT_WINDOWS_K
    window: str | int = DEFAULT_WINDOW
    retriever: str | Retriever = DEFAULT_RETRIEVER
    max_sentences: int = DEFAULT_MAX_SENTENCES

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", positive_option(self.k, "windows_k"))
        object.__setattr__(self, "max_sentences", positive_option(self.max_sentences, "max_sentences"))
        object.__setattr__(self, "window", check_window(self.window))
        check_retriever(self.retriever)

    @property
    def retriever_label(self) -> str:
        return self.retriever.label if isinstance(self.retriever, Retriever) else self.retriever
