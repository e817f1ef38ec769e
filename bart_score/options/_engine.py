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
from ..variants import DEFAULT_CHECKPOINT, DEFAULT_CPU_MAX_TOKENS, DEFAULT_MAX_TOKENS, DTYPE_NAMES, DtypeName
from ._chat import ChatSettings, chat_only, chat_settings, template_sides
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


@options_table
@dataclass(frozen=True)
class EngineOptions(CheckedOptions):
    """The checked settings of a ``BARTScorer``, as one object to build once and pass whole: ``BARTScorer(options)``.
    The first seven may be given by position, in the original class's order.

    chat_settings is derived: the checked chat options (ChatSettings), None without chat."""

    device: str | TorchDevice | None = option(
        None,
        doc='"cuda", "cuda:1", "cpu", ...; default CUDA when available',
        check=device_setting,
        flag=Flag("--device", help="cuda, cuda:1, cpu, ... (default: CUDA when available)", section="device"),
    )
    max_length: int | None = option(
        None,
        doc="tokens a text is truncated to (default 1024, as the original, or the model's positions if fewer)",
        check=whole_number_from(2),
        flag=Flag(
            "--max-length",
            help="truncate texts to this many tokens (default 1024, or the model's positions)",
            section="sizes",
        ),
    )
    checkpoint: str = option(
        DEFAULT_CHECKPOINT,
        doc='a named configuration ("vanilla", "cnn", "cnn-para", "mbart50", "mt5", "flan-t5", "opt", "qwen"), a Hub '
        "id, or a local directory of a BART, mBART, T5/mT5/Flan-T5, PEGASUS, Marian or decoder-only causal LM "
        "checkpoint, or a GGUF file",
        flag=Flag(
            "-m",
            "--model",
            default="cnn",
            help="vanilla, cnn (default), cnn-para, mbart50, mt5, flan-t5, opt, qwen, a Hub id, a checkpoint directory "
            "of a BART, mBART, T5/mT5/Flan-T5, PEGASUS, Marian or decoder-only causal LM, or a GGUF file (needs "
            'pip install "bartscore[gguf]")',
            section="checkpoint",
        ),
    )
    dtype: DtypeName = option(
        "float32",
        doc='"float32" (default, the original\'s numbers), or "bfloat16"/"float16" for speed on GPUs',
        check=one_of(DTYPE_NAMES),
        flag=Flag("--dtype", help="(default: {default})", section="device"),
    )
    max_tokens: int | None = option(
        None,
        doc=f"padded tokens per model batch (default {DEFAULT_MAX_TOKENS} on a GPU, {DEFAULT_CPU_MAX_TOKENS} on a "
        "CPU); lower it if memory is short (scores do not change)",
        check=optional_positive_int,
        flag=ScoringOptions.TABLE["max_tokens"].flags,  # one --max-tokens sets both
    )
    distributed: bool = option(
        True,
        doc="when a torch.distributed process group is initialised (torchrun, accelerate launch), every rank passes "
        "the same inputs and each scores a share of the work, balanced by tokens; False scores alone",
        check=true_or_false,
    )
    results_on: ResultsOn = option(
        "all",
        doc='"all" (every rank gets all scores) or "rank0" (other ranks get None)',
        check=one_of(RESULTS_ON, "'all' or 'rank0'"),
    )
    _: dataclasses.KW_ONLY
    source_lang: str | None = option(
        None,
        doc='mBART\'s language code of the sources ("en_XX", "de_DE", ...)',
        flag=Flag(
            "--source-lang", metavar="CODE", help="mBART: the sources' language code (e.g. de_DE)", section="checkpoint"
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    target_lang: str | None = option(
        None,
        doc="mBART's language code of the predictions and references",
        flag=Flag(
            "--target-lang",
            metavar="CODE",
            help="mBART: the outputs' and references' code (e.g. en_XX)",
            section="checkpoint",
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    template: str | None = option(
        None,
        doc='causal LMs: the prefix built from a condition, holding "{condition}" once (default "{condition}\\n")',
        check=_template,
        flag=Flag(
            "--template",
            help="causal LMs: the prefix built from a condition, holding {condition} once (default: '{condition}\\n'; "
            "in bash write a newline as $'...\\n')",
            section="prompting",
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    compatibility: Compatibility | None = option(
        None,
        doc='"gptscore" scores a causal LM exactly as GPTScore\'s opt_score.py does (its template is "{condition}" + '
        "GPTScore's prompt_text)",
        check=one_of(COMPATIBILITY, f"None or one of {COMPATIBILITY}"),
        flag=Flag(
            "--compatibility",
            help="causal LMs: score exactly as GPTScore does (its prompt_text goes into --template after {condition})",
            section="prompting",
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    chat: bool = option(
        False,
        doc="True scores a causal LM that has a chat template in its chat format: the condition, put into the "
        "instruction, is a user turn and the target the assistant's reply (bart_score.models.chat)",
        flag=Flag(
            "--chat",
            help="causal LMs with a chat template (instruction-tuned): score in their chat format, the condition in a "
            "user turn (--instruction) and the scored text as the assistant's reply, closed by the template's "
            "end-of-turn token",
            section="prompting",
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    instruction: str | Mapping[str, str] | None = option(
        None,
        doc='with chat: the user turn built from a condition, holding "{condition}" once; one for every direction, or '
        "{direction: instruction} for some of faithfulness, precision and recall (default: each direction's own, "
        "bart_score.options.DEFAULT_INSTRUCTIONS). score() uses faithfulness's",
        flag=Flag(
            "--instruction",
            metavar="TEXT",
            help="with --chat: the user turn, holding {condition} once, for every direction (default: each "
            "direction's own: 'Summarize the following text.' for faithfulness, 'Paraphrase the following text.' for "
            "precision and recall, then a blank line and {condition})",
            section="prompting",
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    system: str | None = option(
        None,
        doc="with chat: a system turn put first (default: none, or whatever the chat template adds by itself)",
        flag=Flag(
            "--system",
            metavar="TEXT",
            help="with --chat: a system turn first (default: the chat template's own, if any)",
            section="prompting",
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    chat_template: Annotated[str, FILE] | None = option(
        None,
        doc="with chat: a file holding the chat template to score in (Jinja, as a tokenizer's chat_template), for a "
        "model that has none (a base model's GGUF file) or instead of its own; it renders under the same limits",
        check=chat_template_file,
        flag=Flag(
            "--chat-template",
            help="with --chat: a chat template file (Jinja) to score in, for a model without one or instead of its own",
            section="prompting",
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    served_model: str | None = option(
        None,
        doc='a checkpoint that names an inference server ("vllm+http://127.0.0.1:8000/v1"; docs/models.md): the '
        "served model's name on it (default: the server's only model)",
        check=name_text,
        flag=Flag(
            "--served-model",
            metavar="NAME",
            help="with -m naming a server ({served_kinds} and its URL): the served model's name "
            "(default: the server's only model)",
            section="checkpoint",
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    served_tokenizer: str | None = option(
        None,
        doc="a served model: the Hub id, folder or GGUF file its tokenizer is read from, to tokenize as the server "
        "does (default: the Hub id the server reports, from the Hugging Face cache; a path it reports is never read)",
        check=name_text,
        flag=Flag(
            "--served-tokenizer",
            metavar="CHECKPOINT",
            help="a served model: the Hub id, folder or GGUF file its tokenizer is read from (default: the Hub id "
            "the server reports; needed for llama.cpp+, which reports a path)",
            section="checkpoint",
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    concurrency: int | None = option(
        None,
        doc=f"a served model: the most requests in flight at once, from 1 to {MAX_CONCURRENCY} (default "
        f"{DEFAULT_CONCURRENCY})",
        check=_concurrency,
        flag=Flag(
            "--concurrency",
            metavar="N",
            help=f"a served model: at most N requests at once, N at most {MAX_CONCURRENCY} (default "
            f"{DEFAULT_CONCURRENCY})",
            section="device",
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    request_timeout: float | None = option(
        None,
        doc=f"a served model: the seconds a request may take in all, connecting, sending and its whole answer (default "
        f"{DEFAULT_REQUEST_TIMEOUT:g}, at most {MAX_REQUEST_TIMEOUT:,g}: a day)",
        check=_request_seconds,
        flag=Flag(
            "--request-timeout",
            metavar="SECONDS",
            help=f"a served model: seconds a request may take in all, its whole answer included (default "
            f"{DEFAULT_REQUEST_TIMEOUT:g}, at most {MAX_REQUEST_TIMEOUT:g})",
            section="device",
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    request_retries: int | None = option(
        None,
        doc=f"a served model: attempts after a request fails for want of an answer (429, 5xx, a timeout, a dropped "
        f"connection), with back-off (default {DEFAULT_RETRIES})",
        check=whole_number_from(0),
        flag=Flag(
            "--request-retries",
            metavar="N",
            help=f"a served model: retry a request N times after a 429, 5xx, timeout or dropped connection (default "
            f"{DEFAULT_RETRIES})",
            section="device",
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    threads: int | None = option(
        None,
        doc=f"torch's CPU threads, from 1 to {MAX_THREADS}, set when the engine loads (torch.set_num_threads, which is "
        "process-wide); default: left as the process has them (the caller's torch.set_num_threads, OMP_NUM_THREADS)",
        check=_threads,
        flag=Flag(
            "--threads",
            metavar="N",
            help="torch's CPU threads (default: OMP_NUM_THREADS if set, else the cores this process may use less the "
            "load average of the others, at least 1; docs/cli.md)",
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
