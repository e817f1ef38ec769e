"""BARTScore as a reward for reinforcement learning: ``BARTScoreReward``, a callable in the shape TRL's trainers take
as ``reward_funcs`` (GRPOTrainer, RLOOTrainer, ...):

    reward = BARTScoreReward("HuggingFaceTB/SmolLM2-135M-Instruct", source_field="document", chat=True)
    trainer = GRPOTrainer(model=..., reward_funcs=reward, train_dataset=...)

A trainer calls it with ``prompts`` and ``completions`` (strings, or conversations: lists of {"role", "content"}
messages) and the dataset's other columns as keywords, one entry per completion, and takes one float per completion.
The reward is the completion's BARTScore in one direction (faithfulness by default: how likely the model finds the
completion given its source), the source (or the references) taken from a dataset column or from the prompt itself,
rescaled with a baseline file when asked. Scores are negative, higher better, as the metric's.

What the metric does, the reward does: a completion over the model's length is cut at max_length with the engine's
TokenizationWarning, an empty one is scored on what the policy scores of it (the end of the text), and every
scoring option but the directions is the metric's (ScoringOptions: prompt, aggregation, batch_size, max_tokens,
long_source, ...). Everything that can be checked before a completion exists is checked when the reward is made:
the options, the model (loaded then, and shared with every reward and metric instance of this process that asks for
the same settings, bart_score.integrations._shared_engines) and a baseline file. Each process scores its own completions
(the engine's distributed=False): under torch.distributed, a trainer's ranks call it with different ones."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..baselines._lookup import baseline_for
from ..baselines.rescale import point_directions
from ..errors import InputError, InputTypeError
from ..inputs import describe, reference_lists, text_list
from ..messages import Mention
from ..options import DIRECTIONS, ENGINE_OPTION_NAMES, OPTION_NAMES, EngineOptions, ScoringOptions
from ..variants import DEFAULT_CHECKPOINT
from ._shared_engines import shared_engine

if TYPE_CHECKING:
    from ..scoring.engine import BARTScorer

# Where a reward takes the text a completion is judged against by default: the prompt that asked for it.
PROMPT = "prompt"
# Engine settings a reward sets itself: each rank scores its own completions, and every rank gets its scores.
_REWARD_ENGINE: dict[str, Any] = {"distributed": False, "results_on": "all"}


class BARTScoreReward:
    """A reward function for TRL's trainers (see the module's text).

    checkpoint: the scoring model, as the metric's configuration name (a named configuration, a Hub id, a folder or
        a GGUF file).
    direction: "faithfulness" (default: the completion given its source), "precision" (given a reference),
        "recall" (the reference given the completion) or "f_score" (their mean).
    source_field: where the text a completion is judged against comes from: "prompt" (default: the prompt itself; a
        conversation's user messages) or the name of a dataset column. For precision, recall and f_score the column
        holds the references: a string or a list of strings per row.
    rescale, baseline: rescale="baseline" rewards the rescaled score (0 for an unrelated text, 1 for a copy), with the
        baseline file `baseline` or the one at the default location for these settings. "corpus" is refused: its
        points come from each call's own texts, so its scale would change from one batch to the next.
    Any other keyword is an engine setting (EngineOptions: device, dtype, max_length, chat, instruction, ...) or a
    scoring option (ScoringOptions: prompt, aggregation, batch_size, max_tokens, ...), checked here."""

    def __init__(
        self,
        checkpoint: str = DEFAULT_CHECKPOINT,
        *,
        direction: str = "faithfulness",
        source_field: str = PROMPT,
        **options: Any,
    ) -> None:
        self._given = (checkpoint, direction, source_field, dict(options))  # what a pickled copy is made from
        if not isinstance(direction, str) or direction not in DIRECTIONS:
            raise InputError(Mention("direction"), f" must be one of {DIRECTIONS}, got {direction!r}")
        if not isinstance(source_field, str) or not source_field:
            raise InputTypeError(
                Mention("source_field"),
                f' must be "prompt" or the name of a dataset column, got {describe(source_field)}',
            )
        for name in sorted(set(options) & {"directions", *_REWARD_ENGINE}):
            reason = "a reward scores the completions of its own process"
            if name == "directions":
                reason = "a reward scores one direction, which direction= gives"
            raise InputError(Mention(name), f" is not a reward's option: {reason}")
        unknown = sorted(set(options) - OPTION_NAMES - ENGINE_OPTION_NAMES)
        if unknown:
            raise InputTypeError(
                f"BARTScoreReward got unexpected options {unknown}; it takes direction, source_field, the engine's "
                f"settings (EngineOptions) and the scoring options (ScoringOptions)",
                option="options",
            )
        engine = {name: options.pop(name) for name in sorted(ENGINE_OPTION_NAMES & set(options))}
        self.direction = direction
        self.source_field = source_field
        self.options = ScoringOptions(directions=(direction,), **options)
        if self.options.rescale == "corpus":
            raise InputError(
                Mention("rescale", "corpus"),
                " takes its reference points from each call's own texts: the reward's scale would change with them",
                remedy=["rescale with a baseline file: ", Mention("rescale", "baseline")],
            )
        self.options.directions_for(has_references=direction != "faithfulness", has_sources=direction == "faithfulness")
        self.engine_options = EngineOptions(checkpoint=checkpoint, **engine, **_REWARD_ENGINE)
        self._engine = shared_engine(self.engine_options)
        if self.options.rescale == "baseline":  # found and checked once, now, rather than at every call
            baseline = baseline_for(self.scorer, self.options, point_directions([direction]))
            self.options = self.options.replace(baseline=baseline)
        # TRL names a reward function by its __name__ in its logs.
        self.__name__ = f"bartscore_{direction}"

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled, a reward is its settings: unpickled (in a process that a trainer spawns, say), it is made again
        there, its model loaded (or shared) there."""
        return _made_again, self._given

    @property
    def scorer(self) -> BARTScorer:
        """The engine (BARTScorer) the reward scores with, shared with whatever else holds the same settings."""
        return self._engine.scorer

    def __call__(
        self,
        prompts: Sequence[Any] | None = None,
        completions: Sequence[Any] | None = None,
        **columns: Any,
    ) -> list[float]:
        """One reward per completion, in order (see the class's text). Keywords that are not the source column (the
        dataset's other columns, a trainer's completion_ids, trainer_state, ...) are left alone."""
        listed = _listed(completions, "completions")
        texts = text_list([_text(c, f"completions[{i}]", "assistant") for i, c in enumerate(listed)], "completions")
        against = self._against(prompts, columns, len(texts))
        given = {"sources": against} if self.direction == "faithfulness" else {"references": against}
        with self._engine.lock:
            result = self.scorer.score_directions(texts, options=self.options, **given)
        assert result is not None  # every rank gets its results (_REWARD_ENGINE)
        field = self.direction + ("_rescaled" if self.options.rescale else "")
        return [float(score) for score in result[field]]

    def _against(self, prompts: Sequence[Any] | None, columns: Mapping[str, Any], count: int) -> list[Any]:
        """The sources (faithfulness) or references (the other directions) of the completions, one per completion."""
        if self.source_field == PROMPT:
            if prompts is None:
                raise InputTypeError(
                    "this reward judges completions against their prompts, and got no ",
                    Mention("prompts"),
                    remedy=["pass them, or name the dataset column that holds the source: ", Mention("source_field")],
                )
            texts = [_text(p, f"prompts[{i}]", "user") for i, p in enumerate(_listed(prompts, "prompts"))]
            return text_list(texts, "prompts", count, counted_by="completions")
        if self.source_field not in columns:
            given = sorted(name for name in columns if isinstance(columns[name], (list, tuple)))
            raise InputError(
                Mention("source_field", self.source_field),
                f" names a column this call did not get; it got {given or 'none'}",
            )
        if self.direction == "faithfulness":
            return text_list(columns[self.source_field], self.source_field, count, counted_by="completions")
        return reference_lists(columns[self.source_field], self.source_field, count, counted_by="completions")


def _made_again(checkpoint: str, direction: str, source_field: str, options: dict[str, Any]) -> BARTScoreReward:
    """A pickled reward, made again from its settings (BARTScoreReward.__reduce__)."""
    return BARTScoreReward(checkpoint, direction=direction, source_field=source_field, **options)


def _listed(value: Any, name: str) -> list[Any]:
    """The entries of `name` (prompts or completions), a list or tuple with one entry per completion."""
    if not isinstance(value, (list, tuple)):
        raise InputTypeError(
            f"{name} must be a list with one entry per completion, got {describe(value)}", option=name, value=value
        )
    return list(value)


def _text(item: Any, name: str, role: str) -> Any:
    """A prompt's or completion's text: a string as it is; a conversation (a list of {"role", "content"} messages, as
    TRL gives conversational ones) as the text of its `role` messages, joined by blank lines (a content given as
    parts: their "text" parts). Anything else is returned as it is, for text_list to refuse by name."""
    if not isinstance(item, (list, tuple)):
        return item
    texts = []
    for index, message in enumerate(item):
        if not isinstance(message, Mapping) or "role" not in message:
            raise InputTypeError(
                f"{name}[{index}] is {describe(message)}; a conversation is a list of messages, each a dict with "
                f'"role" and "content"',
                option=name.partition("[")[0],
            )
        if message["role"] == role:
            texts.append(_content(message.get("content"), f"{name}[{index}]"))
    return "\n\n".join(texts)


def _content(content: Any, name: str) -> str:
    """A message's content as text: a string, or the "text" of its parts ({"type": "text", "text": ...})."""
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, (list, tuple)):
        parts = [part.get("text") for part in content if isinstance(part, Mapping) and part.get("type") == "text"]
        texts = [part for part in parts if isinstance(part, str)]
        if len(texts) == len(parts):
            return "".join(texts)
    raise InputTypeError(
        f'{name}["content"] is {describe(content)}; expected a string or a list of {{"type": "text", "text": ...}} '
        f"parts",
        option=name.partition("[")[0],
    )
