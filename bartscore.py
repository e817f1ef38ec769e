"""BARTScore: evaluating generated text as text generation (Yuan, Neubig & Liu, NeurIPS 2021).

One file with three faces:

* the scoring engine, ``BARTScorer``: a drop-in for the original ``bart_score.BARTScorer`` that plans each call
  (identical pairs merged, one encoder pass per distinct conditioning text, length-sorted batches under a token
  budget) before touching the model;
* the ``evaluate`` metric, ``BARTScore``: ``evaluate.load("./bartscore.py", "vanilla" | "cnn" | "cnn-para" | <model>)``;
* the command line: ``python bartscore.py score|compare ...`` (installed as ``bartscore``).

The numbers follow the original code where it differs from the paper: a score is the *mean* log-probability of the
scored text's tokens (``<s>`` and ``</s>`` included), and both texts are truncated to ``max_length`` (1024) tokens.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import warnings
from dataclasses import dataclass

import datasets
import evaluate
import huggingface_hub
import numpy as np
import torch
import transformers
from tqdm.auto import tqdm
from transformers import AutoConfig, AutoTokenizer, BartForConditionalGeneration
from transformers.cache_utils import DynamicCache, EncoderDecoderCache

__version__ = "0.1.0"

logger = logging.getLogger("bartscore")

VARIANTS = {
    "vanilla": "facebook/bart-large",
    "cnn": "facebook/bart-large-cnn",
    "cnn-para": "facebook/bart-large-cnn",
}
DEFAULT_CHECKPOINT = "facebook/bart-large-cnn"
PARA_WEIGHTS_ENV = "BARTSCORE_PARA_WEIGHTS"
# Where the original code looks for the paraphrase-tuned state dict when no path is given.
ORIGINAL_PARA_WEIGHTS = os.path.join("models", "bart.pth")

DIRECTIONS = ("faithfulness", "precision", "recall", "f_score")
AGGREGATIONS = ("mean", "max")
PROMPT_SIDES = ("encoder", "decoder")
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}

# Padded tokens per model batch. Scores do not depend on it; memory and speed do.
DEFAULT_MAX_TOKENS = 8192
# Logits materialised at once when reading target log-probabilities: at most this many elements (128 MB in
# float32) and positions.
_LOGIT_ELEMENTS = 1 << 25
_LOGIT_POSITIONS = 512
_RESAMPLED_VALUES = 1 << 24  # bootstrap values held at once (128 MiB of float64)

PROMPT_SETS = {
    # 70 prompts: source-side set, seed "in summary" (paper tab. 9)
    "summary": (
        "In a nutshell", "To conclude", "In brief", "Behind", "In short", "In the end", "Concisely", "Crisply",
        "At the end", "When all is said and done", "At last", "Lastly", "Summarising", "Not to beat about the bush",
        "To put it succinctly", "Elliptically", "In precis", "Just as importantly", "Pithily", "In sum",
        "In the rear", "To put it briefly", "In drawing things to a close", "In a few words", "Not to mince words",
        "Shortly", "To end", "Bringing up the rear", "Summarizing", "In summation", "After", "In the final analysis",
        "Last", "To cut a long story short", "To come to the point", "In fine", "Without wasting words", "Finally",
        "In a word", "In conclusion", "To summarize", "Without waste of words", "As a final point", "In essence",
        "Ultimately", "At the end of the day", "Compactly", "Laconically", "In winding up", "Last but not least",
        "At the rear", "Last in order", "Succinctly", "Briefly", "Curtly", "Not least of all", "Summarily",
        "All in all", "To sum up", "To put it concisely", "Tersely", "Not to put too fine a point on it",
        "Finally yet importantly", "Basically", "To be brief", "In outline", "To put it in a nutshell", "In closing",
        "Last of all", "In passing",
    ),
    # 34 prompts: reference-side set, seed "in other words" (paper tab. 9)
    "paraphrase": (
        "As it were", "Strictly speaking", "To put it another way", "That is", "To give an instance", "sc.",
        "That is to say", "i.e.", "Namely", "id est", "Videlicet", "To illustrate", "Scilicet", "Especially",
        "Particularly", "As an illustration", "In plain English", "For example", "Such as", "Like", "Specifically",
        "Expressly", "By way of illustration", "Case in point", "Specially", "By way of explanation",
        "Take for example", "To wit", "Viz.", "As", "For instance", "To give an example", "To rephrase it",
        "To be specific",
    ),
    # 1 prompt: the machine-translation prompt (paper §4.2.1)
    "mt": (
        "Such as",
    ),
}


# ---------------------------------------------------------------------------------------------------------------------
# Input checking: every problem is reported with the argument's name and the item's index.


def _describe(value):
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def _text_list(value, name, count=None):
    """A list of strings; with `count`, one per prediction."""
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be a list of strings, got {_describe(value)}")
    items = list(value)
    if count is not None and len(items) != count:
        raise ValueError(f"{name} has {len(items)} entries but predictions has {count}")
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise TypeError(f"{name}[{index}] is {_describe(item)}; expected a string")
    return items


def _reference_lists(value, name, count):
    """References as one list per example: a string is one reference, a list of strings several."""
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be a list (one entry per prediction), got {_describe(value)}")
    items = list(value)
    if len(items) != count:
        raise ValueError(f"{name} has {len(items)} entries but predictions has {count}")
    lists = []
    for index, item in enumerate(items):
        if isinstance(item, str):
            lists.append([item])
            continue
        if isinstance(item, (bytes, dict)) or not hasattr(item, "__iter__"):
            raise TypeError(f"{name}[{index}] is {_describe(item)}; expected a string or a list of strings")
        refs = list(item)
        if not refs:
            raise ValueError(f"{name}[{index}] is an empty list; every example needs at least one reference")
        for ref_index, ref in enumerate(refs):
            if not isinstance(ref, str):
                raise TypeError(f"{name}[{index}][{ref_index}] is {_describe(ref)}; expected a string")
        lists.append(refs)
    return lists


def _optional_positive_int(value, name):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer or None, got {value!r}")
    return value


@dataclass(frozen=True)
class ScoringOptions:
    """The resolved, checked options of one directions call (prompt_label is the signature's prompt field)."""

    directions: tuple
    aggregation: str
    prompts: tuple  # (None,) when no prompt is used
    prompt_label: str
    prompt_side: str


def resolve_options(*, has_references, has_sources, directions=None, aggregation="mean", prompt=None,
                    prompt_side="encoder"):
    """Checks the scoring options against the inputs given, before any work is done."""
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {AGGREGATIONS}, got {aggregation!r}")
    if prompt_side not in PROMPT_SIDES:
        raise ValueError(f"prompt_side must be one of {PROMPT_SIDES}, got {prompt_side!r}")
    if not has_references and not has_sources:
        raise ValueError("BARTScore needs sources=, references= or both, besides predictions")

    if directions is None:
        wanted = [d for d in DIRECTIONS if (has_sources if d == "faithfulness" else has_references)]
    else:
        requested = [directions] if isinstance(directions, str) else _text_list(directions, "directions")
        if not requested:
            raise ValueError("directions is empty; leave it out to compute every direction the inputs allow")
        for index, direction in enumerate(requested):
            if direction not in DIRECTIONS:
                raise ValueError(f"directions[{index}] is {direction!r}; choose from {DIRECTIONS}")
            if direction == "faithfulness" and not has_sources:
                raise ValueError("direction 'faithfulness' (source -> prediction) needs sources=, which was not given")
            if direction != "faithfulness" and not has_references:
                raise ValueError(f"direction {direction!r} needs references=, which were not given")
        wanted = [d for d in DIRECTIONS if d in requested]

    prompts, prompt_label = _resolve_prompts(prompt)
    if prompt is not None:
        prompt_label += f"@{prompt_side}"
    return ScoringOptions(tuple(wanted), aggregation, prompts, prompt_label, prompt_side)


def _resolve_prompts(prompt):
    """A lowercase identifier names a paper set; any other string is one phrase; a list is a set of phrases."""
    if prompt is None:
        return (None,), "none"
    if isinstance(prompt, str):
        if re.fullmatch(r"[a-z][a-z0-9_-]*", prompt):
            if prompt not in PROMPT_SETS:
                raise ValueError(
                    f"unknown prompt set {prompt!r}; the sets are {tuple(PROMPT_SETS)}. "
                    f"To use it as a prompt phrase, pass it in a list: prompt=[{prompt!r}] (on the command line: "
                    f"--prompt-phrases {prompt})"
                )
            return PROMPT_SETS[prompt], f"{prompt}({len(PROMPT_SETS[prompt])})"
        phrases = [prompt]
    else:
        phrases = _text_list(prompt, "prompt")
        if not phrases:
            raise ValueError("prompt is an empty list; pass None for no prompt")
    for index, phrase in enumerate(phrases):
        if not phrase.strip():
            raise ValueError(f"prompt[{index}] is blank")
    digest = hashlib.sha1("\n".join(phrases).encode("utf-8")).hexdigest()[:8]
    return tuple(phrases), f"custom-{digest}({len(phrases)})"


def apply_prompt(condition, target, prompt, side):
    """The original code's strings: the encoder side appends " <prompt>,", the decoder side prepends "<prompt>, "."""
    if prompt is None:
        return condition, target
    if side == "encoder":
        return f"{condition} {prompt},", target
    return condition, f"{prompt}, {target}"


# ---------------------------------------------------------------------------------------------------------------------
# Checkpoints


class CheckpointNotFoundError(OSError):
    """The BART checkpoint (or the paraphrase weights) is not on this machine and could not be downloaded."""


def resolve_checkpoint(name):
    """Maps a variant name, Hub id or local directory to (checkpoint, path of a state dict to load over it or None)."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"checkpoint must be a variant name, a Hub id or a directory, got {name!r}")
    if name != "cnn-para":
        return VARIANTS.get(name, name), None
    path = os.environ.get(PARA_WEIGHTS_ENV)
    if not path:
        raise CheckpointNotFoundError(
            f"The 'cnn-para' variant needs the paraphrase-tuned BART weights (bart.pth from the BARTScore release, "
            f"https://github.com/neulab/BARTScore), which are not on the Hub. Download the file and set "
            f"{PARA_WEIGHTS_ENV}=/path/to/bart.pth"
        )
    if not os.path.isfile(path):
        raise CheckpointNotFoundError(f"{PARA_WEIGHTS_ENV} is set to {path!r}, but no file is there")
    return VARIANTS["cnn-para"], path


def load_checkpoint(checkpoint):
    """Tokenizer and model from a local directory, the Hugging Face cache, or the Hub (tried in that order)."""
    if os.path.isdir(checkpoint):
        return _load_pretrained(checkpoint)
    try:
        return _load_pretrained(checkpoint, local_files_only=True)
    except OSError:
        if huggingface_hub.constants.HF_HUB_OFFLINE:
            reason = "HF_HUB_OFFLINE is set"
        else:
            try:
                return _load_pretrained(checkpoint)
            except OSError as hub_error:
                reason = str(hub_error).splitlines()[0]
    raise CheckpointNotFoundError(
        f"Cannot load the BART checkpoint {checkpoint!r}: it is not a local directory, not in the Hugging Face cache "
        f"({huggingface_hub.constants.HF_HUB_CACHE}), and it could not be downloaded ({reason}). On a machine with "
        f"internet access run `hf download {checkpoint}` and copy the cache here, or pass the path of a directory "
        f"saved with save_pretrained() as the checkpoint."
    )


def _load_pretrained(checkpoint, **options):
    config = AutoConfig.from_pretrained(checkpoint, **options)
    if config.model_type != "bart":
        raise ValueError(
            f"{checkpoint!r} is a {config.model_type!r} model; BARTScore needs a BART checkpoint (model_type 'bart')"
        )
    missing = [name for name in ("pad_token_id", "decoder_start_token_id") if getattr(config, name, None) is None]
    if missing:
        raise ValueError(f"{checkpoint!r} has no {' or '.join(missing)} in its config; BARTScore's teacher forcing "
                         f"needs both (facebook/bart-* use pad_token_id=1, decoder_start_token_id=2)")
    tokenizer = AutoTokenizer.from_pretrained(checkpoint, **options)
    model = BartForConditionalGeneration.from_pretrained(checkpoint, config=config, dtype=torch.float32, **options)
    return tokenizer, model.eval()


# ---------------------------------------------------------------------------------------------------------------------
# The engine


class _Plan:
    """One pass over a call's pairs before any model work (as bert_score does): each distinct text is tokenized once,
    identical (condition, target) pairs are scored once, and pairs are grouped by conditioning text so that each
    distinct condition goes through the encoder once."""

    def __init__(self, tokenize, conditions, targets):
        text_index = {}
        condition_ids = [text_index.setdefault(text, len(text_index)) for text in conditions]
        target_ids = [text_index.setdefault(text, len(text_index)) for text in targets]
        self.texts = list(text_index)
        self.tokens, too_long = tokenize(self.texts)
        pair_index = {}
        self.pair_of_input = [pair_index.setdefault(pair, len(pair_index)) for pair in zip(condition_ids, target_ids)]
        self.pairs = list(pair_index)
        self.pairs_by_condition = {}
        for pair, (condition, _) in enumerate(self.pairs):
            self.pairs_by_condition.setdefault(condition, []).append(pair)
        self.truncated_conditions = len(too_long.intersection(condition_ids))
        self.truncated_targets = len(too_long.intersection(target_ids))

    def length(self, text_id):
        return len(self.tokens[text_id])


def _token_batches(items, lengths, max_tokens, max_items):
    """Greedy split of length-sorted items into batches whose padded size, rows x sum of the longest length of each
    part (target and condition for the decoder), stays within max_tokens. An item over budget gets a batch alone."""
    batch, longest = [], ()
    for item in items:
        item_lengths = lengths(item)
        grown = tuple(map(max, longest, item_lengths)) if batch else item_lengths
        if batch and ((len(batch) + 1) * sum(grown) > max_tokens or len(batch) == max_items):
            yield batch
            batch, grown = [], item_lengths
        batch.append(item)
        longest = grown
    if batch:
        yield batch


class _UnkeptCache(DynamicCache):
    """A self-attention cache that keeps nothing: each target is decoded in one pass, so storing (concatenating) its
    keys and values would be wasted copies."""

    def update(self, key_states, value_states, layer_idx, *args, **kwargs):
        return key_states, value_states


@dataclass
class _EncodedConditions:
    hidden: torch.Tensor  # (conditions, length, d_model)
    mask: torch.Tensor  # (conditions, length)
    cross_keys_values: list  # per decoder layer: (keys, values), each (conditions, heads, length, head_dim)


class _DoesNotFit(RuntimeError):
    pass


def _default_device():
    """CUDA when available (under torchrun / accelerate, this process's GPU: LOCAL_RANK), else the CPU."""
    if not torch.cuda.is_available():
        return "cpu"
    return f"cuda:{int(os.environ.get('LOCAL_RANK', 0)) % torch.cuda.device_count()}"


@dataclass
class _ProcessGroup:
    """This process's place in a torch.distributed group, and how a scoring call is split across the group."""

    world: int
    rank: int

    def share(self, plan):
        """This rank's pairs, grouped by condition. The work (each condition's tokens, then its targets' tokens) is
        laid end to end and cut into consecutive runs, one per rank, at the smallest per-rank token load that ranks
        filled in turn can hold (found by bisection, to within 0.5%). A condition cut between two ranks is encoded by
        both: at most world - 1 extra encoder passes. Every rank computes the same assignment."""
        low = max(plan.length(c) + max(plan.length(plan.pairs[p][1]) for p in pairs)
                  for c, pairs in plan.pairs_by_condition.items()) if plan.pairs else 0
        high = sum(map(plan.length, plan.pairs_by_condition)) + sum(plan.length(t) for _, t in plan.pairs)
        while high - low > max(1, low // 200):
            middle = (low + high) // 2
            if self._fill(plan, middle) is None:
                low = middle
            else:
                high = middle
        return self._fill(plan, high)[self.rank]

    def _fill(self, plan, capacity):
        """Ranks take the work in order, each up to `capacity` tokens; None if `world` ranks cannot hold it."""
        shares, load = [{}], 0
        for condition, pairs in plan.pairs_by_condition.items():
            for pair in pairs:
                target = plan.length(plan.pairs[pair][1])
                cost = target if condition in shares[-1] else target + plan.length(condition)
                if load and load + cost > capacity:
                    if len(shares) == self.world:
                        return None
                    shares.append({})
                    load, cost = 0, target + plan.length(condition)
                shares[-1].setdefault(condition, []).append(pair)
                load += cost
        return shares + [{} for _ in range(self.world - len(shares))]

    def raise_if_any_failed(self, error, device):
        """Every rank learns that another failed (rather than waiting forever for its results) and raises too."""
        errors = [None] * self.world
        with _current_device(device):
            torch.distributed.all_gather_object(errors, None if error is None else f"{type(error).__name__}: {error}")
        if error is not None:
            raise error
        for rank, message in enumerate(errors):
            if message is not None:
                raise RuntimeError(f"rank {rank} failed, so this call has no results: {message}")

    def gather(self, results, results_on, device):
        """Every rank's results, merged, on every rank (results_on="all") or on rank 0 only (others get None)."""
        with _current_device(device):
            if results_on == "all":
                parts = [None] * self.world
                torch.distributed.all_gather_object(parts, results)
            else:
                parts = [None] * self.world if self.rank == 0 else None
                torch.distributed.gather_object(results, parts, dst=0)
        if parts is None:
            return None
        return {pair: value for part in parts for pair, value in part.items()}


def _current_device(device):
    """Object collectives over NCCL run on the current CUDA device, which must be this process's own."""
    return torch.cuda.device(device) if device.type == "cuda" else contextlib.nullcontext()


def _check_same_inputs_on_every_rank(conditions, targets, group, device):
    """The engine splits one shared workload across ranks; ranks that pass different inputs would get wrong
    results, so that is refused on every rank (the metric gathers per-rank examples itself)."""
    digest = hashlib.sha1()
    for text in (*conditions, *targets):
        digest.update(text.encode("utf-8", "surrogatepass") + b"\0")
    digests = [None] * group.world
    with _current_device(device):
        torch.distributed.all_gather_object(digests, (len(conditions), digest.hexdigest()))
    if len(set(digests)) > 1:
        raise ValueError(
            "under torch.distributed, BARTScorer splits one workload across the ranks, so every rank must pass the "
            f"same srcs and tgts; they differ here ({[count for count, _ in digests]} pairs per rank). To score "
            "each rank's own examples, use the metric's compute (it gathers them) or BARTScorer(distributed=False)"
        )


class BARTScorer:
    """The BARTScore engine, call-compatible with the original ``BARTScorer``.

    ``score(srcs, tgts)`` gives, for each pair, the mean log-probability BART assigns to the target's tokens given the
    source: -(sum of token NLL) / (number of target tokens, ``<s>`` and ``</s>`` included), both texts truncated to
    ``max_length`` tokens, exactly as the original. Errors raise; nothing ends the process.

    checkpoint: a variant ("vanilla", "cnn", "cnn-para"), a Hub id, or a local directory of a BART checkpoint.
    device: "cuda", "cuda:1", "cpu", ...; default CUDA when available.
    dtype: "float32" (default, the original's numbers), or "bfloat16"/"float16" for speed on GPUs.
    max_tokens: padded tokens per model batch; lower it if memory is short (scores do not change).
    distributed: when a torch.distributed process group is initialised (torchrun, accelerate launch), every rank
        passes the same inputs and each scores a share of the work, balanced by tokens; False scores alone.
    results_on: "all" (every rank gets all scores) or "rank0" (other ranks get None).
    """

    def __init__(self, device=None, max_length=1024, checkpoint=DEFAULT_CHECKPOINT, dtype="float32",
                 max_tokens=DEFAULT_MAX_TOKENS, distributed=True, results_on="all"):
        if dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {tuple(DTYPES)}, got {dtype!r}")
        if results_on not in ("all", "rank0"):
            raise ValueError(f"results_on must be 'all' or 'rank0', got {results_on!r}")
        self.max_tokens = _optional_positive_int(max_tokens, "max_tokens") or DEFAULT_MAX_TOKENS
        self.distributed = distributed
        self.results_on = results_on
        self.device = torch.device(device if device is not None else _default_device())
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"device {str(self.device)!r} was asked for, but this torch build sees no CUDA device; "
                             f"pass device='cpu' (or leave device out to use CUDA only when it is there)")
        self.dtype = dtype
        if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 2:
            raise ValueError(f"max_length must be an integer of at least 2, got {max_length!r}")
        self.checkpoint, para_weights = resolve_checkpoint(checkpoint)
        self.tokenizer, self.model = load_checkpoint(self.checkpoint)
        positions = self.model.config.max_position_embeddings
        if max_length > positions:
            raise ValueError(f"max_length must be an integer from 2 to {positions} (the model's positions), "
                             f"got {max_length}")
        self.max_length = max_length
        self.model.to(device=self.device, dtype=DTYPES[dtype])
        self.weights = None
        if para_weights:
            self.load(para_weights)

    # -- loading --------------------------------------------------------------------------------------------------

    def load(self, path=None):
        """Loads a state dict (such as the paraphrase-tuned ``bart.pth``) over the checkpoint's weights.

        Without a path: ``$BARTSCORE_PARA_WEIGHTS``, else ``models/bart.pth`` as in the original code."""
        path = path or os.environ.get(PARA_WEIGHTS_ENV) or ORIGINAL_PARA_WEIGHTS
        if not os.path.isfile(path):
            raise CheckpointNotFoundError(
                f"No state dict at {path!r}. The paraphrase-tuned weights (bart.pth) come from the BARTScore "
                f"release (https://github.com/neulab/BARTScore); pass their path or set {PARA_WEIGHTS_ENV}."
            )
        state = torch.load(path, map_location=self.device, weights_only=True)
        try:
            self.model.load_state_dict(state)
        except RuntimeError as error:
            raise ValueError(f"{path!r} does not fit the {self.checkpoint!r} model: {error}") from None
        self.weights = path
        return self

    @property
    def model_label(self):
        """The checkpoint as the signature names it."""
        if self.weights is None:
            return self.checkpoint
        return f"{self.checkpoint}+{os.path.basename(self.weights)}"

    # -- public scoring -------------------------------------------------------------------------------------------

    def score(self, srcs, tgts, batch_size=None, *, max_tokens=None, show_progress=False):
        """Mean target-token log-probability of each tgt given its src (higher is better; scores are negative).

        batch_size caps the pairs per model batch (the original's fixed batch of 4 is not needed: batches are
        filled up to max_tokens padded tokens); neither changes the scores."""
        result = self._log_likelihoods(srcs, tgts, batch_size=batch_size, max_tokens=max_tokens,
                                       show_progress=show_progress, keep_tokens=False)
        if result is None:
            return None
        sums, counts, _ = result
        return (sums / counts).tolist()

    def multi_ref_score(self, srcs, tgts, agg="mean", batch_size=None, *, max_tokens=None, show_progress=False):
        """Scores each src against each of its tgts (a list per example; counts may differ) and aggregates."""
        if agg not in AGGREGATIONS:
            raise ValueError(f"agg must be one of {AGGREGATIONS}, got {agg!r}")
        srcs = _text_list(srcs, "srcs")
        tgts = _reference_lists(tgts, "tgts", len(srcs))
        counts = [len(refs) for refs in tgts]
        flat = self.score([src for src, n in zip(srcs, counts) for _ in range(n)], [t for refs in tgts for t in refs],
                          batch_size, max_tokens=max_tokens, show_progress=show_progress)
        return None if flat is None else _aggregate(np.asarray(flat), counts, agg).tolist()

    def score_tokens(self, srcs, tgts, batch_size=None, *, max_tokens=None):
        """Each target token with its log-probability: one list of (token text, log-prob) per pair.

        The mean of a pair's log-probabilities is its score, and the texts joined are the target. A character that
        BART's byte-level tokens split (accents, emoji, CJK) is the text of the token that completes it; the tokens
        before it in that character have empty text."""
        result = self._log_likelihoods(srcs, tgts, batch_size=batch_size, max_tokens=max_tokens,
                                       show_progress=False, keep_tokens=True)
        if result is None:
            return None
        return [list(zip(self._token_texts(ids), log_probs.tolist())) for ids, log_probs in result[2]]

    def _token_texts(self, ids):
        texts, pending = [], []
        for position, token in enumerate(ids):
            pending.append(token)
            text = self.tokenizer.decode(pending, clean_up_tokenization_spaces=False)
            if text.endswith("\ufffd") and position + 1 < len(ids):  # an incomplete UTF-8 character so far
                texts.append("")
                continue
            texts.append(text)
            pending = []
        return texts

    def score_directions(self, predictions, references=None, sources=None, *, directions=None, aggregation="mean",
                         prompt=None, prompt_side="encoder", batch_size=None, max_tokens=None, show_progress=False):
        """The paper's directions for each prediction, in input order, with their means and a signature.

        faithfulness: source -> prediction; precision: reference -> prediction; recall: prediction -> reference;
        f_score: (precision + recall) / 2. With several references, precision and recall are aggregated over the
        references (mean or max) first, and f_score is the mean of the aggregated two. With prompts, a direction's
        score for one (condition, target) pair is the average over the prompts."""
        predictions = _text_list(predictions, "predictions")
        if references is not None:
            references = _reference_lists(references, "references", len(predictions))
        if sources is not None:
            sources = _text_list(sources, "sources", len(predictions))
        options = resolve_options(has_references=references is not None, has_sources=sources is not None,
                                  directions=directions, aggregation=aggregation, prompt=prompt,
                                  prompt_side=prompt_side)

        # Every direction's pairs go to the engine in one call, so texts shared across directions are planned once.
        wanted = set(options.directions)
        if "f_score" in wanted:
            wanted |= {"precision", "recall"}
        ref_counts = [len(refs) for refs in references] if references is not None else []
        owners = [i for i, n in enumerate(ref_counts) for _ in range(n)]
        flat_refs = [ref for refs in references for ref in refs] if references is not None else []
        unprompted = {
            "faithfulness": list(zip(sources, predictions)) if "faithfulness" in wanted else [],
            "precision": [(ref, predictions[i]) for i, ref in zip(owners, flat_refs)] if "precision" in wanted else [],
            "recall": [(predictions[i], ref) for i, ref in zip(owners, flat_refs)] if "recall" in wanted else [],
        }
        conditions, targets, spans = [], [], {}
        for direction, pairs in unprompted.items():
            start = len(conditions)
            for condition, target in pairs:
                for phrase in options.prompts:
                    prompted = apply_prompt(condition, target, phrase, options.prompt_side)
                    conditions.append(prompted[0])
                    targets.append(prompted[1])
            spans[direction] = slice(start, len(conditions))
        flat_scores = self.score(conditions, targets, batch_size, max_tokens=max_tokens, show_progress=show_progress)
        if flat_scores is None:
            return None
        flat_scores = np.asarray(flat_scores, dtype=np.float64)

        def prompt_averaged(direction):
            return flat_scores[spans[direction]].reshape(-1, len(options.prompts)).mean(axis=1)

        scores = {}
        if "faithfulness" in wanted:
            scores["faithfulness"] = prompt_averaged("faithfulness")
        for direction in ("precision", "recall"):
            if direction in wanted:
                scores[direction] = _aggregate(prompt_averaged(direction), ref_counts, options.aggregation)
        if "f_score" in wanted:
            scores["f_score"] = (scores["precision"] + scores["recall"]) / 2

        result = {direction: scores[direction].tolist() for direction in options.directions}
        for direction in options.directions:
            result[f"{direction}_mean"] = float(scores[direction].mean()) if len(predictions) else float("nan")
        result["signature"] = self.signature(options, ref_counts)
        return result

    def signature(self, options, ref_counts=()):
        """A sacrebleu-style reproducibility string for a result."""
        low, high = (min(ref_counts), max(ref_counts)) if ref_counts else (0, 0)
        nrefs = "-" if not ref_counts else str(low) if low == high else f"{low}-{high}"
        return "|".join([
            f"ckpt:{self.model_label}",
            f"dirs:{'+'.join(options.directions)}",
            f"agg:{options.aggregation}",
            f"nrefs:{nrefs}",
            f"prompt:{options.prompt_label}",
            f"maxlen:{self.max_length}",
            f"dtype:{self.dtype}",
            f"transformers:{transformers.__version__}",
            f"version:{__version__}",
        ])

    # -- the planned computation ----------------------------------------------------------------------------------

    def _tokenize(self, texts):
        """Token ids of each text, truncated to max_length as the original does, and the indices that were cut."""
        if not texts:
            return [], set()
        encoded = self.tokenizer(texts, max_length=self.max_length, truncation=True)["input_ids"]
        at_limit = [i for i, ids in enumerate(encoded) if len(ids) == self.max_length]
        too_long = set()
        if at_limit:
            full = self.tokenizer([texts[i] for i in at_limit], max_length=self.max_length + 1,
                                  truncation=True)["input_ids"]
            too_long = {i for i, ids in zip(at_limit, full) if len(ids) > self.max_length}
        vocab = self.model.config.vocab_size
        for i, ids in enumerate(encoded):
            if ids and max(ids) >= vocab:
                bad = max(ids)
                raise ValueError(
                    f"the text {texts[i][:60]!r} contains token {self.tokenizer.convert_ids_to_tokens(bad)!r} "
                    f"(id {bad}), which the model's {vocab}-token vocabulary lacks"
                )
        return encoded, too_long

    def _log_likelihoods(self, conditions, targets, *, batch_size, max_tokens, show_progress, keep_tokens):
        """Per input pair: the sum of target-token log-probabilities, the target token count, and (if asked) the
        target's token ids with their log-probabilities. None on ranks other than 0 when results go to rank 0."""
        conditions = _text_list(conditions, "srcs")
        targets = _text_list(targets, "tgts")
        if len(conditions) != len(targets):
            raise ValueError(f"srcs has {len(conditions)} entries but tgts has {len(targets)}")
        batch_size = _optional_positive_int(batch_size, "batch_size")
        max_tokens = _optional_positive_int(max_tokens, "max_tokens") or self.max_tokens
        group = self._process_group()
        if group:
            _check_same_inputs_on_every_rank(conditions, targets, group, self.device)
        lead = not group or group.rank == 0

        plan = _Plan(self._tokenize, conditions, targets)
        if lead and (plan.truncated_conditions or plan.truncated_targets):
            warnings.warn(
                f"BARTScore truncated {plan.truncated_conditions} distinct source text(s) and {plan.truncated_targets} "
                f"distinct target text(s) to max_length={self.max_length} tokens, as the original BARTScore does; "
                f"their tails are not scored",
                stacklevel=3,
            )
        logger.info("scoring %d pairs as %d distinct pairs with %d distinct sources", len(conditions),
                    len(plan.pairs), len(plan.pairs_by_condition))

        share = group.share(plan) if group else plan.pairs_by_condition
        results, error = None, None
        try:
            results = self._score_share(plan, share, conditions, targets, batch_size=batch_size,
                                        max_tokens=max_tokens, show_progress=show_progress and lead,
                                        keep_tokens=keep_tokens)
        except Exception as failure:
            if not group:
                raise
            error = failure  # every rank is told below
        if group:
            group.raise_if_any_failed(error, self.device)
            results = group.gather(results, self.results_on, self.device)
            if results is None:
                return None

        index = plan.pair_of_input
        sums = np.array([results[p][0] for p in index], dtype=np.float64)
        counts = np.array([plan.length(plan.pairs[p][1]) for p in index], dtype=np.float64)
        tokens = [(plan.tokens[plan.pairs[p][1]], results[p][1]) for p in index] if keep_tokens else None
        return sums, counts, tokens

    def _score_share(self, plan, share, conditions, targets, *, batch_size, max_tokens, show_progress, keep_tokens):
        """Scores the pairs of `share` (condition -> its pairs): conditions encoded in length-sorted batches, then
        their targets decoded in length-sorted batches. Returns pair -> (log-prob sum, token log-probs or None)."""
        results = {}
        with torch.inference_mode(), tqdm(total=sum(map(len, share.values())), unit="pair", desc="BARTScore",
                                          disable=not show_progress) as progress:

            def score_conditions(group):
                encoded = self._encode([plan.tokens[c] for c in group])
                row_of = {condition: row for row, condition in enumerate(group)}
                pairs = sorted((p for c in group for p in share[c] if p not in results),  # a retry skips done ones
                               key=lambda p: (plan.length(plan.pairs[p][1]), plan.length(plan.pairs[p][0])),
                               reverse=True)

                def score_batch(batch):
                    rows = [row_of[plan.pairs[p][0]] for p in batch]
                    per_pair = self._decode(encoded, rows, [plan.tokens[plan.pairs[p][1]] for p in batch])
                    for pair, log_probs in zip(batch, per_pair):
                        results[pair] = (float(log_probs.sum()), log_probs if keep_tokens else None)
                    progress.update(len(batch))

                def decoder_too_big(pair):
                    if len(group) > 1:
                        raise _DoesNotFit  # retry with fewer conditions held in memory
                    condition, target = plan.pairs[pair]
                    self._fail_alone(plan, condition, target, conditions, targets)

                for batch in _token_batches(pairs, lambda p: (plan.length(plan.pairs[p][1]),
                                                              plan.length(plan.pairs[p][0])), max_tokens, batch_size):
                    self._halving_on_oom(batch, score_batch, decoder_too_big)

            def encoder_too_big(condition):
                self._fail_alone(plan, condition, plan.pairs[share[condition][0]][1], conditions, targets)

            by_length = sorted(share, key=plan.length, reverse=True)
            for group in _token_batches(by_length, lambda c: (plan.length(c),), max_tokens, batch_size):
                self._halving_on_oom(group, score_conditions, encoder_too_big)
        return results

    def _process_group(self):
        """The torch.distributed process group this call's work is split across, or None."""
        if not self.distributed or not torch.distributed.is_available() or not torch.distributed.is_initialized():
            return None
        world = torch.distributed.get_world_size()
        return _ProcessGroup(world, torch.distributed.get_rank()) if world > 1 else None

    def _halving_on_oom(self, items, run, on_single_item):
        """Runs a batch; when the accelerator runs out of memory, splits it in halves and retries each half."""
        try:
            run(items)
            return
        except (torch.OutOfMemoryError, _DoesNotFit):
            pass  # retried below: the failed attempt's tensors are only freed once its exception is gone
        if self.device.type == "cuda":
            torch.cuda.empty_cache()
        if len(items) == 1:
            on_single_item(items[0])
            return
        middle = len(items) // 2
        self._halving_on_oom(items[:middle], run, on_single_item)
        self._halving_on_oom(items[middle:], run, on_single_item)

    def _fail_alone(self, plan, condition, target, conditions, targets):
        pair = (plan.texts[condition], plan.texts[target])
        index = next(i for i, p in enumerate(zip(conditions, targets)) if p == pair)
        raise RuntimeError(
            f"pair {index} (a source of {plan.length(condition)} tokens and a target of {plan.length(target)} tokens) "
            f"does not fit in {self.device} memory even alone; lower max_length or use a larger device"
        )

    def _pad(self, sequences):
        width = max(map(len, sequences))
        ids = torch.full((len(sequences), width), self.model.config.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(sequences), width), dtype=torch.long)
        for row, sequence in enumerate(sequences):
            ids[row, : len(sequence)] = torch.tensor(sequence)
            mask[row, : len(sequence)] = 1
        return ids.to(self.device), mask.to(self.device)

    def _encode(self, sequences):
        """Runs the encoder once per condition, and projects each decoder layer's cross-attention keys and values
        once, so that every target of a condition reuses them."""
        ids, mask = self._pad(sequences)
        hidden = self.model.get_encoder()(input_ids=ids, attention_mask=mask).last_hidden_state
        keys_values = []
        for layer in self.model.get_decoder().layers:
            attention = layer.encoder_attn
            split_heads = (hidden.shape[0], hidden.shape[1], -1, attention.head_dim)
            keys_values.append((attention.k_proj(hidden).view(split_heads).transpose(1, 2),
                                attention.v_proj(hidden).view(split_heads).transpose(1, 2)))
        return _EncodedConditions(hidden, mask, keys_values)

    def _decode(self, encoded, rows, targets):
        """Token log-probabilities of each target given its encoded condition (row), one tensor per target."""
        rows_tensor = torch.tensor(rows, device=self.device)
        width = int(encoded.mask[rows_tensor].sum(dim=1).max())
        cross = DynamicCache(ddp_cache_data=[(keys[rows_tensor, :, :width], values[rows_tensor, :, :width])
                                             for keys, values in encoded.cross_keys_values])
        labels, label_mask = self._pad(targets)
        # Teacher forcing as the original (labels shifted right); no decoder mask, padding only follows real tokens.
        decoder_input = torch.full_like(labels, self.model.config.pad_token_id)
        decoder_input[:, 0] = self.model.config.decoder_start_token_id
        decoder_input[:, 1:] = labels[:, :-1]
        states = self.model.get_decoder()(
            input_ids=decoder_input,
            encoder_hidden_states=encoded.hidden[rows_tensor, :width],
            encoder_attention_mask=encoded.mask[rows_tensor, :width],
            cache=EncoderDecoderCache(_UnkeptCache(), cross),
            use_cache=True,
        ).last_hidden_state
        valid = label_mask.bool()
        labels = labels[valid]
        log_probs = self._target_log_probs(states[valid], labels)
        # The original's NLL loss ignores the pad id, so a <pad> written in the target adds 0 but is still counted.
        log_probs[labels == self.model.config.pad_token_id] = 0.0
        return torch.split(log_probs.cpu(), [len(t) for t in targets])

    def _target_log_probs(self, states, labels):
        """log p(label) at each position, from the logits of a slice of positions at a time, written into reused
        buffers and normalised in place: never a whole batch's vocabulary distribution, no allocation per slice, and
        the log-softmax in float32 whatever the model's dtype (bfloat16/float16 logits land in a buffer of their own
        and are widened into the float32 one). The logits are laid out vocabulary x positions, with at most 512
        positions a slice: that matrix product runs about 40% faster on CPUs than positions x vocabulary
        (bench/bench_engine.py --breakdown)."""
        weight, bias = self.model.lm_head.weight, self.model.final_logits_bias.t()
        vocabulary = weight.shape[0]
        step = max(1, min(_LOGIT_POSITIONS, _LOGIT_ELEMENTS // vocabulary))
        size = vocabulary * min(step, len(labels))
        buffer = torch.empty(size, dtype=torch.float32, device=states.device)
        narrow = buffer if states.dtype == torch.float32 else torch.empty(size, dtype=states.dtype, device=states.device)
        pieces = []
        for start in range(0, len(labels), step):
            rows = states[start:start + step]
            logits = buffer[: vocabulary * len(rows)].view(vocabulary, len(rows))
            product = narrow[: vocabulary * len(rows)].view(vocabulary, len(rows))
            torch.addmm(bias, weight, rows.t(), out=product)
            if narrow is not buffer:
                logits.copy_(product)
            chosen = logits.gather(0, labels[None, start:start + step]).squeeze(0)
            top = logits.amax(dim=0, keepdim=True)
            normaliser = logits.sub_(top).exp_().sum(dim=0).log_() + top.squeeze(0)
            pieces.append(chosen - normaliser)
        return torch.cat(pieces)


def _aggregate(values, counts, how):
    """Collapses consecutive runs of `counts` values (one run per example) by mean or max."""
    if not len(counts):
        return np.zeros(0)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    if how == "max":
        return np.maximum.reduceat(values, starts)
    return np.add.reduceat(values, starts) / np.asarray(counts)


# ---------------------------------------------------------------------------------------------------------------------
# Scoring `datasets` corpora

_SCORERS_OF_THIS_PROCESS = {}


def score_dataset(dataset, scorer, *, predictions="prediction", references=None, sources=None, prefix="bartscore_",
                  rows_per_batch=1000, num_proc=None, **options):
    """Adds one column per direction (``bartscore_faithfulness``, ...) to a ``datasets.Dataset`` or
    ``IterableDataset`` with a batched ``map``: a Dataset is written batch by batch to datasets' cache files, an
    IterableDataset is scored lazily as it is iterated, so corpora larger than memory stream through.

    scorer: a ``BARTScorer``, or a dict of ``BARTScorer`` arguments (``{"checkpoint": "cnn"}``) from which each
    process builds its own: with ``num_proc=N`` (one process per GPU), process k uses ``cuda:k`` (modulo the GPU count)
    or the CPU. Under torchrun, give each rank its shard (``datasets.distributed.split_dataset_by_node``); a dict builds
    scorers with distributed=False, since each rank scores different rows.
    predictions, references, sources: column names (a reference cell may hold a list of references).
    options: as ``BARTScorer.score_directions`` (directions, aggregation, prompt, prompt_side, batch_size, ...)."""
    if isinstance(scorer, BARTScorer):
        if num_proc and num_proc > 1:
            raise ValueError("with num_proc > 1 pass the scorer as a dict of BARTScorer arguments, so that each "
                             "process loads its own model on its own device")
    elif not isinstance(scorer, dict):
        raise TypeError(f"scorer must be a BARTScorer or a dict of its arguments, got {_describe(scorer)}")
    columns = dataset.column_names or []
    for argument, column in (("predictions", predictions), ("references", references), ("sources", sources)):
        if column is not None and columns and column not in columns:
            raise ValueError(f"{argument}={column!r} is not a column of the dataset; its columns are {columns}")
    resolve_options(has_references=references is not None, has_sources=sources is not None,
                    **{k: v for k, v in options.items() if k in ("directions", "aggregation", "prompt", "prompt_side")})

    arguments = {"scorer": scorer, "predictions": predictions, "references": references, "sources": sources,
                 "prefix": prefix, "options": options}
    if isinstance(dataset, datasets.IterableDataset):
        return dataset.map(_score_rows, batched=True, batch_size=rows_per_batch, with_indices=True,
                           fn_kwargs=arguments)
    # Forked workers inherit torch's thread pools mid-flight and can deadlock; spawned ones start clean.
    with _start_method("spawn" if num_proc else None):
        return dataset.map(_score_rows, batched=True, batch_size=rows_per_batch, num_proc=num_proc, with_indices=True,
                           with_rank=bool(num_proc), fn_kwargs=arguments, desc="BARTScore")


def _score_rows(batch, indices, rank=None, *, scorer, predictions, references, sources, prefix, options):
    engine = scorer if isinstance(scorer, BARTScorer) else _scorer_of_this_process(scorer, rank)
    try:
        result = engine.score_directions(batch[predictions], references=batch[references] if references else None,
                                         sources=batch[sources] if sources else None, **options)
    except (TypeError, ValueError) as error:  # named by the dataset's column and row, not the batch's argument
        columns = {"predictions": predictions, "references": references, "sources": sources}
        message = re.sub(r"\b(predictions|references|sources)\[(\d+)\]",
                         lambda match: f"column {columns[match[1]]!r} at row {indices[int(match[2])]}", str(error))
        raise type(error)(message) from None
    return {prefix + d: result[d] for d in DIRECTIONS if d in result}


@contextlib.contextmanager
def _start_method(method):
    import multiprocess

    previous = multiprocess.get_start_method(allow_none=True)
    if method:
        multiprocess.set_start_method(method, force=True)
    try:
        yield
    finally:
        if method:
            multiprocess.set_start_method(previous, force=True)


def _scorer_of_this_process(arguments, rank):
    arguments = dict(arguments)
    if "device" not in arguments and rank is not None and torch.cuda.is_available():
        arguments["device"] = f"cuda:{rank % torch.cuda.device_count()}"
    arguments.setdefault("distributed", False)
    key = repr(sorted(arguments.items()))
    if key not in _SCORERS_OF_THIS_PROCESS:
        _SCORERS_OF_THIS_PROCESS[key] = BARTScorer(**arguments)
    return _SCORERS_OF_THIS_PROCESS[key]


# ---------------------------------------------------------------------------------------------------------------------
# System comparison: bootstrap confidence intervals, paired bootstrap resampling and the paired t-test


def compare_systems(scores, *, resamples=1000, confidence=0.95, alpha=0.05, seed=12345):
    """Compares systems scored on the same segments (`scores`: system name -> per-segment scores).

    For each system: the mean with a bootstrap confidence interval. For each pair: the mean difference, a two-sided
    paired bootstrap p-value (the same resampled segments for both systems, as Koehn 2004 and sacrebleu), a paired
    t-test, and the winner: the better system when both tests find the difference significant at `alpha`, else "".
    Both are required because on a handful of segments the bootstrap alone is far too eager (two segments that
    agree in sign give p = 0.002); with a single segment the p-values are NaN and there is no winner. No correction
    is made for testing many pairs. Resampling is seeded, so the same inputs give the same figures."""
    names = list(scores)
    if len(names) < 1:
        raise ValueError("compare_systems needs at least one system")
    counts = {name: len(scores[name]) for name in names}
    if len(set(counts.values())) != 1 or not counts[names[0]]:
        raise ValueError(f"every system needs the same, non-zero number of segments; got {counts}")
    matrix = np.asarray([np.asarray(scores[name], dtype=np.float64) for name in names])
    segments = matrix.shape[1]
    rng = np.random.default_rng(seed)
    chunk = max(1, _RESAMPLED_VALUES // matrix.size)  # resamples at a time, so memory stays flat on long corpora
    resampled_means = np.concatenate(  # (systems, resamples)
        [matrix[:, rng.integers(0, segments, size=(min(chunk, resamples - start), segments))].mean(axis=2)
         for start in range(0, resamples, chunk)], axis=1)
    tail = (1 - confidence) / 2 * 100
    systems = [
        {"system": name, "mean": float(matrix[i].mean()),
         "ci_low": float(np.percentile(resampled_means[i], tail)),
         "ci_high": float(np.percentile(resampled_means[i], 100 - tail))}
        for i, name in enumerate(names)
    ]
    pairs = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            deltas = resampled_means[i] - resampled_means[j]
            not_better = min(int((deltas <= 0).sum()), int((deltas >= 0).sum()))
            # One segment resamples to itself: no evidence either way.
            bootstrap_p = min(1.0, 2 * (not_better + 1) / (resamples + 1)) if segments > 1 else float("nan")
            t_statistic, t_p = paired_t_test(matrix[i], matrix[j])
            delta = float(matrix[i].mean() - matrix[j].mean())
            significant = bootstrap_p < alpha and t_p < alpha and delta != 0  # False for NaN
            winner = (names[i] if delta > 0 else names[j]) if significant else ""
            pairs.append({"system_a": names[i], "system_b": names[j], "delta": delta, "bootstrap_p": bootstrap_p,
                          "t_statistic": t_statistic, "t_test_p": t_p, "winner": winner})
    return {"systems": systems, "pairs": pairs, "resamples": resamples, "confidence": confidence, "alpha": alpha}


def compare_directions(per_system, **options):
    """compare_systems for each direction of score_corpus's {system: {direction: scores}}; options as there."""
    directions = next(iter(per_system.values()))
    return {direction: compare_systems({name: scores[direction] for name, scores in per_system.items()}, **options)
            for direction in directions}


def paired_t_test(a, b):
    """Two-sided paired t-test of mean(a - b) = 0: (t statistic, p-value); p is NaN with fewer than two segments."""
    differences = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    n = len(differences)
    if n < 2:
        return float("nan"), float("nan")
    mean, spread = differences.mean(), differences.std(ddof=1)
    if spread == 0:
        return (0.0, 1.0) if mean == 0 else (float(np.copysign(np.inf, mean)), 0.0)
    t = mean / (spread / np.sqrt(n))
    degrees = n - 1
    return float(t), _regularized_incomplete_beta(degrees / 2, 0.5, degrees / (degrees + t * t))


def _regularized_incomplete_beta(a, b, x):
    """I_x(a, b) by its continued fraction (modified Lentz); I_{df/(df+t^2)}(df/2, 1/2) is Student's two-sided p."""
    if x <= 0 or x >= 1:
        return float(x >= 1)
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _regularized_incomplete_beta(b, a, 1 - x)
    log_front = a * np.log(x) + b * np.log1p(-x) - np.log(a) - _log_beta(a, b)
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    fraction = d
    for m in range(1, 500):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            fraction *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return float(np.exp(log_front) * fraction)


def _log_beta(a, b):
    from math import lgamma

    return lgamma(a) + lgamma(b) - lgamma(a + b)


# ---------------------------------------------------------------------------------------------------------------------
# The `evaluate` metric

_CITATION = """\
@inproceedings{yuan2021bartscore,
  title     = {{BARTScore}: Evaluating Generated Text as Text Generation},
  author    = {Weizhe Yuan and Graham Neubig and Pengfei Liu},
  booktitle = {Advances in Neural Information Processing Systems},
  volume    = {34},
  pages     = {27263--27277},
  year      = {2021},
  url       = {https://arxiv.org/abs/2106.11520}
}
"""

_DESCRIPTION = """\
BARTScore judges a generated text by how likely a pre-trained sequence-to-sequence model (BART) finds it given
another text: the mean log-probability of its tokens. Four directions: faithfulness (source -> prediction),
precision (reference -> prediction), recall (prediction -> reference) and f_score (mean of precision and recall).
Scores are negative; higher is better. Configurations: "cnn" (default, facebook/bart-large-cnn, as the original
code), "vanilla" (facebook/bart-large, the paper's plain BARTScore), "cnn-para" (CNN plus the paraphrase-tuned
weights, read from the file named by $BARTSCORE_PARA_WEIGHTS), or any Hub id or local directory of a BART checkpoint.
"""

_KWARGS_DESCRIPTION = """
Computes BARTScore in every direction the inputs allow.

Args:
    predictions (list of str): the generated texts to judge.
    references (list of str, or list of lists of str): one reference, or several, per prediction; the number may
        differ from one prediction to the next.
    sources (list of str): the source (input) text of each prediction.
    directions (str or list of str): any of "faithfulness" (needs sources), "precision", "recall", "f_score" (need
        references). Default: every direction the given inputs allow. Only these are computed.
    aggregation ("mean" or "max"): how precision and recall combine over several references (default "mean", as the
        paper's scripts); f_score is the mean of the aggregated precision and recall.
    prompt (str or list of str): a paper prompt set by name ("summary": 70 prompts, "paraphrase": 34, "mt": 1), one
        prompt phrase, or a list of phrases. A prompted score is the average over the prompts. A lowercase single word
        is read as a set name; to use one as a phrase, put it in a list.
    prompt_side ("encoder" or "decoder"): "encoder" appends " <prompt>," to the conditioning text, "decoder" prepends
        "<prompt>, " to the scored text (the original code's strings). Default "encoder".
    batch_size (int): at most this many pairs per model batch (default: no limit but max_tokens).
    max_tokens (int): padded tokens per model batch (default 8192); lower it when memory is short.
    show_progress (bool): a progress bar on stderr (default False).

Returns:
    faithfulness, precision, recall, f_score: one score per prediction, in input order, for each direction computed.
    faithfulness_mean, ...: the mean over predictions of each direction computed.
    signature: the settings that produced the numbers, for reproducibility.

Examples:
    >>> import evaluate
    >>> bartscore = evaluate.load("./bartscore.py")  # "cnn": facebook/bart-large-cnn
    >>> results = bartscore.compute(predictions=["This is fun."], sources=["This is interesting."])
    >>> round(results["faithfulness"][0], 4)
    -2.5107
    >>> results = bartscore.compute(
    ...     predictions=["There is a cat on the mat.", "Look! a wonderful day."],
    ...     references=[["The cat is playing on the mat.", "A cat sits on a mat."], "Today is a wonderful day"],
    ...     directions=["recall", "f_score"], aggregation="max", prompt="paraphrase", prompt_side="decoder")
    >>> sorted(results)
    ['f_score', 'f_score_mean', 'recall', 'recall_mean', 'signature']
"""

_FEATURES = datasets.Features({
    "predictions": datasets.Value("string"),
    "references": datasets.List(datasets.Value("string")),
    "sources": datasets.Value("string"),
})


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BARTScore(evaluate.Metric):
    """The BARTScore metric. Init options (also through ``evaluate.load``): device, dtype, max_length, max_tokens,
    distributed, results_on (see ``BARTScorer``). Under torch.distributed, each rank computes on its own examples and
    every rank (or rank 0) gets the scores of all ranks' examples, rank 0's first."""

    def __init__(self, config_name=None, *, device=None, dtype="float32", max_length=1024,
                 max_tokens=DEFAULT_MAX_TOKENS, distributed=True, results_on="all", **kwargs):
        self.model_name = config_name or "default"
        # evaluate joins the config name into a cache path; a checkpoint path or Hub id must not steer it.
        cache_name = self.model_name if re.fullmatch(r"[\w.-]+", self.model_name) else re.sub(
            r"[^\w.-]+", "_", self.model_name).strip("_")[-64:]
        super().__init__(config_name=cache_name, **kwargs)
        # Under evaluate's own multi-process mode (num_process > 1) only process 0 scores, so it must not wait
        # for the other ranks; otherwise ranks gather their examples and share the scoring (see README).
        self._engine_options = {"device": device, "dtype": dtype, "max_length": max_length, "max_tokens": max_tokens,
                                "distributed": distributed and self.num_process == 1, "results_on": results_on}
        self._scorer = None
        self._inputs_given = None  # which of references/sources the pending batches carry

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=_FEATURES,
            codebase_urls=["https://github.com/neulab/BARTScore"],
            reference_urls=["https://arxiv.org/abs/2106.11520"],
        )

    def _download_and_prepare(self, dl_manager):
        self.scorer  # load the model once, at evaluate.load time, so that a missing checkpoint is reported there

    @property
    def scorer(self):
        """The engine, loaded on first use and kept for every later compute."""
        if self._scorer is None:
            checkpoint = DEFAULT_CHECKPOINT if self.model_name == "default" else self.model_name
            self._scorer = BARTScorer(checkpoint=checkpoint, **self._engine_options)
        return self._scorer

    def add_batch(self, *, predictions=None, references=None, sources=None, **kwargs):
        """Adds a batch of predictions with their references and/or sources (as in compute) for a later compute."""
        predictions = _text_list(predictions, "predictions")
        given = {"references": references is not None, "sources": sources is not None}
        if self._inputs_given is not None and given != self._inputs_given:
            raise ValueError(
                f"this batch gives {_input_names(given)} but earlier batches gave {_input_names(self._inputs_given)}; "
                f"give the same inputs in every add/add_batch call"
            )
        if references is None:
            references = [[] for _ in predictions]
        else:
            references = _reference_lists(references, "references", len(predictions))
        sources = [""] * len(predictions) if sources is None else _text_list(sources, "sources", len(predictions))
        super().add_batch(predictions=predictions, references=references, sources=sources, **kwargs)
        self._inputs_given = given

    def add(self, *, prediction=None, reference=None, source=None, **kwargs):
        """Adds one prediction with its reference(s) and/or source for a later compute."""
        if not isinstance(prediction, str):
            raise TypeError(f"prediction is {_describe(prediction)}; expected a string")
        self.add_batch(predictions=[prediction], references=None if reference is None else [reference],
                       sources=None if source is None else [source], **kwargs)

    def compute(self, *, predictions=None, references=None, sources=None, **kwargs):
        """Scores the given inputs, or those added with add/add_batch, and returns the results dict."""
        if predictions is None and (references is not None or sources is not None):
            raise TypeError("predictions must be a list of strings, got None")
        given = self._inputs_given
        if predictions is not None:
            given = {"references": references is not None, "sources": sources is not None}
        if given is None:
            raise ValueError("nothing to score: pass predictions= (with sources= and/or references=), "
                             "or call add/add_batch first")
        option_names = {"directions", "aggregation", "prompt", "prompt_side"}
        resolve_options(has_references=given["references"], has_sources=given["sources"],
                        **{k: v for k, v in kwargs.items() if k in option_names})
        try:
            if predictions is not None:
                self.add_batch(predictions=predictions, references=references, sources=sources)
            return super().compute(**kwargs)
        except BaseException:
            self._discard_pending()
            raise
        finally:
            self._inputs_given = None

    def _discard_pending(self):
        """Drops evaluate's half-written batch state after a failed compute, so that the next call starts clean."""
        for name in ("writer", "buf_writer", "data", "filelock", "cache_file_name", "selected_feature_format"):
            setattr(self, name, None)

    def _compute(self, predictions, references, sources, directions=None, aggregation="mean", prompt=None,
                 prompt_side="encoder", batch_size=None, max_tokens=None, show_progress=False):
        given = self._inputs_given
        group = self.scorer._process_group()
        if group:
            predictions, references, sources, given = _gather_examples(predictions, references, sources, given, group,
                                                                       self.scorer.device)
        return self.scorer.score_directions(
            predictions,
            references=references if given["references"] else None,
            sources=sources if given["sources"] else None,
            directions=directions,
            aggregation=aggregation,
            prompt=prompt,
            prompt_side=prompt_side,
            batch_size=batch_size,
            max_tokens=max_tokens,
            show_progress=show_progress,
        )


def _gather_examples(predictions, references, sources, given, group, device):
    """All ranks' examples, in rank order, on every rank; refused on every rank if the ranks gave different inputs."""
    parts = [None] * group.world
    with _current_device(device):
        torch.distributed.all_gather_object(parts, (predictions, references, sources, given))
    kinds = {tuple(sorted(part[3].items())) for part in parts}
    if len(kinds) > 1:
        raise ValueError(f"the ranks gave different inputs ({', '.join(_input_names(p[3]) for p in parts)}); "
                         f"every rank must give the same ones")
    return ([x for part in parts for x in part[0]], [x for part in parts for x in part[1]],
            [x for part in parts for x in part[2]], given)


def _input_names(given):
    names = [name for name, present in given.items() if present]
    return " and ".join(f"{name}=" for name in names) or "predictions only"


# ---------------------------------------------------------------------------------------------------------------------
# The command line: `bartscore score` and `bartscore compare`


class UsageError(Exception):
    """A mistake in the command line or its input files (exit status 2)."""


@dataclass
class Corpus:
    """Segments to score: one hypothesis list per system, aligned with the sources and/or references."""

    systems: dict  # system name -> hypotheses
    sources: list = None
    references: list = None  # one list of references per segment
    ids: list = None  # segment ids, when the input names them
    blank_references: int = 0  # blank reference lines or cells, which are not references and were skipped


def _read_text(path):
    """A UTF-8 file's text (a byte-order mark is dropped); unreadable or non-UTF-8 files are usage errors."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw[:error.start].count(b"\n") + 1
        raise UsageError(f"{path} is not UTF-8 text (byte 0x{raw[error.start]:02x} on line {line}); "
                         f"save it as UTF-8") from None


def _read_lines(path):
    """One segment per line ("\n" or "\r\n"); a final newline does not make an extra segment."""
    lines = _read_text(path).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def read_plain_corpus(sources=None, references=(), hypotheses=()):
    """Plain-text files, one segment per line: a sources file, reference files (one reference each per segment; a
    blank line is no reference, so segments may have different counts, but each needs one), and one file per system
    (named after the file)."""
    if not hypotheses:
        raise UsageError("give at least one --hypotheses file (or --input with system columns)")
    files = {}
    if sources:
        files[sources] = _read_lines(sources)
    for path in [*references, *hypotheses]:
        files[path] = _read_lines(path)
    first = next(iter(files))
    for path, lines in files.items():
        if len(lines) != len(files[first]):
            raise UsageError(f"{path} has {len(lines)} lines but {first} has {len(files[first])}; every file needs "
                             f"one line per segment")
    if not files[first]:
        raise UsageError(f"{', '.join(files)} {'are' if len(files) > 1 else 'is'} empty: no segments to score")
    systems = {}
    for path in hypotheses:
        name = os.path.basename(path)
        if name in systems:
            raise UsageError(f"two hypothesis files are named {name}; system names come from file names")
        systems[name] = files[path]
    refs, blank = None, 0
    if references:
        refs = []
        for number, lines in enumerate(zip(*(files[path] for path in references)), start=1):
            refs.append([line for line in lines if line.strip()])
            blank += len(lines) - len(refs[-1])
            if not refs[-1]:
                raise UsageError(f"segment {number} has no reference: line {number} is blank in "
                                 f"{', '.join(references)}")
    return Corpus(systems, files[sources] if sources else None, refs, blank_references=blank)


def read_table_corpus(path, source_column=None, reference_columns=None, system_columns=None, id_column="id"):
    """A .csv or .jsonl file (UTF-8) with one row per segment.

    Source: the given column (which must exist), else a ``source`` column if there is one. References: the given
    columns, else every column named ``reference``, ``references`` or ``reference_<n>`` (a JSONL cell may hold a list;
    empty or blank cells are no reference and are counted in ``blank_references``; every row needs one). Systems: the
    given columns, else every column but the source, the references and the id. A column has one role. Texts are
    scored exactly as written: an empty output is the empty text, while a JSONL row that lacks a system's or the
    source's value is an error."""
    text = _read_text(path)
    if path.lower().endswith((".jsonl", ".json")):
        columns, rows = _jsonl_rows(path, text)
    elif path.lower().endswith(".csv"):
        columns, rows = _csv_rows(path, text)
    else:
        raise UsageError(f"{path}: a table must be a .jsonl or .csv file")
    if not columns:
        raise UsageError(f"{path} is empty")
    for number, name in enumerate(columns, start=1):
        if not name.strip():
            raise UsageError(f"{path}: column {number} has no name")
    repeated = sorted({name for name in columns if columns.count(name) > 1})
    if repeated:
        raise UsageError(f"{path}: column names appear more than once: {', '.join(repeated)}")
    given = [*([source_column] if source_column else []), *(reference_columns or []), *(system_columns or [])]
    missing = [c for c in given if c not in columns]
    if missing:
        raise UsageError(f"{path} has no column {missing[0]!r}; its columns are {columns}")
    twice = sorted({c for c in given if given.count(c) > 1})
    if twice:
        raise UsageError(f"column {twice[0]!r} is given two roles (source, reference or system); give it one")
    source_column = source_column or "source"
    if reference_columns is None:
        reference_columns = [c for c in columns if re.fullmatch(r"references?|reference_\d+", c)
                             and c not in (system_columns or [])]
    if system_columns is None:
        system_columns = [c for c in columns if c not in (source_column, id_column, *reference_columns)]
    if source_column not in columns and not reference_columns:
        raise UsageError(f"{path} needs a {source_column!r} column and/or reference columns (reference, references "
                         f"or reference_1, reference_2, ...); its columns are {columns}")
    if not system_columns:
        raise UsageError(f"{path} has no system column: every column but {source_column!r}, {id_column!r} and the "
                         f"references holds one system's outputs")
    if not rows:
        raise UsageError(f"{path} has column names but no rows")

    def text_of(row, number, column):
        value = row.get(column)
        if not isinstance(value, str):
            raise UsageError(f"{path} row {number}, column {column!r}: expected text, got "
                             f"{'nothing' if value is None else _describe(value)}")
        return value

    references, blank = None, 0
    if reference_columns:
        references = []
        for number, row in enumerate(rows, start=1):
            refs = []
            for column in reference_columns:
                cell = row.get(column)
                for value in cell if isinstance(cell, list) else [cell]:
                    if value is not None and (not isinstance(value, str) or value.strip()):
                        refs.append(text_of({column: value}, number, column))
                    else:
                        blank += 1
            if not refs:
                raise UsageError(f"{path} row {number} has no reference (its columns {reference_columns} are empty)")
            references.append(refs)
    numbered = list(enumerate(rows, start=1))
    return Corpus(
        systems={c: [text_of(row, n, c) for n, row in numbered] for c in system_columns},
        sources=[text_of(row, n, source_column) for n, row in numbered] if source_column in columns else None,
        references=references,
        ids=[_id_text(row.get(id_column)) for row in rows] if id_column in columns else None,
        blank_references=blank,
    )


def _id_text(value):
    return "" if value is None else str(value)  # JSONL ids are often numbers


def _csv_rows(path, text):
    """Column names (stripped) and one dict per data row (lines with no text at all are skipped)."""
    import csv
    import io

    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        lines = [(reader.line_num, row) for row in reader if any(row)]
    except csv.Error as error:
        raise UsageError(f"{path} line {reader.line_num} is not valid CSV: {error}") from None
    if not lines:
        return [], []
    columns = [name.strip() for name in lines[0][1]]
    for line_number, row in lines[1:]:
        if len(row) != len(columns):
            raise UsageError(f"{path} line {line_number} has {len(row)} fields but the header has {len(columns)}")
    return columns, [dict(zip(columns, row)) for _, row in lines[1:]]


def _jsonl_rows(path, text):
    """Column names (in order of first appearance) and one dict per non-blank line."""
    import json

    columns, rows = {}, []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise UsageError(f"{path} line {number} is not valid JSON: {error.msg}") from None
        if not isinstance(row, dict):
            raise UsageError(f"{path} line {number} is not a JSON object")
        columns.update(dict.fromkeys(row))
        rows.append(row)
    return list(columns), rows


def score_corpus(scorer, corpus, **options):
    """Scores every system in one planned call (sources and references shared by all systems are encoded once) and
    returns ({system: {direction: per-segment scores}}, signature), or (None, None) on ranks that get no results."""
    names = list(corpus.systems)
    segments = len(corpus.systems[names[0]])
    result = scorer.score_directions(
        [hypothesis for name in names for hypothesis in corpus.systems[name]],
        references=corpus.references * len(names) if corpus.references is not None else None,
        sources=corpus.sources * len(names) if corpus.sources is not None else None,
        **options,
    )
    if result is None:
        return None, None
    directions = [d for d in DIRECTIONS if d in result]
    per_system = {
        name: {d: result[d][k * segments:(k + 1) * segments] for d in directions} for k, name in enumerate(names)
    }
    return per_system, result["signature"]


def _build_parser():
    import argparse

    parser = argparse.ArgumentParser(prog="bartscore", description="BARTScore from the command line.")
    commands = parser.add_subparsers(dest="command", required=True)
    score = commands.add_parser("score", help="per-segment scores of one or more systems, and their means")
    compare = commands.add_parser("compare", help="significance tests between two or more systems")
    for sub in (score, compare):
        inputs = sub.add_argument_group("inputs (plain-text files with one segment per line, or one --input table)")
        inputs.add_argument("-s", "--sources", metavar="FILE", help="source texts")
        inputs.add_argument("-r", "--references", metavar="FILE", nargs="+", default=[],
                            help="reference files (several give several references per segment)")
        inputs.add_argument("-t", "--hypotheses", metavar="FILE", nargs="+", default=[],
                            help="one file per system; the file name names the system")
        inputs.add_argument("-i", "--input", metavar="FILE", help="a .jsonl or .csv file with one row per segment")
        inputs.add_argument("--source-column", help="source column of --input (default: source, if there is one)")
        inputs.add_argument("--reference-columns", nargs="+", metavar="COLUMN",
                            help="reference columns of --input (default: reference, references, reference_<n>)")
        inputs.add_argument("--system-columns", nargs="+", metavar="COLUMN",
                            help="system columns of --input (default: every other column)")
        model = sub.add_argument_group("model and scoring")
        model.add_argument("-m", "--model", default="cnn",
                           help="vanilla, cnn (default), cnn-para, a Hub id or a checkpoint directory")
        model.add_argument("-d", "--directions", help="comma-separated: faithfulness,precision,recall,f_score "
                                                      "(default: all the inputs allow)")
        model.add_argument("--aggregation", choices=AGGREGATIONS, default="mean",
                           help="over several references (default: mean)")
        prompts = model.add_mutually_exclusive_group()
        prompts.add_argument("-p", "--prompt", help="a prompt set (summary, paraphrase, mt) or one prompt phrase")
        prompts.add_argument("--prompt-phrases", nargs="+", metavar="PHRASE",
                             help="your own prompt phrases (the score is their average), even one-word ones")
        model.add_argument("--prompt-side", choices=PROMPT_SIDES, default="encoder", help="(default: encoder)")
        model.add_argument("--device", help="cuda, cuda:1, cpu, ... (default: CUDA when available)")
        model.add_argument("--dtype", choices=tuple(DTYPES), default="float32", help="(default: float32)")
        model.add_argument("--batch-size", type=int, help="at most this many pairs per batch")
        model.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS,
                           help=f"padded tokens per batch (default {DEFAULT_MAX_TOKENS})")
        model.add_argument("--max-length", type=int, default=1024, help="truncate texts to this many tokens")
        model.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    score.add_argument("-f", "--format", choices=("tsv", "jsonl"), default="tsv", help="per-segment output format")
    score.add_argument("-o", "--output", default="-",
                       help="per-segment output file (default: stdout; the system summary then goes to stderr)")
    compare.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    compare.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    compare.add_argument("--seed", type=int, default=12345, help="bootstrap seed (default 12345)")
    compare.add_argument("--json", action="store_true", help="print the comparison as JSON")
    return parser


def _corpus_from_args(args):
    if args.input and (args.sources or args.references or args.hypotheses):
        raise UsageError("give either --input or plain-text files (--sources/--references/--hypotheses), not both")
    if args.input:
        return read_table_corpus(args.input, args.source_column, args.reference_columns, args.system_columns)
    if not args.sources and not args.references:
        raise UsageError("give --sources and/or --references (or --input)")
    return read_plain_corpus(args.sources, args.references, args.hypotheses)


def _summary_lines(per_system, signature):
    directions = list(next(iter(per_system.values())))
    width = max(6, *map(len, per_system))
    lines = ["system".ljust(width) + "".join(f"  {d:>12}" for d in directions)]
    for name, scores in per_system.items():
        lines.append(name.ljust(width) + "".join(f"  {np.mean(scores[d]):12.4f}" for d in directions))
    lines.append(f"signature: {signature}")
    return lines


def _write_segments(per_system, ids, output_format, handle):
    """One line per system and segment (numbered from 0, with the input's id when it has an id column)."""
    import json

    directions = list(next(iter(per_system.values())))
    id_column = ["id"] if ids is not None else []
    if output_format == "tsv":
        handle.write("\t".join(["system", "segment", *id_column, *directions]) + "\n")
    for name, scores in per_system.items():
        for segment in range(len(scores[directions[0]])):
            segment_id = {"id": ids[segment]} if ids is not None else {}
            if output_format == "tsv":
                values = [f"{scores[d][segment]:.6f}" for d in directions]
                handle.write("\t".join([name, str(segment), *segment_id.values(), *values]) + "\n")
            else:
                row = {"system": name, "segment": segment, **segment_id, **{d: scores[d][segment] for d in directions}}
                handle.write(json.dumps(row) + "\n")


def _finite_or_null(value):
    """JSON has no NaN or infinity (a single segment gives NaN p-values): they are written as null."""
    if isinstance(value, float) and not np.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite_or_null(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite_or_null(item) for item in value]
    return value


def _comparison_lines(comparisons, segments, signature):
    lines = []
    for direction, comparison in comparisons.items():
        lines.append(f"== {direction}: mean with {comparison['confidence']:.0%} bootstrap CI "
                     f"({comparison['resamples']} resamples of {segments} segments)")
        width = max(6, *(len(s["system"]) for s in comparison["systems"]))
        for system in sorted(comparison["systems"], key=lambda s: -s["mean"]):
            lines.append(f"  {system['system']:<{width}}  {system['mean']:9.4f}  "
                         f"[{system['ci_low']:.4f}, {system['ci_high']:.4f}]")
        lines.append(f"  {'A':<{width}}  {'B':<{width}}  {'A - B':>9}  {'bootstrap p':>11}  {'t-test p':>9}  winner "
                     f"(both p < {comparison['alpha']})")
        for pair in comparison["pairs"]:
            lines.append(f"  {pair['system_a']:<{width}}  {pair['system_b']:<{width}}  {pair['delta']:+9.4f}  "
                         f"{pair['bootstrap_p']:11.4f}  {pair['t_test_p']:9.4f}  {pair['winner'] or 'tie'}")
        wins = {s["system"]: sum(p["winner"] == s["system"] for p in comparison["pairs"])
                for s in comparison["systems"]}
        lines.append("  wins: " + ", ".join(f"{name} {count}" for name, count in
                                             sorted(wins.items(), key=lambda item: -item[1])))
    lines.append(f"signature: {signature}")
    return lines


def main(argv=None):
    """Runs the command line; returns the exit status: 0 success, 2 usage error, 1 runtime failure."""
    import sys

    args = _build_parser().parse_args(argv)  # argparse reports its own usage errors with status 2
    try:
        corpus, options = _checked_request(args)
    except (UsageError, ValueError, TypeError) as error:
        print(f"bartscore {args.command}: error: {error}", file=sys.stderr)
        return 2
    with _torchrun_process_group():
        return _score_and_report(args, corpus, options)


def _checked_request(args):
    """The corpus and scoring options of a command line, every mistake reported before any model is loaded."""
    corpus = _corpus_from_args(args)
    if args.command == "compare" and len(corpus.systems) < 2:
        raise UsageError(f"compare needs two or more systems; got {list(corpus.systems)}")
    options = dict(directions=args.directions.split(",") if args.directions else None, aggregation=args.aggregation,
                   prompt=args.prompt_phrases or args.prompt, prompt_side=args.prompt_side)
    resolve_options(has_references=corpus.references is not None, has_sources=corpus.sources is not None, **options)
    for flag, value in (("--batch-size", args.batch_size), ("--max-tokens", args.max_tokens),
                        ("--max-length", args.max_length)):
        if value is not None and value < 1:
            raise UsageError(f"{flag} must be a positive integer, got {value}")
    if args.device is not None:
        try:
            torch.device(args.device)
        except RuntimeError:
            raise UsageError(f"--device {args.device!r} is not a device; use cpu, cuda or cuda:<n>") from None
    if args.command == "compare" and (args.resamples < 1 or not 0 < args.alpha < 1 or args.seed < 0):
        raise UsageError("--resamples must be positive, --alpha between 0 and 1 and --seed at least 0")
    if args.command == "score" and args.output != "-":
        folder = os.path.dirname(os.path.abspath(args.output))
        if os.path.isdir(args.output) or not os.path.isdir(folder) or not os.access(folder, os.W_OK):
            raise UsageError(f"cannot write {args.output}: not a file in an existing, writable folder")
    return corpus, options


@contextlib.contextmanager
def _torchrun_process_group():
    """Under torchrun every rank reads the same files and scores its share; rank 0 writes the results."""
    launched = int(os.environ.get("WORLD_SIZE", "1")) > 1 and not torch.distributed.is_initialized()
    if launched:
        torch.distributed.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    try:
        yield
    finally:
        if launched:
            torch.distributed.barrier()  # no rank tears the group down while another still uses it
            torch.distributed.destroy_process_group()


def _score_and_report(args, corpus, options):
    import json
    import sys

    try:
        scorer = BARTScorer(device=args.device, max_length=args.max_length, checkpoint=args.model, dtype=args.dtype,
                            max_tokens=args.max_tokens, results_on="rank0")
    except ValueError as error:  # e.g. --max-length beyond the model's positions
        print(f"bartscore {args.command}: error: {error}", file=sys.stderr)
        return 2
    except (OSError, RuntimeError) as error:
        print(f"bartscore {args.command}: {error}", file=sys.stderr)
        return 1
    try:
        per_system, signature = score_corpus(scorer, corpus, batch_size=args.batch_size,
                                             show_progress=not args.quiet, **options)
    except (OSError, RuntimeError, ValueError) as error:
        print(f"bartscore {args.command}: scoring failed: {error}", file=sys.stderr)
        return 1
    if per_system is None:  # a rank other than 0 under torchrun: rank 0 reports
        return 0
    if corpus.blank_references:
        print(f"bartscore {args.command}: note: {corpus.blank_references} blank reference line(s) or cell(s) are not "
              f"references and were skipped", file=sys.stderr)
    segments = len(next(iter(corpus.systems.values())))

    if args.command == "score":
        if args.output == "-":
            _write_segments(per_system, corpus.ids, args.format, sys.stdout)
            summary = sys.stderr
        else:
            try:
                with open(args.output, "w", encoding="utf-8") as handle:
                    _write_segments(per_system, corpus.ids, args.format, handle)
            except OSError as error:
                print(f"bartscore score: cannot write {args.output}: {error.strerror or error}", file=sys.stderr)
                return 1
            summary = sys.stdout
        print("\n".join(_summary_lines(per_system, signature)), file=summary)
        return 0

    comparisons = compare_directions(per_system, resamples=args.resamples, alpha=args.alpha, seed=args.seed)
    if args.json:
        print(json.dumps(_finite_or_null({"signature": signature, "segments": segments, "directions": comparisons}),
                         indent=2))
    else:
        print("\n".join(_comparison_lines(comparisons, segments, signature)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
