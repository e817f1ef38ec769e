"""What the library's scoring functions call on a scorer, as Protocols that the scorers satisfy structurally: the
engine (bart_score.scoring.engine.BARTScorer), a served model's scorer (bart_score.models.served.scorer.ServedScorer)
and the score cache's wrapper (bart_score.scoring.score_cache.ResumableScorer).

ScorerIdentity: what planning a call's pairs and signing its results take (bart_score.scoring._directions'
plan_directions and direction_results): the scorer's label, signature fields and options, the one holder of the
settings a plan reads (the language codes, chat scoring's instructions, the device where long_source="windows" runs
its retriever); meta-eval's grid plans with the identity its options give before a model loads
(bart_score.meta_eval._selection_grid). Scorer: a ScorerIdentity that scores the pairs (bart_score.scoring._directions,
bart_score.scoring._pair_groups, meta-eval's score_benchmarks). IdentifiedScorer: a Scorer that also says which model
it is and with which token policy, what a baseline file is made for with the options' max_length, template,
compatibility and chat options (bart_score.baselines; rescale="baseline")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..options import EngineOptions


class ScorerIdentity(Protocol):
    """What planning a call's pairs and signing its results take of a scorer (see the module's text)."""

    @property
    def model_label(self) -> str:
        """The checkpoint as the signature names it."""
        ...

    @property
    def options(self) -> EngineOptions:
        """The scorer's checked options, the only holder of its settings: as resolved where the scorer was built (the
        device's name, max_length, max_tokens: bart_score.scoring._plan.resolved_options), as given where an identity
        stands for a scorer not yet loaded. A plan reads source_lang and target_lang (mBART's language codes, else
        None), chat_settings (chat scoring's instruction of each direction, else None) and device (where
        long_source="windows" runs its retriever; None: the CPU)."""
        ...

    def signature_fields(self) -> list[str]:
        """The signature's fields that describe the scorer rather than one call's options."""
        ...


class Scorer(ScorerIdentity, Protocol):
    """What scoring a call's directions takes of a scorer: its identity, and the pairs' scores."""

    def score(
        self,
        conditions: Sequence[str],
        targets: Sequence[str],
        batch_size: int | None = None,
        /,
        *,
        max_tokens: int | None = None,
        show_progress: bool = False,
        condition_lang: str | Sequence[str] | None = None,
        instruction: str | Sequence[str] | None = None,
    ) -> list[float] | None:
        """Each target's mean token log-probability given its condition, or None on ranks that get no results;
        condition_lang and instruction: one for all pairs or one per pair (None: the scorer's own)."""
        ...


@runtime_checkable
class IdentifiedScorer(Scorer, Protocol):
    """A Scorer that names its model and token policy, as a baseline file is keyed on them (runtime_checkable, so that
    rescale="baseline" can refuse a scorer that cannot)."""

    @property
    def model_identity(self) -> str:
        """What tells the model apart from others, however it was named (see
        bart_score.models.loading.checkpoint_identity)."""
        ...

    @property
    def token_policy(self) -> str:
        """Which tokens are scored and what the decoder starts from, in a few characters: what the model's family
        makes of the tokenizer and the options (a chat template's digest), which no option holds."""
        ...
