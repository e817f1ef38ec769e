"""The checked settings of a BARTScorer: EngineOptions, the model, its device and sizes, its token policy (a causal
LM's template, GPTScore's, chat's) and a served model's requests."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from ..errors import InputError, InputTypeError
from ..inputs import describe, optional_positive_int, whole_number
from ..messages import Mention, shown
from ..variants import DEFAULT_CHECKPOINT, DEFAULT_MAX_LENGTH, DTYPE_NAMES, DtypeName
from ._chat import DEFAULT_INSTRUCTIONS, DEFAULT_TEMPLATE, ChatSettings, chat_only, chat_settings, template_sides
from ._checks import (
    chat_template_file,
    device_setting,
    given_twice,
    name_text,
    one_of,
    true_or_false,
    whole_number_from,
)
from ._scoring import ScoringOptions
from ._table import FILE, MODEL_ENTRY_SETTING, CheckedOptions, Flag, option, options_table
from ._vocabulary import COMPATIBILITY, RESULTS_ON, Compatibility, ResultsOn

if TYPE_CHECKING:
    from torch import device as TorchDevice
else:
    # The field's type without importing torch (--help answers at once): a flag's kind, read from it, is a text.
    TorchDevice = str

# A served model's requests (bart_score.models.served): in flight at once, the seconds each may take, and the attempts
# after one fails for want of an answer.
DEFAULT_CONCURRENCY = 4
DEFAULT_REQUEST_TIMEOUT = 120.0
DEFAULT_RETRIES = 3
# The most requests in flight at once (concurrency): 32 requests of up to 16 pairs (kinds.PAIRS_PER_REQUEST) are
# 512 sequences, more than a server decodes together on one GPU (vLLM's --max-num-seqs, llama-server's slots): more
# would only wait in its queue, while each holds its answer's memory here (AnswerBound). At 32, the command line met
# with hostile answers to every request peaked under 0.5 GiB (docs/security.md).
MAX_CONCURRENCY = 32
# The most seconds a request may be given (request_timeout): a day, far beyond any answer (the real llama-server's
# slowest pair took seconds on two cores), and far within what socket timeouts and timers take (9,999,999,999 s
# overflowed the platform's time_t).
MAX_REQUEST_TIMEOUT = 86_400.0

# The most CPU threads torch may be given (threads): more than the cores of any machine torch runs on, and few enough
# that a thread pool of that size (each thread's stack reserved) cannot exhaust a process.
MAX_THREADS = 1024


def _threads(value: Any, name: str) -> int:
    """The check of threads: a whole number from 1 to MAX_THREADS."""
    number = whole_number(value)
    if number is None or not 1 <= number <= MAX_THREADS:
        raise InputError(Mention(name), f" must be an integer from 1 to {MAX_THREADS}, got {shown(value)}", value=value)
    return number


def _request_seconds(value: Any, name: str) -> float:
    """The check of a served model's request_timeout: a positive number of seconds, at most MAX_REQUEST_TIMEOUT."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_REQUEST_TIMEOUT:
        raise InputError(
            Mention(name),
            f" must be a number of seconds above 0 and at most {MAX_REQUEST_TIMEOUT:,g} (a day), got {shown(value)}",
            value=value,
        )
    return float(value)


def _concurrency(value: Any, name: str) -> int:
    """The check of a served model's concurrency: a whole number from 1 to MAX_CONCURRENCY."""
    number = whole_number(value)
    if number is None or not 1 <= number <= MAX_CONCURRENCY:
        raise InputError(
            Mention(name),
            f" must be an integer from 1 to {MAX_CONCURRENCY} (requests in flight at once), got {shown(value)}",
            value=value,
        )
    return number


def _template(value: Any, name: str) -> str:
    template_sides(value, Mention(name))
    return value


def _default_instructions() -> str:
    """DEFAULT_INSTRUCTIONS as instruction's text says them: each phrase with the directions it is for, then the blank
    line and {condition} that end each."""
    directions_of: dict[str, list[str]] = {}
    for direction, instruction in DEFAULT_INSTRUCTIONS.items():
        directions_of.setdefault(instruction.removesuffix("\n\n{condition}"), []).append(direction)
    phrases = ", ".join(f"{phrase!r} for {' and '.join(directions)}" for phrase, directions in directions_of.items())
    return phrases + ", then a blank line and {condition}"


