"""The signature: a Signature formats as the string results have always carried, byte for byte, with or without
references, rescaling, long sources and the scorer's fields; parse() gives back the Signature of every string
format() writes, and refuses any other value of any type with an error of the family, naming it; a field changes on
the object, never on the string."""

import dataclasses

import pytest

from bart_score.errors import InputError, InputTypeError
from bart_score.options import ScoringOptions
from bart_score.scoring._directions import signature
from bart_score.scoring.signature import Signature

ENGINE = ("policy:bart", "maxlen:1024", "dtype:float32", "transformers:4.57.1", "version:1.0.0")
LONG = "windows(k=3,window=ldfs,retriever=bm25,split=pysbd0.3.4+pieces2000-200)"

CASES = [
    (
        Signature("facebook/bart-large-cnn", ("faithfulness",), "mean", None, "none"),
        "ckpt:facebook/bart-large-cnn|dirs:faithfulness|agg:mean|nrefs:-|prompt:none",
    ),
    (
        Signature(
            "facebook/bart-large-cnn", ("precision", "recall", "f_score"), "max", (2, 2), "none", None, None, ENGINE
        ),
        "ckpt:facebook/bart-large-cnn|dirs:precision+recall+f_score|agg:max|nrefs:2|prompt:none|policy:bart|"
        "maxlen:1024|dtype:float32|transformers:4.57.1|version:1.0.0",
    ),
    (
        Signature(
            "/srv/models/bart",
            ("faithfulness", "precision", "recall", "f_score"),
            "mean",
            (1, 3),
            "summary(70)@encoder",
            "baseline-0123abcd",
            None,
            ENGINE,
        ),
        "ckpt:/srv/models/bart|dirs:faithfulness+precision+recall+f_score|agg:mean|nrefs:1-3|prompt:summary(70)@encoder|"
        "rescale:baseline-0123abcd|policy:bart|maxlen:1024|dtype:float32|transformers:4.57.1|version:1.0.0",
    ),
    (
        Signature("facebook/bart-large-cnn", ("faithfulness",), "mean", None, "none", None, LONG, ENGINE),
        "ckpt:facebook/bart-large-cnn|dirs:faithfulness|agg:mean|nrefs:-|prompt:none|"
        "long:windows(k=3,window=ldfs,retriever=bm25,split=pysbd0.3.4+pieces2000-200)|policy:bart|maxlen:1024|"
        "dtype:float32|transformers:4.57.1|version:1.0.0",
    ),
    (
        Signature(
            "hub:x+bart.pth",
            ("faithfulness", "recall"),
            "mean",
            (1, 1),
            "custom-321d2aeb(1)@decoder",
            "corpus-89abcdef",
            LONG,
            ("policy:mbart:en_XX>de_DE", "maxlen:512"),
        ),
        "ckpt:hub:x+bart.pth|dirs:faithfulness+recall|agg:mean|nrefs:1|prompt:custom-321d2aeb(1)@decoder|"
        "rescale:corpus-89abcdef|long:windows(k=3,window=ldfs,retriever=bm25,split=pysbd0.3.4+pieces2000-200)|"
        "policy:mbart:en_XX>de_DE|maxlen:512",
    ),
    (  # a folder whose name holds the separator
        Signature("/srv/a|b", ("recall",), "max", (1, 2), "none", "corpus-89abcdef", None, ("version:1.0.0",)),
        "ckpt:/srv/a|b|dirs:recall|agg:max|nrefs:1-2|prompt:none|rescale:corpus-89abcdef|version:1.0.0",
    ),
]


@pytest.mark.parametrize(("fields", "text"), CASES)
def test_format_writes_the_string_results_carry_and_parse_reads_it_back(fields, text):
    assert fields.format() == text
    assert Signature.parse(text) == fields


class FixedScorer:
    """The signature's part of a Scorer (bart_score.scoring.protocols): a checkpoint's label and the engine's fields."""

    model_label = "facebook/bart-large-cnn"

    def signature_fields(self):
        return list(ENGINE)


@pytest.mark.parametrize(
    ("options", "ref_counts", "rescale_label", "text"),
    [
        (
            ScoringOptions(directions=("faithfulness",)),
            (),
            None,
            "ckpt:facebook/bart-large-cnn|dirs:faithfulness|agg:mean|nrefs:-|prompt:none|policy:bart|maxlen:1024|"
            "dtype:float32|transformers:4.57.1|version:1.0.0",
        ),
        (
            ScoringOptions(directions=("precision", "recall", "f_score"), aggregation="max", prompt="summary"),
            (1, 3, 2),
            "baseline-0123abcd",
            "ckpt:facebook/bart-large-cnn|dirs:precision+recall+f_score|agg:max|nrefs:1-3|prompt:summary(70)@encoder|"
            "rescale:baseline-0123abcd|policy:bart|maxlen:1024|dtype:float32|transformers:4.57.1|version:1.0.0",
        ),
        (
            ScoringOptions(directions=("recall",), prompt=["in other words"], prompt_side="decoder"),
            (2, 2),
            "corpus-89abcdef",
            "ckpt:facebook/bart-large-cnn|dirs:recall|agg:mean|nrefs:2|prompt:custom-321d2aeb(1)@decoder|"
            "rescale:corpus-89abcdef|policy:bart|maxlen:1024|dtype:float32|transformers:4.57.1|version:1.0.0",
        ),
    ],
)
def test_a_result_is_signed_from_its_scorer_and_options(options, ref_counts, rescale_label, text):
    assert signature(FixedScorer(), options, ref_counts, rescale_label).format() == text


