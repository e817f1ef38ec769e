"""What the library's scoring functions call on a scorer, as Protocols that the scorers satisfy structurally: the
engine (bart_score.scoring.engine.BARTScorer) and the score cache's wrapper
(bart_score.scoring.score_cache.ResumableScorer).

ScorerIdentity: what planning a call's pairs and signing its results take (bart_score.scoring._directions'
plan_directions and direction_results): the scorer's label, language codes, chat instructions, signature fields, and the
device its model runs on (where long_source="windows" runs its retriever); meta-eval's grid plans with the identity its
options give before a model loads (bart_score.meta_eval._selection_grid). Scorer: a ScorerIdentity that scores the pairs
(bart_score.scoring._directions, bart_score.scoring._pair_groups, meta-eval's score_benchmarks).
IdentifiedScorer: a Scorer that also says which model it is, with which token policy, max_length and options (the
EngineOptions it was built with, passed whole), the settings a baseline file is made for (bart_score.baselines;
rescale="baseline")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import torch

    from ..options import EngineOptions


class ScorerIdentity(Protocol):
    """What planning a call's pairs and signing its results take of a scorer (see the module's text)."""

    @property
    def model_label(self) -> str:
        """The checkpoint as the signature names it."""
        ...

    @property
    def source_lang(self) -> str | None:
        """The language code sources are read in (mBART), else None; target_lang: that of the other texts."""
        ...

    @property
    def target_lang(self) -> str | None: ...

    @property
    def instructions(self) -> Mapping[str, str] | None:
        """Chat scoring: the instruction of each direction (faithfulness, precision, recall); else None."""
        ...

    @property
    def device(self) -> torch.device | None:
        """The device the model runs on, where long_source="windows" runs its retriever too; None: a scorer with no
        model of its own (the retriever runs on the CPU)."""
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
    """A Scorer that names its model and settings, as a baseline file is keyed on them (runtime_checkable, so that
    rescale="baseline" can refuse a scorer that cannot)."""

    @property
    def model_identity(self) -> str:
        """What tells the model apart from others, however it was named (see
        bart_score.models.loading.checkpoint_identity)."""
        ...

    @property
    def token_policy(self) -> str:
        """Which tokens are scored and what the decoder starts from, in a few characters."""
        ...

    @property
    def max_length(self) -> int: ...

    @property
    def options(self) -> EngineOptions:
        """The options the scorer was built with: what a baseline for it is made with (its token policy's template,
        compatibility and chat options)."""
        ...
