"""The errors bart_score raises, one family under ``BARTScoreError``, and the warnings it gives, one family under
``BARTScoreWarning``.

Each error class also keeps the built-in base that says what kind of problem it is, so that ``except ValueError`` and
``except OSError`` go on catching what they did:

    BARTScoreError          every error bart_score raises on purpose
    InputError              bad input or a bad option (ValueError); the command line's exit status 2
    InputTypeError          an input of the wrong type (also a TypeError)
    UnsupportedModelError   a checkpoint of a family the engine cannot drive (ValueError; exit status 2)
    CustomCodeError         a checkpoint that needs its own Python code, which bartscore never runs
    CheckpointNotFoundError the checkpoint is neither here nor downloadable (OSError)
    CheckpointLoadError     the checkpoint is here but cannot be loaded: unreadable, truncated or broken (OSError)
    MissingExtraError       an optional extra is not installed (ImportError); the message names the pip command
    BaselineError           a baseline file that cannot be used (ValueError), with three kinds below it:
    BaselineNotFoundError   no baseline file where one was looked for
    BaselineSettingsError   a baseline made with other settings (model, token policy, prompt, max_length)
    BaselineDirectionsError a baseline without reference points for some of the directions a call needs
    BenchmarkDataError      a meta-evaluation benchmark's files cannot be had (OSError)
    CacheFileError          a score cache file that cannot be used (ValueError)
    OutputFileError         an output file that cannot be replaced: a folder, device, FIFO or socket is there (OSError)
    ScoringError            scoring failed at run time, for a reason that is not the input's (RuntimeError)

Each warning class is a UserWarning, so that filters on UserWarning go on catching what they did:

    BARTScoreWarning        every warning bart_score gives
    TokenizationWarning     what tokenizing did to the texts: tails cut at max_length, special-token strings read
    RescaleWarning          a direction that cannot be rescaled, or barely; and, below it:
    FewerReferencePairsWarning  fewer reference pairs than were asked for (every pair the texts give was scored)
    LongSourceWarning       long_source="windows": sentences cut, sources shorter than a window, the retriever's cut
    CacheWarning            the score cache file was repaired (an unfinished last line dropped)
    ServerWarning           a served model reached over plain http:// from another machine

Messages are data: an error's or a warning's message is a sequence of parts, text and the options (Mention), tasks
(Recipe) and files (FileName) it names, with its remedy apart; str() gives the library's words (KEYWORDS), and each
front end says the same parts in its own (said(naming): the command line names flags, the Space its fields). The
library writes no flag, command or field name; no front end reads a message's text to reword it.

This module imports only bart_score.messages (which imports nothing), so that every other module can import it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from .messages import (
    FIRST_MENTION,
    NOT_GIVEN,
    FileName,
    FirstMention,
    Mention,
    Part,
    SaidInParts,
    parts_of,
    rebuilt,
    shown,
)

Error = TypeVar("Error", bound="BARTScoreError")


class BARTScoreError(SaidInParts, Exception):
    """Every error bart_score raises on purpose.

    Its message is made of parts (text, Mention, Recipe, FileName) so that each front end says it in its own words
    (error.said(naming)); str(error) is the library's. Its fields are what a front end needs:
    option: the option or input the error is about ("max_length", "corpus_points.pairs", "references"), if any; by
    default the first option the message mentions (None: an error about no option);
    value: the value that option was given (NOT_GIVEN when the error names none); by default, with the option, the
    value its mention gives;
    remedy: what to do instead, as parts (empty when the message has none)."""

    def __init__(
        self,
        *parts: Part,
        option: str | FirstMention | None = FIRST_MENTION,
        value: object = NOT_GIVEN,
        remedy: Sequence[Part] | Part | None = None,
    ) -> None:
        self.parts = tuple(parts)
        if isinstance(option, FirstMention):
            mention = next((part for part in parts if isinstance(part, Mention)), None)
            option = mention.option if mention else None
            value = mention.value if mention and value is NOT_GIVEN else value
        self.option = option
        self.value = value
        self.remedy = parts_of(remedy)
        super().__init__(self.said())

    @classmethod
    def must_be(
        cls: type[Error], named: Mention, expected: Part | Sequence[Part], got: str | None = None, **fields: Any
    ) -> Error:
        """The commonest shape: "<named> must be <expected>, got <got>" (`expected` in words or parts, `got` as the
        message should show it; left out, the `value` field, shown)."""
        got = shown(fields["value"]) if got is None else got
        return cls(named, " must be ", *parts_of(expected), f", got {got}", **fields)

    @classmethod
    def one_of(cls: type[Error], named: Mention, choices: Iterable[object], got: str, **fields: Any) -> Error:
        """ "<named> must be one of <choices>, got <got>", the choices as Python writes them."""
        return cls(named, f" must be one of {', '.join(map(repr, choices))}, got {got}", **fields)

    @classmethod
    def entries_differ(
        cls: type[Error], named: Mention, count: int, other: Mention, other_count: int, **fields: Any
    ) -> Error:
        """Two inputs that must have an entry each for the same things: "<named> has <count> entries but <other> has
        <other_count>"."""
        return cls(named, f" has {count} entries but ", other, f" has {other_count}", **fields)

    @classmethod
    def at_path(cls: type[Error], named: Mention, *parts: Part, **fields: Any) -> Error:
        """An option given a file's or folder's path (`named`'s value): "<option> <path><parts>", the path said as a
        FileName (which the Space does not show) and kept as the error's value."""
        return cls(Mention(named.option), " ", FileName(str(named.value)), *parts, value=named.value, **fields)

    def __reduce__(self) -> tuple:
        return rebuilt, (type(self), dict(self.__dict__))

    def __str__(self) -> str:
        return self.said()


