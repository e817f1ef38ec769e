"""Every model family through the engine, against the plain one-example-at-a-time references of its token policy:
all four directions, both prompt sides, several references (mean and max), every batch size and token budget, and
truncation; then parity with the peers' own scoring code, and the errors a family's requirements give."""

import functools
import html
import random
import re
import statistics

import numpy as np
import pytest
import torch
from support import reference
from support.fast_subset import fast_cases
from support.metric import MODULE
from support.models import FAMILIES, build_gemma2_softcapped, load_tiny, tiny_checkpoint_for
from support.text import english_like_text

import bart_score
from bart_score.messages import Mention

TOLERANCE = 1e-5
CAUSAL = {"gpt2", "opt", "llama", "qwen2"}
LANGUAGES = {"mbart50": ("de_DE", "en_XX"), "mbart": ("de_DE", "en_XX")}
# What the fast subset keeps of a test over every family (tests/README.md): a seq2seq family and a causal one, and,
# for scores and truncation, the token policies that place special tokens differently (mBART's language codes, T5's
# closing EOS alone, Qwen2's missing BOS). The full run checks every family.
REPRESENTATIVES = ("bart", "llama")
POLICY_REPRESENTATIVES = ("bart", "mbart50", "t5", "llama", "qwen2")


@pytest.fixture(scope="session")
def family_checkpoint(tmp_path_factory):
    return lambda family: tiny_checkpoint_for(tmp_path_factory, family)


_SCORERS = {}


@pytest.fixture(scope="session")
def engine(family_checkpoint):
    """The engine on a family's tiny checkpoint, loaded once per family."""

    def get(family):
        if family not in _SCORERS:
            source_lang, target_lang = LANGUAGES.get(family, (None, None))
            _SCORERS[family] = bart_score.BARTScorer(
                checkpoint=family_checkpoint(family), device="cpu", source_lang=source_lang, target_lang=target_lang
            )
        return _SCORERS[family]

    return get


@functools.cache
def loaded(directory):
    return load_tiny(directory)


@functools.cache
def pair_reference(family, directory, max_length=1024):
    """score(condition, target, condition_is_source) under the family's token policy, one pair at a time; each pair's
    reference score is computed once per run, as several tests ask for the same pairs under other engine settings."""
    model, tokenizer = loaded(directory)
    source_lang, target_lang = LANGUAGES.get(family, (None, None))

    @functools.cache
    def score(condition, target, is_source):
        if family in CAUSAL:
            return reference.causal_score(model, tokenizer, condition, target, max_length=max_length)
        language = source_lang if is_source else target_lang
        return reference.seq2seq_score(model, tokenizer, condition, target, max_length, language, target_lang)

    return score


def prompted(score, condition, target, is_source, prompts, side):
    """The mean over prompts; encoder side: condition + " " + p + ","; decoder side: p + ", " + target."""
    if not prompts:
        return score(condition, target, is_source)
    values = []
    for p in prompts:
        if side == "encoder":
            values.append(score(condition + " " + p + ",", target, is_source))
        else:
            values.append(score(condition, p + ", " + target, is_source))
    return statistics.fmean(values)


def reference_directions(score, predictions, references, sources, aggregation="mean", prompts=(), side="encoder"):
    combine = max if aggregation == "max" else statistics.fmean
    out = {"faithfulness": [], "precision": [], "recall": [], "f_score": []}
    for source, prediction, refs in zip(sources, predictions, references):
        out["faithfulness"].append(prompted(score, source, prediction, True, prompts, side))
        p = combine([prompted(score, ref, prediction, False, prompts, side) for ref in refs])
        r = combine([prompted(score, prediction, ref, False, prompts, side) for ref in refs])
        out["precision"].append(p)
        out["recall"].append(r)
        out["f_score"].append((p + r) / 2)
    return out


def examples(seed, n=3):
    rng = random.Random(seed)
    sources = [english_like_text(rng, rng.randint(8, 30)) for _ in range(n)]
    predictions = [english_like_text(rng, rng.randint(2, 12)) for _ in range(n)]
    references = [[english_like_text(rng, rng.randint(2, 12)) for _ in range(rng.randint(1, 3))] for _ in range(n)]
    # Non-ASCII text, an empty prediction, a shared source and a repeated reference.
    sources[-1], predictions[-1] = "Die Stadt ist schön, und das Café ist groß.", ""
    sources[0] = sources[1]
    references[1].append(references[0][0])
    return sources, predictions, references


