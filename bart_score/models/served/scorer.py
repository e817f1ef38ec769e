"""A causal LM on an inference server as a scorer of its own: ``ServedScorer``, planned as the local engine is
(bart_score.scoring._plan: distinct texts tokenized once under the same token policy, identical pairs scored once,
pairs grouped by condition), its planned pairs sent to the server (bart_score.models.served._server) in place of
batches through a model. ``BARTScorer(checkpoint="vllm+http://...")`` gives one (bart_score.scoring.engine)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ...options import EngineOptions
from ...scoring._plan import PairResults, Plan, PlannedScorer, resolved_options
from ...scoring._progress import progress_bar
from ..checkpoints import locate_checkpoint
from ..loading import served_family


class ServedScorer(PlannedScorer):
    """The scorer of a model on an inference server (see the module's text). ``served``: the model on the server,
    which the signature, the identity and a score cache's probe pair are asked of; the options are those of the
    local engine (bart_score.scoring._plan.PlannedScorer), device and dtype included, which leave the server's numbers
    as they are."""

    def __init__(self, options: EngineOptions) -> None:
        options, _ = resolved_options(options)  # a server's name is no configuration with weights of its own
        family, self.served = served_family(locate_checkpoint(options.checkpoint), options)
        # A served model is named and keyed by what its server reports.
        super().__init__(options, family, self.served.server.label, self.served.identity)

    @property
    def numbers_field(self) -> str:
        return self.served.signature_field

    def on_each_call(self, hook: Callable[[], object]) -> None:
        self.served.hooks.append(hook)

    def _score_share(
        self,
        plan: Plan,
        share: Mapping[int, Sequence[int]],
        conditions: Sequence[str],
        targets: Sequence[str],
        *,
        batch_size: int | None,
        max_tokens: int,
        show_progress: bool,
        keep_tokens: bool,
        progress: Callable[[int], object] | None = None,
    ) -> PairResults:
        """Each condition of `share` with its distinct targets, sent to the server, the bar (or `progress`) advancing
        as its answers come; batch_size and max_tokens, which size a local model's batches, leave the requests as they
        are. A pair is named in messages by its first place among the call's pairs."""
        first_place: dict[int, int] = {}
        for index, pair in enumerate(plan.pair_of_input):
            first_place.setdefault(pair, index)
        ordered = list(share)
        work = [
            (plan.conditions[c], [(first_place[p], plan.targets[plan.pairs[p][1]]) for p in share[c]]) for c in ordered
        ]
        with progress_bar(sum(map(len, share.values())), enabled=show_progress and progress is None) as bar:
            scored = self.served.score(work, progress or bar.update)
        results: PairResults = {}
        for condition, log_probs_of in zip(ordered, scored):
            for pair, log_probs in zip(share[condition], log_probs_of):
                results[pair] = (float(log_probs.sum()), log_probs if keep_tokens else None)
        return results
