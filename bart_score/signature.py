"""A result's signature, as sacrebleu makes its own: a frozen Signature of what the scores depend on, formatted as the
string that results carry (metric output, command-line output, JSON files) and parsed back from it:

    ckpt:<checkpoint>|dirs:<directions>|agg:<aggregation>|nrefs:<references>|prompt:<prompt>[|rescale:<label>]
    [|long:<settings>]|<the scorer's own fields>

bart_score.directions builds one for each result. To change a field (the Space names a checkpoint on its server by
its menu name), parse the string, dataclasses.replace the field and format it again: never edit the string."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import InputError

# A checkpoint (a path, which may hold any character) ends at the first "|dirs:"; the other fields hold no "|".
_FIELDS = re.compile(
    r"ckpt:(?P<checkpoint>.+?)"
    r"\|dirs:(?P<directions>[a-z_]+(?:\+[a-z_]+)*)"
    r"\|agg:(?P<aggregation>[a-z]+)"
    r"\|nrefs:(?:-|(?P<fewest>[0-9]+)(?:-(?P<most>[0-9]+))?)"
    r"\|prompt:(?P<prompt>[^|]+)"
    r"(?:\|rescale:(?P<rescale>[^|]+))?"
    r"(?:\|long:(?P<long_source>[^|]+))?"
    r"(?P<scorer_fields>(?:\|[^|]*)*)",
    re.DOTALL,
)


@dataclass(frozen=True)
class Signature:
    """checkpoint: the scorer's model_label; directions: those scored, in order; aggregation: over references;
    reference_counts: the fewest and most references of a prediction (None without references); prompt: the options'
    prompt_label; rescale: the label of the reference points (None when not rescaled); long_source: the settings of
    long_source="windows" (None without it); scorer_fields: the scorer's signature_fields()."""

    checkpoint: str
    directions: tuple[str, ...]
    aggregation: str
    reference_counts: tuple[int, int] | None
    prompt: str
    rescale: str | None = None
    long_source: str | None = None
    scorer_fields: tuple[str, ...] = ()

    def format(self) -> str:
        """The signature as results carry it (see the module's text)."""
        if self.reference_counts is None:
            references = "-"
        else:
            fewest, most = self.reference_counts
            references = str(fewest) if fewest == most else f"{fewest}-{most}"
        return "|".join(
            [
                f"ckpt:{self.checkpoint}",
                f"dirs:{'+'.join(self.directions)}",
                f"agg:{self.aggregation}",
                f"nrefs:{references}",
                f"prompt:{self.prompt}",
                *([f"rescale:{self.rescale}"] if self.rescale is not None else []),
                *([f"long:{self.long_source}"] if self.long_source is not None else []),
                *self.scorer_fields,
            ]
        )

    @classmethod
    def parse(cls, text: str) -> Signature:
        """The Signature that format() gives as `text`; an InputError naming `text` when there is none."""
        fields = _FIELDS.fullmatch(text)
        signature = None
        if fields is not None:
            fewest, most = fields["fewest"], fields["most"]
            signature = cls(
                checkpoint=fields["checkpoint"],
                directions=tuple(fields["directions"].split("+")),
                aggregation=fields["aggregation"],
                reference_counts=None if fewest is None else (int(fewest), int(most or fewest)),
                prompt=fields["prompt"],
                rescale=fields["rescale"],
                long_source=fields["long_source"],
                scorer_fields=tuple(fields["scorer_fields"].split("|")[1:]),
            )
        # A string of the right shape that format() would not write ("nrefs:2-2", "nrefs:01") is not a signature.
        if signature is None or signature.format() != text:
            raise InputError(
                f"{text!r} is not a bartscore signature (ckpt:...|dirs:...|agg:...|nrefs:...|prompt:...[|rescale:...]"
                f"[|long:...]|<the scorer's fields>)"
            )
        return signature