def assert_directions(result, expected):
    for direction, values in expected.items():
        assert np.max(np.abs(np.array(result[direction]) - values)) < TOLERANCE, direction


@pytest.mark.parametrize(
    "aggregation,family",
    fast_cases(
        [(aggregation, family) for aggregation in ("mean", "max") for family in FAMILIES],
        [("mean", family) for family in POLICY_REPRESENTATIVES] + [("max", family) for family in REPRESENTATIVES],
    ),
)
def test_every_direction_equals_the_reference(family, aggregation, engine, family_checkpoint):
    sources, predictions, references = examples(seed=1)
    result = engine(family).score_directions(predictions, references, sources, aggregation=aggregation)
    score = pair_reference(family, family_checkpoint(family))
    assert_directions(result, reference_directions(score, predictions, references, sources, aggregation))
    assert f"|policy:{engine(family).token_policy}|" in result["signature"]


@pytest.mark.parametrize("family", fast_cases(FAMILIES, ["llama"]))
@pytest.mark.parametrize("side", fast_cases(["encoder", "decoder"], ["decoder"]))
def test_both_prompt_sides_equal_the_reference(family, side, engine, family_checkpoint):
    sources, predictions, references = examples(seed=2, n=2)
    prompts = ["In summary", "To put it another way"]
    result = engine(family).score_directions(predictions, references, sources, prompt=prompts, prompt_side=side)
    score = pair_reference(family, family_checkpoint(family))
    assert_directions(result, reference_directions(score, predictions, references, sources, "mean", prompts, side))


@pytest.mark.parametrize("family", fast_cases(FAMILIES, REPRESENTATIVES))
@pytest.mark.parametrize("batch_size,max_tokens", [(1, None), (2, None), (None, 1), (None, 60), (3, 100000)])
def test_scores_do_not_depend_on_batching(family, batch_size, max_tokens, engine, family_checkpoint):
    rng = random.Random(3)
    conditions = [english_like_text(rng, rng.randint(1, 40)) for _ in range(5)]
    conditions += [conditions[0], conditions[0], "Das Café ist groß."]
    targets = [english_like_text(rng, rng.randint(1, 15)) for _ in range(len(conditions))]
    targets[-2] = targets[0]  # a repeated pair
    got = engine(family).score(conditions, targets, batch_size=batch_size, max_tokens=max_tokens)
    score = pair_reference(family, family_checkpoint(family))
    expected = [score(c, t, True) for c, t in zip(conditions, targets)]
    assert np.max(np.abs(np.array(got) - expected)) < TOLERANCE


@pytest.mark.parametrize("family", fast_cases(FAMILIES, POLICY_REPRESENTATIVES))
def test_truncation_equals_the_reference_and_is_reported(family, family_checkpoint):
    source_lang, target_lang = LANGUAGES.get(family, (None, None))
    short = bart_score.BARTScorer(
        checkpoint=family_checkpoint(family),
        device="cpu",
        max_length=12,
        source_lang=source_lang,
        target_lang=target_lang,
    )
    rng = random.Random(4)
    conditions = [english_like_text(rng, 40), "Short.", english_like_text(rng, 30)]
    targets = ["A short one.", english_like_text(rng, 30), english_like_text(rng, 25)]
    with pytest.warns(UserWarning, match=r"BARTScore truncated [1-9]\d* distinct source text\(s\) and [1-9]"):
        got = short.score(conditions, targets)
    score = pair_reference(family, family_checkpoint(family), max_length=12)
    expected = [score(c, t, True) for c, t in zip(conditions, targets)]
    assert np.max(np.abs(np.array(got) - expected)) < TOLERANCE