class InputError(BARTScoreError, ValueError):
    """Bad input or a bad option, named by argument (and index, row, column or file) and by `option`."""


class InputTypeError(InputError, TypeError):
    """An input or option of the wrong type."""


class UnsupportedModelError(BARTScoreError, ValueError):
    """A checkpoint whose architecture or tokenizer the engine cannot score with."""


class CustomCodeError(UnsupportedModelError):
    """A checkpoint that needs its own Python code (an ``auto_map`` in its config, or a model type transformers does
    not know); bartscore never runs code from a checkpoint."""


class CheckpointNotFoundError(BARTScoreError, OSError):
    """The checkpoint (or the paraphrase weights) is not on this machine and could not be downloaded."""


class CheckpointLoadError(BARTScoreError, OSError):
    """The checkpoint was found, but it cannot be loaded (unreadable, truncated or broken files)."""


class MissingExtraError(BARTScoreError, ImportError):
    """A feature needs an optional extra (``pip install "bartscore[<extra>]"``) that is not installed."""

    @classmethod
    def needs(
        cls, what: Part | Sequence[Part], package: str, extra: str, *otherwise: Part, **fields: Any
    ) -> MissingExtraError:
        """The shape of every such error: "<what> needs <package>, which is not installed", with the pip command
        that installs the extra as the remedy, and then `otherwise`, another way out, where there is one."""
        remedy = [f'pip install "bartscore[{extra}]"', *otherwise]
        return cls(*parts_of(what), f" needs {package}, which is not installed", remedy=remedy, **fields)


class BaselineError(BARTScoreError, ValueError):
    """A baseline file that cannot be used: unreadable, malformed, edited, or made with other settings."""


class BaselineNotFoundError(BaselineError):
    """No baseline file where one was looked for."""


class BaselineSettingsError(BaselineError):
    """A baseline made with other settings (model, token policy, prompt setting, max_length) than the call's."""


class BaselineDirectionsError(BaselineError):
    """A baseline without reference points for some of the directions a call needs (`lacking`)."""

    def __init__(self, *parts: Part, lacking: Sequence[str], **fields: object) -> None:
        self.lacking = list(lacking)
        super().__init__(*parts, **fields)  # type: ignore[arg-type]


class BenchmarkDataError(BARTScoreError, OSError):
    """A benchmark's files are not here and cannot be fetched, or are not what they should be.

    For a release file that cannot be had here, what a front end needs to say in its own words how to get it (the
    message ends with the library's: bart_score.meta_eval.benchmarks.how_to_get): reason, the message before that;
    release, the release's key (meta_eval.benchmarks.RELEASES); release_file, the file's path in the release;
    cache_path, where the download cache keeps it (None where a release checkout lacks it)."""

    def __init__(
        self,
        *args: object,
        reason: str | None = None,
        release: str | None = None,
        release_file: str | None = None,
        cache_path: str | None = None,
        **fields: object,
    ) -> None:
        super().__init__(*args, **fields)  # type: ignore[arg-type]  # the family's own fields (option)
        self.reason, self.release, self.release_file, self.cache_path = reason, release, release_file, cache_path


class CacheFileError(BARTScoreError, ValueError):
    """A score cache file that cannot be used: another format, another model or settings, or damaged."""


class OutputFileError(BARTScoreError, OSError):
    """An output file that cannot be written as a new file renamed over the old one: something other than a regular
    file (a folder, device, FIFO or socket) is under its name. As an OSError: errno EINVAL, strerror the reason (the
    message without the path), filename the path."""

    def __init__(self, reason: str, *, path: str) -> None:
        super().__init__(reason, ": ", FileName(path))
        self.errno, self.strerror, self.filename = 22, reason, path


class ScoringError(BARTScoreError, RuntimeError):
    """Scoring failed at run time for a reason that is not the input's (a pair that does not fit in memory)."""


class BARTScoreWarning(SaidInParts, UserWarning):
    """Every warning bart_score gives: the category to filter on, here or in an application that shows them. Like the
    errors, its message is made of parts with a separate remedy, so that a front end can say it in its own words
    (warning.said(naming)) or give its own remedy (warning.problem(naming) and its words)."""

    def __init__(self, *parts: Part, remedy: Sequence[Part] | Part | None = None) -> None:
        self.parts = tuple(parts)
        self.remedy = parts_of(remedy)
        super().__init__(self.said())

    def __reduce__(self) -> tuple:
        return rebuilt, (type(self), dict(self.__dict__))

    def __str__(self) -> str:
        return self.said()


class TokenizationWarning(BARTScoreWarning):
    """Tokenizing changed what is scored: texts cut to max_length, or special-token strings read as special tokens."""


class RescaleWarning(BARTScoreWarning):
    """The rescaling's reference points: a direction they cannot rescale or barely can, or fewer reference pairs
    than were asked for."""


class FewerReferencePairsWarning(RescaleWarning):
    """The texts give fewer distinct reference pairs than were asked for: every pair they give was scored, and the
    reference points are made of those (a front end that asks for more pairs than it needs may hide it)."""


class LongSourceWarning(BARTScoreWarning):
    """long_source="windows": sentences cut for want of an end, windows cut at a short source's edges, or a
    retriever that cuts sentences shorter than its own settings say."""


class CacheWarning(BARTScoreWarning):
    """The score cache file was repaired: an unfinished last line (an interrupted write) was dropped."""


class ServerWarning(BARTScoreWarning):
    """A served model (bart_score.models.served._transport) is reached over plain http:// from another machine: the
    texts, and the API key if one is set, travel unencrypted."""


def first_line(error: BaseException) -> str:
    """What an error from another library says, in one line (its first; its class name when it says nothing), for a
    message of ours that names the cause."""
    return (str(error).splitlines() or [type(error).__name__])[0]
