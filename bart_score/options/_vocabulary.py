"""The words the options take: each vocabulary is a Literal type, which the options' fields are annotated with (a
flag offers its values as choices), and the same values as a tuple, which checks and messages list."""

from typing import Literal

from ._table import choices_of

DIRECTIONS = ("faithfulness", "precision", "recall", "f_score")
# The directions scored by a pass of the model (f_score is the mean of precision and recall): those of reference
# points and of chat instructions.
POINT_DIRECTIONS = ("faithfulness", "precision", "recall")
Aggregation = Literal["mean", "max"]
AGGREGATIONS = choices_of(Aggregation)
PromptSide = Literal["encoder", "decoder"]
PROMPT_SIDES = choices_of(PromptSide)
RescaleMode = Literal["baseline", "corpus"]
RESCALE_MODES = choices_of(RescaleMode)
LongSourceMode = Literal["windows"]
LONG_SOURCE_MODES = choices_of(LongSourceMode)
ResultsOn = Literal["all", "rank0"]
RESULTS_ON = choices_of(ResultsOn)
# The policies a causal LM can be scored under besides its default one.
Compatibility = Literal["gptscore"]
COMPATIBILITY = choices_of(Compatibility)
# What long_source="windows" scored per prediction (faithfulness_sentences, faithfulness_windows): counts, not scores.
COUNT_SUFFIXES = ("_sentences", "_windows")
# Per-prediction results besides the directions' scores: rescaled scores, and the counts.
RESULT_SUFFIXES = ("", "_rescaled", *COUNT_SUFFIXES)