@pytest.mark.parametrize("family", FAMILIES)
def test_token_log_probs_read_back_as_the_scored_text(family, engine, family_checkpoint):
    scorer = engine(family)
    condition, target = "The cat sat on the mat.", "Das Café ist schön."
    (tokens,) = scorer.score_tokens([condition], [target])
    # The score is a float32 mean; the mean of its float32 terms taken in float64 may differ by its last bit.
    assert statistics.fmean(lp for _, lp in tokens) == pytest.approx(scorer.score([condition], [target])[0], rel=1e-6)
    text = "".join(piece for piece, _ in tokens)
    specials = [t for t in scorer.tokenizer.all_special_tokens if t]
    for special in sorted(specials, key=len, reverse=True):
        text = text.replace(special, "")
    assert text.strip() == target  # sentencepiece word starts read as spaces, byte-level pieces joined whole


# ---------------------------------------------------------------------------------------------------------------------
# Parity with the peers' own scoring code


@pytest.mark.slow
def test_t5score_parity(family_checkpoint, engine):
    for family in ("t5", "mt5"):
        model, tokenizer = loaded(family_checkpoint(family))
        sources, targets = zip(*[(s, p) for s, p in zip(*examples(seed=5, n=4)[:2])])
        expected = reference.t5score(model, tokenizer, list(sources), list(targets), batch_size=2)
        assert np.max(np.abs(np.array(engine(family).score(sources, targets)) - expected)) < TOLERANCE


@pytest.mark.slow
def test_gptscore_flan_parity(family_checkpoint, engine):
    model, tokenizer = loaded(family_checkpoint("flan-t5"))
    sources, targets = examples(seed=6, n=4)[:2]
    expected = reference.gptscore_flan(model, tokenizer, sources, targets, batch_size=3)
    assert np.max(np.abs(np.array(engine("flan-t5").score(sources, targets)) - expected)) < TOLERANCE


@pytest.mark.parametrize(
    "prompt_text,family",
    fast_cases(
        [(prompt_text, family) for prompt_text in (" In other words , ", "\nTL;DR:") for family in sorted(CAUSAL)],
        [("\nTL;DR:", "llama")],
    ),
)
def test_gptscore_parity_through_the_compatibility_option(family, prompt_text, family_checkpoint):
    model, tokenizer = loaded(family_checkpoint(family))
    sources, targets = examples(seed=7, n=4)[:2]
    targets[-1] = "A good game."  # GPTScore has nothing to score in an empty target
    scorer = bart_score.BARTScorer(
        checkpoint=family_checkpoint(family),
        device="cpu",
        compatibility="gptscore",
        template="{condition}" + prompt_text,
    )
    expected = reference.gptscore_causal(model, tokenizer, sources, targets, prompt_text)
    assert np.max(np.abs(np.array(scorer.score(sources, targets, batch_size=2)) - expected)) < TOLERANCE
    assert scorer.token_policy.startswith("gptscore:")


@pytest.mark.slow
def test_gptscore_truncation_through_the_compatibility_option(family_checkpoint):
    model, tokenizer = loaded(family_checkpoint("opt"))
    rng = random.Random(8)
    sources = [english_like_text(rng, 60), "A short source."]
    targets = [english_like_text(rng, 10), "A target."]
    scorer = bart_score.BARTScorer(
        checkpoint=family_checkpoint("opt"),
        device="cpu",
        compatibility="gptscore",
        template="{condition}\n",
        max_length=30,
    )
    with pytest.warns(UserWarning, match=r"truncated 1 distinct source"):
        got = scorer.score(sources, targets)
    expected = reference.gptscore_causal(model, tokenizer, sources, targets, "\n", max_length=30)
    assert np.max(np.abs(np.array(got) - expected)) < TOLERANCE


# ---------------------------------------------------------------------------------------------------------------------
# What each family needs, said clearly


@pytest.mark.slow
def test_mbart_needs_known_language_codes(family_checkpoint):
    directory = family_checkpoint("mbart50")
    with pytest.raises(ValueError, match=r"^source_lang was not given, and mBART needs .* knows: .*en_XX") as raised:
        bart_score.BARTScorer(checkpoint=directory, device="cpu")
    named = [part for part in raised.value.parts if isinstance(part, Mention)]
    assert named == [Mention("source_lang")]
    assert raised.value.option == "source_lang"
    with pytest.raises(ValueError, match=r"^target_lang was not given") as raised:
        bart_score.BARTScorer(checkpoint=directory, device="cpu", source_lang="de_DE")
    assert raised.value.option == "target_lang"  # the one not given
    with pytest.raises(
        ValueError, match=r"target_lang='english' is not one of this tokenizer's language codes"
    ) as raised:
        bart_score.BARTScorer(checkpoint=directory, device="cpu", source_lang="de_DE", target_lang="english")
    assert raised.value.parts[0] == Mention("target_lang", "english")


