"""The paper's published numbers (Yuan, Neubig & Liu, NeurIPS 2021, Tables 3-6) that meta-eval tables set beside
their own, as Python data.

Only numbers whose source could be checked are here; each says where it comes from. A column is a
"<benchmark>/<aspect>" of meta_eval.benchmarks, or an average over several ("avg:<name>", see AVERAGES). For
BARTScore rows, `variant` is the model ("vanilla", "cnn", "cnn-para"), or "omega" for the paper's Ω (its best variant
per dataset, which it does not name); `prompt` is the prompt set of a "+Prompt" row (the paper does not say on which
side the prompt went). The direction of a BARTScore row is the paper's for that benchmark (``Benchmark.directions``).
`release_key` is the name of the metric's column in the release's score files, where known, so that a metrics CSV
column of that name is compared with it.

Not here, because no checkable source was at hand: every other cell of Tables 3-6 (Kendall's tau for WMT19 pairs other
than de-en; SummEval FAC, FLU and INFO; NeR18 COH, FLU and REL; the vanilla and +CNN+Para summarization rows; the
per-dataset data-to-text values), and which human aspect Table 6 correlates with."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Published:
    column: str
    metric: str
    value: float
    source: str
    variant: str | None = None
    prompt: str | None = None
    release_key: str | None = None
    note: str | None = None  # what the row is, where it is not a metric one could run


# Averages the paper reports, as the columns they average; None where the sources do not say which columns.
AVERAGES = {
    "avg:wmt19": tuple(f"wmt19-{p}/darr" for p in ("de-en", "fi-en", "gu-en", "kk-en", "lt-en", "ru-en", "zh-en")),
    "avg:summarization": (
        "realsumm/litepyramid_recall",
        "summeval/coherence",
        "summeval/consistency",
        "summeval/fluency",
        "summeval/relevance",
        "newsroom/coherence",
        "newsroom/fluency",
        "newsroom/informativeness",
        "newsroom/relevance",
    ),
    "avg:data-to-text": None,  # over BAGEL, SFRES and SFHOT; the aspect is not stated in the sources at hand
}
AVERAGE_TABLES = {"avg:wmt19": "3", "avg:summarization": "4", "avg:data-to-text": "6"}
UNPLACED_AVERAGES = {
    "avg:data-to-text": "the average over BAGEL, SFRES and SFHOT; the sources at hand do not say which human aspect"
}

_T3 = "Table 3 (WMT19 DARR, Kendall's tau)"
_T4 = "Table 4 (summarization, Spearman)"
_T5 = "Table 5 (factuality: accuracy on Rank19, Pearson on QAGS)"
_T6 = "Table 6 (data-to-text, Spearman)"
_DE_EN_GAIN = "; §4.3.1 reports the prompt's 0.033 gain on de-en, 0.205 -> 0.238"

PUBLISHED = (
    Published("avg:wmt19", "BARTScore+CNN+Para+Prompt", 0.337, _T3, "cnn-para", "mt"),
    Published("avg:wmt19", "COMET", 0.339, _T3),
    Published("avg:wmt19", "PRISM", 0.326, _T3),
    Published("wmt19-de-en/darr", "BARTScore+CNN+Para+Prompt", 0.238, _T3 + _DE_EN_GAIN, "cnn-para", "mt"),
    Published("wmt19-de-en/darr", "BARTScore+CNN+Para", 0.205, _T3 + _DE_EN_GAIN, "cnn-para"),
    Published("wmt19-de-en/darr", "COMET", 0.219, _T3),
    Published("wmt19-de-en/darr", "BLEURT", 0.174, _T3),
    Published("realsumm/litepyramid_recall", "BARTScore+CNN", 0.475, _T4, "cnn"),
    # The release's README prints rouge1_r at 0.497526 on REALSumm: the paper's ROUGE-1 there is recall.
    Published("realsumm/litepyramid_recall", "ROUGE-1", 0.498, _T4, release_key="rouge1_r"),
    Published("summeval/coherence", "BARTScore+CNN", 0.448, _T4, "cnn"),
    Published("summeval/coherence", "BERTScore", 0.284, _T4),
    Published("summeval/coherence", "PRISM", 0.249, _T4),
    Published("newsroom/informativeness", "BARTScore Ω+Prompt", 0.686, _T4, "omega"),
    Published("newsroom/informativeness", "PRISM", 0.561, _T4),
    Published("avg:summarization", "BARTScore Ω+Prompt", 0.518, _T4, "omega"),
    Published("avg:summarization", "BARTScore", 0.465, _T4, "vanilla"),
    Published("avg:summarization", "PRISM", 0.410, _T4),
    Published("rank19/fact", "BARTScore+CNN", 0.836, _T5, "cnn"),
    Published("rank19/fact", "Human", 0.839, _T5, note="the paper's figure for human annotators"),
    Published("rank19/fact", "PRISM", 0.780, _T5),
    Published("rank19/fact", "QAGS", 0.721, _T5),
    Published("qags-cnn/fact", "BARTScore+CNN", 0.735, _T5, "cnn"),
    Published("qags-cnn/fact", "QAGS", 0.545, _T5),
    Published("qags-cnn/fact", "PRISM", 0.479, _T5),
    Published("qags-xsum/fact", "BARTScore+CNN", 0.184, _T5, "cnn"),
    Published("qags-xsum/fact", "QAGS", 0.175, _T5),
    Published("avg:data-to-text", "BARTScore Ω+Prompt", 0.270, _T6, "omega"),
    Published("avg:data-to-text", "BARTScore+CNN", 0.228, _T6, "cnn"),
    Published("avg:data-to-text", "PRISM", 0.219, _T6),
)