@options_table
@dataclass(frozen=True)
class EngineOptions(CheckedOptions):
    """The checked settings of a ``BARTScorer``, as one object to build once and pass whole: ``BARTScorer(options)``.
    The first seven may be given by position, in the original class's order.

    chat_settings is derived: the checked chat options (ChatSettings), None without chat."""

    device: str | TorchDevice | None = option(
        None,
        text="cuda, cuda:1, cpu, ... (default: CUDA when available)",
        check=device_setting,
        flag=Flag("--device", section="device"),
    )
    max_length: int | None = option(
        None,
        text=f"truncate texts to this many tokens (default {DEFAULT_MAX_LENGTH}, or the model's positions)",
        check=whole_number_from(2),
        flag=Flag("--max-length", section="sizes"),
    )
    checkpoint: str = option(
        DEFAULT_CHECKPOINT,
        text="vanilla, cnn, cnn-para, mbart50, mt5, flan-t5, opt, qwen, a Hub id, a checkpoint directory of a BART, "
        'mBART, T5/mT5/Flan-T5, PEGASUS, Marian or decoder-only causal LM, or a GGUF file (needs pip install "bartscore'
        '[gguf]")',
        flag=Flag("-m", "--model", default="cnn", section="checkpoint"),
    )
    dtype: DtypeName = option(
        "float32",
        text="(default: {default})",
        check=one_of(DTYPE_NAMES),
        flag=Flag("--dtype", section="device"),
    )
    max_tokens: int | None = option(  # one --max-tokens, one text, sets both
        None,
        text=ScoringOptions.TABLE["max_tokens"].text,
        check=optional_positive_int,
        flag=ScoringOptions.TABLE["max_tokens"].flags,
    )
    distributed: bool = option(
        True,
        text="when a torch.distributed process group is initialised (torchrun, accelerate launch), every rank passes "
        "the same inputs and each scores a share of the work, balanced by tokens; False scores alone",
        check=true_or_false,
    )
    results_on: ResultsOn = option(
        "all",
        text='"all" (every rank gets all scores) or "rank0" (other ranks get None)',
        check=one_of(RESULTS_ON, "'all' or 'rank0'"),
    )
    _: dataclasses.KW_ONLY
    source_lang: str | None = option(
        None,
        text="mBART: the sources' language code (e.g. de_DE)",
        flag=Flag("--source-lang", metavar="CODE", section="checkpoint"),
        setting=MODEL_ENTRY_SETTING,
    )
    target_lang: str | None = option(
        None,
        text="mBART: the outputs' and references' code (e.g. en_XX)",
        flag=Flag("--target-lang", metavar="CODE", section="checkpoint"),
        setting=MODEL_ENTRY_SETTING,
    )
    template: str | None = option(
        None,
        text=f"causal LMs: the prefix built from a condition, holding {{condition}} once (default: "
        f"{DEFAULT_TEMPLATE!r}; in bash write a newline as $'...\\n')",
        check=_template,
        flag=Flag("--template", section="prompting"),
        setting=MODEL_ENTRY_SETTING,
    )
    compatibility: Compatibility | None = option(
        None,
        text=(
            "causal LMs: score exactly as GPTScore does (its prompt_text goes into ",
            Mention("template"),
            " after {condition})",
        ),
        check=one_of(COMPATIBILITY, f"None or one of {COMPATIBILITY}"),
        flag=Flag("--compatibility", section="prompting"),
        setting=MODEL_ENTRY_SETTING,
    )
    chat: bool = option(
        False,
        text=(
            "causal LMs with a chat template (instruction-tuned): score in their chat format, the condition in a user "
            "turn (",
            Mention("instruction"),
            ") and the scored text as the assistant's reply, closed by the template's end-of-turn token",
        ),
        flag=Flag("--chat", section="prompting"),
        setting=MODEL_ENTRY_SETTING,
    )
    instruction: str | Mapping[str, str] | None = option(
        None,
        text=(
            "with ",
            Mention("chat"),
            ": the user turn, holding {condition} once, for every direction (default: each direction's own: "
            f"{_default_instructions()})",
        ),
        flag=Flag("--instruction", metavar="TEXT", section="prompting"),
        setting=MODEL_ENTRY_SETTING,
    )
    system: str | None = option(
        None,
        text=("with ", Mention("chat"), ": a system turn first (default: the chat template's own, if any)"),
        flag=Flag("--system", metavar="TEXT", section="prompting"),
        setting=MODEL_ENTRY_SETTING,
    )
    chat_template: Annotated[str, FILE] | None = option(
        None,
        text=(
            "with ",
            Mention("chat"),
            ": a chat template file (Jinja) to score in, for a model without one or instead of its own",
        ),
        check=chat_template_file,
        flag=Flag("--chat-template", section="prompting"),
        setting=MODEL_ENTRY_SETTING,
    )
    served_model: str | None = option(
        None,
        text=(
            "with ",
            Mention("checkpoint"),
            " naming a server ({served_kinds} and its URL): the served model's name (default: the server's only model)",
        ),
        check=name_text,
        flag=Flag("--served-model", metavar="NAME", section="checkpoint"),
        setting=MODEL_ENTRY_SETTING,
    )
    served_tokenizer: str | None = option(
        None,
        text="a served model: the Hub id, folder or GGUF file its tokenizer is read from (default: the Hub id the "
        "server reports; needed for llama.cpp+, which reports a path)",
        check=name_text,
        flag=Flag("--served-tokenizer", metavar="CHECKPOINT", section="checkpoint"),
        setting=MODEL_ENTRY_SETTING,
    )
    concurrency: int | None = option(
        None,
        text=f"a served model: at most {{metavar}} requests at once, {{metavar}} at most {MAX_CONCURRENCY} (default "
        f"{DEFAULT_CONCURRENCY})",
        check=_concurrency,
        flag=Flag("--concurrency", metavar="N", section="device"),
        setting=MODEL_ENTRY_SETTING,
    )
    request_timeout: float | None = option(
        None,
        text=f"a served model: seconds a request may take in all, its whole answer included (default "
        f"{DEFAULT_REQUEST_TIMEOUT:g}, at most {MAX_REQUEST_TIMEOUT:g})",
        check=_request_seconds,
        flag=Flag("--request-timeout", metavar="SECONDS", section="device"),
        setting=MODEL_ENTRY_SETTING,
    )
    request_retries: int | None = option(
        None,
        text=f"a served model: retry a request {{metavar}} times after a 429, 5xx, timeout or dropped connection "
        f"(default {DEFAULT_RETRIES})",
        check=whole_number_from(0),
        flag=Flag("--request-retries", metavar="N", section="device"),
        setting=MODEL_ENTRY_SETTING,
    )
    threads: int | None = option(
        None,
        text="torch's CPU threads (default: {default})",
        unset="left as the process has them: the caller's torch.set_num_threads, or OMP_NUM_THREADS",
        check=_threads,
        # The command line sets the threads from the cores and the load (bart_score.cli._requests.default_threads).
        flag=Flag(
            "--threads",
            metavar="N",
            default_text="OMP_NUM_THREADS if set, else the cores this process may use less the load average of the "
            "others, at least 1; docs/cli.md",
            section="device",
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    chat_settings: ChatSettings | None = dataclasses.field(init=False, repr=False, compare=False)

    def _check_together(self) -> None:
        """The chat options, checked with the template and compatibility they may not go with."""
        self._put(
            "chat_settings",
            chat_settings(
                self.chat, self.instruction, self.system, template=self.template, compatibility=self.compatibility
            ),
        )
        if self.chat_template is not None and not self.chat:
            raise chat_only(Mention("chat_template"), self.chat_template)

    @classmethod
    def resolve(cls, options: EngineOptions | None = None, /, **keywords: Any) -> EngineOptions:
        """The settings of a call that takes `options` or the same settings as keywords (never both)."""
        if options is None:
            return cls(**keywords)
        if not isinstance(options, EngineOptions):
            raise InputTypeError(
                Mention("options"), f" must be an EngineOptions, got {describe(options)}", value=options
            )
        if keywords:
            raise given_twice(options, keywords, "an EngineOptions")
        return options


ENGINE_OPTION_NAMES = frozenset(EngineOptions.TABLE)