def test_condition_languages_are_checked(engine):
    with pytest.raises(ValueError, match=r"condition_lang is for families with language codes \(mBART\)"):
        engine("t5").score(["a"], ["b"], condition_lang="de_DE")
    with pytest.raises(ValueError, match=r"condition_lang\[1\]='xx_XX' is not one of this tokenizer's language"):
        engine("mbart50").score(["a", "b"], ["c", "d"], condition_lang=["de_DE", "xx_XX"])
    german = engine("mbart50").score(["Das ist gut."], ["That is good."], condition_lang="de_DE")
    assert german == engine("mbart50").score(["Das ist gut."], ["That is good."])  # source_lang is de_DE


def test_options_of_other_families_are_refused(family_checkpoint):
    with pytest.raises(ValueError, match=r"source_lang='de_DE' is for families with language codes"):
        bart_score.BARTScorer(checkpoint=family_checkpoint("t5"), device="cpu", source_lang="de_DE")
    with pytest.raises(ValueError, match=r"template='\{condition\}:' is for causal language models, and .* is a seq"):
        bart_score.BARTScorer(checkpoint=family_checkpoint("bart"), device="cpu", template="{condition}:")
    with pytest.raises(ValueError, match=r"compatibility='gptscore' is for causal language models"):
        bart_score.BARTScorer(checkpoint=family_checkpoint("flan-t5"), device="cpu", compatibility="gptscore")
    with pytest.raises(ValueError, match=r"compatibility must be None or one of \('gptscore',\)"):
        bart_score.BARTScorer(checkpoint=family_checkpoint("gpt2"), device="cpu", compatibility="t5score")


@pytest.mark.parametrize(
    "template",
    [
        "no placeholder",
        "{condition} and {condition}",
        "{condition} {other}",
        3,
        "Q: {{condition}}",  # a literal "{condition}": the condition would be dropped
        "{condition!r}",
        "{condition:>9}",
        "{condition} }",
    ],
)
def test_a_malformed_template_is_refused(template, family_checkpoint):
    with pytest.raises(ValueError, match=r"template"):
        bart_score.BARTScorer(checkpoint=family_checkpoint("gpt2"), device="cpu", template=template)


@pytest.mark.parametrize("compatibility", [None, "gptscore"])
def test_escaped_braces_in_a_template_are_literal_text(compatibility, family_checkpoint):
    scorer = bart_score.BARTScorer(
        checkpoint=family_checkpoint("opt"),
        device="cpu",
        template="{{condition}} {{x}}: {condition} }}",
        compatibility=compatibility,
    )
    prefix = scorer.tokenizer.decode(scorer._plan(["THE SOURCE"], ["A target."]).conditions[0])
    assert "{condition} {x}: THE SOURCE }" in prefix
    assert "{{" not in prefix and "}}" not in prefix


@pytest.mark.parametrize("family", fast_cases(sorted(CAUSAL), ["llama"]))
def test_causal_truncation_cuts_the_condition_and_keeps_the_templates_text(family, family_checkpoint):
    template = "Text: {condition}\nSummary:"
    scorer = bart_score.BARTScorer(checkpoint=family_checkpoint(family), device="cpu", template=template, max_length=24)
    rng = random.Random(9)
    conditions = [english_like_text(rng, 60), "Short.", english_like_text(rng, 40)]
    targets = ["A short one.", english_like_text(rng, 8), english_like_text(rng, 30)]
    with pytest.warns(UserWarning, match=r"BARTScore truncated [1-9]"):
        got = scorer.score(conditions, targets)
        plan = scorer._plan(conditions[:1], targets[:1])
    assert scorer.tokenizer.decode(plan.conditions[0]).endswith("\nSummary:")
    model, tokenizer = loaded(family_checkpoint(family))
    expected = [
        reference.causal_score(model, tokenizer, c, t, template=template, max_length=24)
        for c, t in zip(conditions, targets)
    ]
    assert np.max(np.abs(np.array(got) - expected)) < TOLERANCE


