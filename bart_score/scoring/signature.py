"""A result's signature, as sacrebleu makes its own: a frozen Signature of what the scores depend on, formatted as the
string that results carry (metric output, command-line output, JSON files) and parsed back from it:

    ckpt:<checkpoint>|dirs:<directions>|agg:<aggregation>|nrefs:<references>|prompt:<prompt>[|rescale:<label>]
    [|long:<settings>]|<the scorer's own fields>

bart_score.scoring._directions builds one for each result. To change a field (the Space names a checkpoint on its server
by its menu name), parse the string, dataclasses.replace the field and format it again: never edit the string."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import InputError, InputTypeError
from ..inputs import describe

# The longest text parse() reads: a checkpoint's path (at most 4,096 bytes on Linux; a Hub id, at most 96 characters)
# and the other fields (a few hundred characters) fit sixteen times over.
MAX_SIGNATURE_CHARS = 65_536
# Characters no signature holds: control characters (a NUL, a line break, a tab), the line and paragraph separators
# (which split a line as a newline does) and lone surrogates (not valid Unicode): format() writes one line of text.
_NOT_IN_A_SIGNATURE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
# How much of a refused text a message shows.
_SHOWN_CHARS = 200
# A checkpoint (a path, which may hold any character) ends at the first "|dirs:"; the other fields hold no "|".
_FIELDS = re.compile(
    r"ckpt:(?P<checkpoint>.+?)"
    r"\|dirs:(?P<directions>[a-z_]+(?:\+[a-z_]+)*)"
    r"\|agg:(?P<aggregation>[a-z]+)"
    r"\|nrefs:(?:-|(?P<fewest>[1-9][0-9]{0,8})(?:-(?P<most>[1-9][0-9]{0,8}))?)"
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
    def parse(cls, text: object) -> Signature:
        """The Signature that format() gives as `text`; an InputError naming `text` when there is none (an
        InputTypeError when it is not a string). Reference counts are of 1 to 9 digits, the fewest first."""
        if not isinstance(text, str):
            raise InputTypeError(f"a bartscore signature is a string, got {describe(text)}")
        if len(text) > MAX_SIGNATURE_CHARS:
            raise InputError(
                f"{_shown(text)} is not a bartscore signature: it has {len(text):,} characters, over the limit of "
                f"{MAX_SIGNATURE_CHARS:,}"
            )
        unwritten = _NOT_IN_A_SIGNATURE.search(text)
        if unwritten is not None:
            raise InputError(
                f"{_shown(text)} is not a bartscore signature: it holds {unwritten[0]!r} at character "
                f"{unwritten.start():,}, which no signature holds (a control character, a line separator or a lone "
                f"surrogate)"
            )
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
        # A string of the right shape that format() would not write ("nrefs:2-2", "nrefs:01") is not a signature,
        # nor are counts whose fewest is over their most ("nrefs:2-1").
        counts = signature.reference_counts if signature is not None else None
        if signature is None or signature.format() != text or (counts is not None and counts[0] > counts[1]):
            raise InputError(
                f"{_shown(text)} is not a bartscore signature (ckpt:...|dirs:...|agg:...|nrefs:...|prompt:..."
                f"[|rescale:...][|long:...]|<the scorer's fields>)"
            )
        return signature


def _shown(text: str) -> str:
    """A refused text as a message shows it: quoted, its control characters escaped, cut after _SHOWN_CHARS."""
    if len(text) <= _SHOWN_CHARS:
        return repr(text)
    return f"{text[:_SHOWN_CHARS]!r}... ({len(text):,} characters)"