def test_a_result_of_the_engine_carries_a_signature_that_parses(scorer):
    result = scorer.score_directions(["A cat sat."], references=[["The cat sat.", "A cat."]], sources=["Cats sit."])
    parsed = Signature.parse(result["signature"])
    assert parsed.format() == result["signature"]
    assert (parsed.checkpoint, parsed.reference_counts) == (scorer.model_label, (2, 2))
    assert parsed.scorer_fields == tuple(scorer.signature_fields())


def test_a_field_changes_on_the_object():
    fields, text = CASES[2]
    renamed = dataclasses.replace(Signature.parse(text), checkpoint="tiny")
    assert renamed.format() == text.replace("ckpt:/srv/models/bart|", "ckpt:tiny|", 1)
    assert dataclasses.replace(renamed, checkpoint=fields.checkpoint) == fields


@pytest.mark.parametrize(
    "text",
    [
        "",
        "ckpt:facebook/bart-large-cnn",
        "dirs:faithfulness|agg:mean|nrefs:-|prompt:none",
        "ckpt:m|dirs:faithfulness|agg:mean|nrefs:-",  # no prompt
        "ckpt:m|dirs:faithfulness|agg:mean|prompt:none|nrefs:-",  # out of order
        "ckpt:m|dirs:|agg:mean|nrefs:-|prompt:none",
        "ckpt:m|dirs:faithfulness|agg:mean|nrefs:2-2|prompt:none",  # format() writes "nrefs:2"
        "ckpt:m|dirs:faithfulness|agg:mean|nrefs:01|prompt:none",
        "ckpt:m|dirs:faithfulness|agg:mean|nrefs:many|prompt:none",
    ],
)
def test_parse_refuses_what_format_does_not_write_naming_it(text):
    with pytest.raises(InputError, match="is not a bartscore signature") as refused:
        Signature.parse(text)
    assert repr(text) in str(refused.value)


VALID = CASES[1][1]


@pytest.mark.parametrize(
    "value", [None, 5, 2.5, b"ckpt:m|dirs:faithfulness|agg:mean|nrefs:-|prompt:none", ["ckpt:m"], {"ckpt": "m"}]
)
def test_parse_refuses_what_is_not_a_string_with_the_familys_type_error(value):
    with pytest.raises(InputTypeError, match=r"^a bartscore signature is a string, got "):
        Signature.parse(value)


@pytest.mark.parametrize(
    "text, message",
    [
        (VALID.replace("nrefs:2", "nrefs:" + "1" * 5000), "is not a bartscore signature"),  # int() would raise
        (VALID.replace("nrefs:2", "nrefs:1234567890"), "is not a bartscore signature"),  # 10 digits
        (VALID.replace("nrefs:2", "nrefs:2-1"), "is not a bartscore signature"),  # the fewest over the most
        (VALID.replace("nrefs:2", "nrefs:0"), "is not a bartscore signature"),
        (VALID.replace("nrefs:2", "nrefs:٣"), "is not a bartscore signature"),
        (VALID.replace("ckpt:facebook", "ckpt:face\x00book"), r"it holds '\\x00' at character 9"),
        (VALID.replace("ckpt:facebook", "ckpt:face\nbook"), r"it holds '\\n' at character 9"),
        (VALID.replace("ckpt:facebook", "ckpt:face\ud800book"), r"it holds '\\ud800' at character 9"),
        (VALID.replace("prompt:none", "prompt:no\u2028ne"), r"it holds '\\u2028' at character"),
        (
            VALID.replace("ckpt:facebook", "ckpt:" + "f" * 70_000),
            r"it has 70,[0-9]+ characters, over the limit of 65,536",
        ),
    ],
)
def test_parse_refuses_counts_and_characters_that_format_never_writes(text, message):
    with pytest.raises(InputError, match=message) as refused:
        Signature.parse(text)
    assert type(refused.value) is InputError
    assert len(str(refused.value)) < 500 and "\n" not in str(refused.value)


def test_parse_reads_the_largest_reference_counts_it_takes():
    text = VALID.replace("nrefs:2", "nrefs:1-999999999")
    assert Signature.parse(text).reference_counts == (1, 999_999_999)