@pytest.mark.slow
def test_gptscore_text_longer_than_the_models_positions_is_refused_clearly(family_checkpoint):
    directory = family_checkpoint("gpt2")
    positions = loaded(directory)[0].config.n_positions
    scorer = bart_score.BARTScorer(
        checkpoint=directory, device="cpu", compatibility="gptscore", template="{condition} In other words , "
    )
    assert scorer.max_length == positions
    long_source = english_like_text(random.Random(3), 2 * positions)
    with pytest.raises(
        ValueError, match=r"max_length=\d+ leaves pair 1's text \d+ tokens, over the model's \d+ positions"
    ):
        scorer.score(["A short source.", long_source], ["A cat sat on the mat.", "A cat sat on the mat."])
    roomy = bart_score.BARTScorer(
        checkpoint=directory,
        device="cpu",
        compatibility="gptscore",
        template="{condition} In other words , ",
        max_length=positions - 24,
    )
    with pytest.warns(UserWarning, match=r"truncated 1 distinct source"):
        assert np.isfinite(roomy.score([long_source], ["A cat sat on the mat."])[0])


@pytest.mark.slow
def test_a_causal_lm_without_bos_needs_template_text(family_checkpoint):
    with pytest.raises(ValueError, match=r"no BOS token, so a template that adds no text of its own"):
        bart_score.BARTScorer(checkpoint=family_checkpoint("qwen2"), device="cpu", template="{condition}")
    # With a BOS to start from (GPT-2's), the bare template is fine.
    scorer = bart_score.BARTScorer(checkpoint=family_checkpoint("gpt2"), device="cpu", template="{condition}")
    assert np.isfinite(scorer.score([""], ["A target."])[0])


@pytest.mark.parametrize("family", ["bart", "llama"])
def test_each_distinct_condition_is_encoded_once(family, engine, monkeypatch):
    """A seq2seq source goes through the encoder once, a causal prefix through the model once, whatever its targets."""
    scorer = engine(family)
    encoded = []
    original = scorer._encode

    def counting(sequences):
        encoded.extend(map(tuple, sequences))
        return original(sequences)

    monkeypatch.setattr(scorer, "_encode", counting)
    scorer.score(["one source"] * 5 + ["another source"] * 3, [f"target {i}" for i in range(8)], batch_size=2)
    assert len(encoded) == 2 and len(set(encoded)) == 2


def test_seq2seq_cross_attention_is_projected_once_per_condition(engine, monkeypatch):
    scorer = engine("t5")
    calls = []
    first_layer = scorer.model.get_decoder().block[0].layer[1].EncDecAttention.k
    handle = first_layer.register_forward_hook(lambda module, args, output: calls.append(args[0].shape[0]))
    try:
        scorer.score(["one source"] * 6 + ["another"] * 2, [f"target {i}" for i in range(8)], batch_size=2)
    finally:
        handle.remove()
    assert calls == [2]  # one projection, of both conditions, however many decoder batches ran
    assert torch.is_grad_enabled()


# ---------------------------------------------------------------------------------------------------------------------
# Through the metric, the command line and the Space


@pytest.mark.slow
@pytest.mark.xdist_group("evaluate")
def test_the_metric_takes_any_family_and_its_options(family_checkpoint, engine):
    import evaluate

    metric = evaluate.load(MODULE, family_checkpoint("mbart50"), device="cpu", source_lang="de_DE", target_lang="en_XX")
    sources, predictions, references = examples(seed=9)
    result = metric.compute(predictions=predictions, references=references, sources=sources)
    expected = engine("mbart50").score_directions(predictions, references, sources)
    assert_directions(result, {d: expected[d] for d in bart_score.DIRECTIONS})
    assert result["signature"] == expected["signature"]
    assert "|policy:mbart:de_DE>en_XX|" in result["signature"]


@pytest.mark.slow
def test_the_command_line_takes_a_causal_lm_with_a_template(in_process, family_checkpoint, tmp_path):
    from support.cli import tsv_scores

    (tmp_path / "src.txt").write_text("The cat sat.\nA dog ran home.\n", encoding="utf-8")
    (tmp_path / "sys.txt").write_text("A cat.\nThe dog ran.\n", encoding="utf-8")
    template = "Text: {condition}\nSummary:"
    code, stdout, stderr = in_process(
        "score",
        "-m",
        family_checkpoint("gpt2"),
        "--template",
        template,
        "-s",
        str(tmp_path / "src.txt"),
        "-t",
        str(tmp_path / "sys.txt"),
        "-q",
    )
    assert code == 0, stderr
    _, rows = tsv_scores(stdout)
    scorer = bart_score.BARTScorer(checkpoint=family_checkpoint("gpt2"), device="cpu", template=template)
    expected = scorer.score(["The cat sat.", "A dog ran home."], ["A cat.", "The dog ran."])
    assert [float(row["faithfulness"]) for row in rows] == pytest.approx(expected, abs=1e-5)
    assert f"policy:{scorer.token_policy}" in stderr


@pytest.mark.slow
def test_the_command_line_names_what_mbart_needs(in_process, family_checkpoint, tmp_path):
    (tmp_path / "src.txt").write_text("Das ist gut.\n", encoding="utf-8")
    (tmp_path / "sys.txt").write_text("That is good.\n", encoding="utf-8")
    arguments = ["score", "-m", family_checkpoint("mbart50"), "-s", str(tmp_path / "src.txt"), "-t"]
    code, _, stderr = in_process(*arguments, str(tmp_path / "sys.txt"), "-q")
    assert code == 2 and "--source-lang was not given, and mBART needs" in stderr and "Traceback" not in stderr
    code, _stdout, stderr = in_process(
        *arguments, str(tmp_path / "sys.txt"), "-q", "--source-lang", "de_DE", "--target-lang", "en_XX"
    )
    assert code == 0, stderr


def test_the_space_shows_sentencepiece_tokens_as_words(engine):
    import space.candidates
    import space.heatmap

    comparison = space.candidates.compare_candidates(
        engine("t5"),
        source="The cat sat on the mat.",
        references=[],
        candidates=[("Candidate 1", "A cat sat on a mat."), ("Candidate 2", "Das Café ist groß.")],
        directions=["faithfulness"],
    )
    page = space.heatmap.token_heatmap(comparison)
    blocks = page.split('<div class="candidate"')[1:]
    for block, text in zip(blocks, ("A cat sat on a mat.", "Das Café ist groß.")):
        pieces = re.findall(r'<span class="token[^"]*"[^>]*>([^<]*)</span>', block)
        assert html.unescape("".join(pieces)) == text + "</s>"
        assert 'class="token special"' in block  # T5's </s>, set apart


@pytest.mark.slow
def test_a_model_whose_output_layer_the_engine_cannot_split_is_refused(family_checkpoint, tmp_path):
    """Gemma 2 soft-caps its logits after the output layer: the load-time self-check sees the difference."""
    folder = build_gemma2_softcapped(tmp_path, family_checkpoint("gpt2"))
    with pytest.raises(ValueError, match=r"\(gemma2\) gives different log-probabilities .* does not support"):
        bart_score.BARTScorer(checkpoint=folder, device="cpu")


def test_mbart_reads_each_condition_in_its_language_including_reference_point_samples(engine, monkeypatch):
    scorer = engine("mbart50")
    seen = []
    score = scorer.score

    def recording(conditions, targets, *args, condition_lang=None, **kwargs):
        seen.extend(zip(conditions, condition_lang))
        return score(conditions, targets, *args, condition_lang=condition_lang, **kwargs)

    monkeypatch.setattr(scorer, "score", recording)
    sources = ["Die Katze sitzt.", "Der Hund läuft.", "Das Haus ist alt."]
    predictions = ["The cat sits.", "The dog runs.", "The house is old."]
    references = [["A cat is sitting."], ["A dog is running."], ["An old house."]]
    with pytest.warns(UserWarning):  # a random model has no scale: the rescaled scores are NaN, with a warning
        scorer.score_directions(predictions, references, sources, rescale="corpus")
    assert {language for condition, language in seen if condition in sources} == {"de_DE"}
    assert {language for condition, language in seen if condition not in sources} == {"en_XX"}
    assert any(condition in sources for condition, _ in seen[len(sources) :])  # unrelated pairs read sources too
