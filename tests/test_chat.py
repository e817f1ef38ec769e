"""Chat-format scoring: the engine against a plain loop built from apply_chat_template (one full forward pass per
pair), on tiny Llama and Qwen2 checkpoints in two chat formats, and on the real SmolLM2-135M-Instruct; every
direction, with and without a system turn, batch sizes and token budgets, truncation; the options' errors."""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import warnings

import numpy as np
import pytest
from support.cli import run_cli
from support.extras import require_extra
from support.lazy import LazyModule
from support.meta_eval_fixtures import write_fixture_files
from support.metric import MODULE
from support.models import CLOSING_TOKENS, build_tiny_chat, load_tiny
from support.reference import chat_reference_ids, chat_reference_score

import bart_score
import space.candidates
import space.settings
from bart_score.baselines import rescale
from bart_score.baselines.files import BASELINE_FOLDER_ENV, baseline_settings
from bart_score.cli import build_parser, main
from bart_score.cli.requests import engine_options, load_scorer
from bart_score.cli.wording import baseline_command_from
from bart_score.errors import BaselineNotFoundError, InputError, UnsupportedModelError
from bart_score.messages import Mention, Recipe
from bart_score.models.templates import DEFAULT_INSTRUCTIONS
from bart_score.scoring.directions import score_directions
from bart_score.scoring.score_cache import ResumableScorer

evaluate = LazyModule("evaluate")  # imported by the first test that uses it (support/lazy.py)
TOLERANCE = 1e-5
SYSTEM = "You judge summaries and paraphrases."

SOURCES = [
    "The city council approved a new budget on Tuesday that raises spending on schools by five percent.",
    "Heavy rain flooded the main road near the river, and the police closed it for most of the day.",
    "A local bakery won a national prize for its bread; the owner said the whole team had worked for it.",
]
PREDICTIONS = [
    "The council approved a budget that raises school spending.",
    "Rain flooded a road, which the police closed.",
    "A bakery won a prize for its bread.",
]
REFERENCES = [
    ["The council passed a budget with more money for schools.", "A new budget raises school spending."],
    ["The police closed a flooded road."],
    ["A bakery's bread won a national prize.", "The bakery won a prize.", "Bread from a bakery won."],
]
# The text chat scoring renders in the condition's place to find where the condition goes (written out here, so that
# a change to it is seen).
PLACEHOLDER = "\u2063bartscore-condition\u2063"
LONG_SOURCE = " ".join(SOURCES * 3)
LONG_REPLY = " ".join(PREDICTIONS * 3)

FORMATS = [("llama", "chatml"), ("qwen2", "chatml"), ("llama", "llama3"), ("qwen2", "llama3")]


@pytest.fixture(scope="module", params=FORMATS, ids=["-".join(f) for f in FORMATS])
def chat_model(request, tmp_path_factory):
    """(checkpoint, format, (model, tokenizer) loaded independently of the code under test)."""
    family, template = request.param
    checkpoint = build_tiny_chat(family, template, tmp_path_factory.mktemp(f"{family}-{template}"))
    return checkpoint, template, load_tiny(checkpoint)


@pytest.fixture(scope="module")
def chatml_llama(tmp_path_factory):
    return build_tiny_chat("llama", "chatml", tmp_path_factory.mktemp("chatml-llama"))


_PAIR_SCORES: dict = {}


def reference(chat_model, conditions, targets, instruction, system=None, max_length=1024):
    """The plain loop's scores, each pair's once per run: tests ask for the same pairs under other engine settings."""
    checkpoint, template, (model, tokenizer) = chat_model

    def pair_score(condition, target):
        key = (checkpoint, condition, target, instruction, system, max_length)
        if key not in _PAIR_SCORES:
            _PAIR_SCORES[key] = chat_reference_score(
                model, tokenizer, condition, target, instruction, CLOSING_TOKENS[template], system, max_length
            )
        return _PAIR_SCORES[key]

    return np.array([pair_score(c, t) for c, t in zip(conditions, targets)])


@functools.cache
def chat_scorer(checkpoint, **options):
    """The engine with chat=True on `checkpoint`, loaded once per run for each set of options."""
    return bart_score.BARTScorer(checkpoint=checkpoint, device="cpu", chat=True, **options)


def largest_difference(got, expected):
    return float(np.max(np.abs(np.asarray(got, dtype=np.float64) - expected)))


# ---------------------------------------------------------------------------------------------------------------------
# The policy against the plain loop


def test_the_closing_token_is_read_from_the_template(chat_model):
    checkpoint, template, (_, tokenizer) = chat_model
    scorer = chat_scorer(checkpoint)
    assert scorer.family.closing_id == tokenizer.convert_tokens_to_ids(CLOSING_TOKENS[template])
    scored = scorer.score_tokens([SOURCES[0]], [PREDICTIONS[0]])[0]
    assert scored[-1][0] == CLOSING_TOKENS[template]


@pytest.mark.parametrize("system", [None, SYSTEM], ids=["no-system", "system"])
@pytest.mark.parametrize("batch_size, max_tokens", [(None, 2048), (1, 64), (3, 256)])
def test_score_equals_the_plain_loop(chat_model, system, batch_size, max_tokens):
    checkpoint = chat_model[0]
    scorer = chat_scorer(checkpoint, system=system)
    conditions = [*SOURCES, SOURCES[0], PREDICTIONS[1]]
    targets = [*PREDICTIONS, REFERENCES[2][0], SOURCES[1]]
    got = scorer.score(conditions, targets, batch_size, max_tokens=max_tokens)
    expected = reference(chat_model, conditions, targets, DEFAULT_INSTRUCTIONS["faithfulness"], system)
    assert largest_difference(got, expected) < TOLERANCE


@pytest.mark.parametrize("system", [None, SYSTEM], ids=["no-system", "system"])
def test_every_direction_equals_the_plain_loop_under_its_instruction(chat_model, system):
    scorer = chat_scorer(chat_model[0], system=system)
    result = scorer.score_directions(PREDICTIONS, references=REFERENCES, sources=SOURCES, max_tokens=128)

    faithfulness = reference(chat_model, SOURCES, PREDICTIONS, DEFAULT_INSTRUCTIONS["faithfulness"], system)
    precision, recall = [], []
    for prediction, refs in zip(PREDICTIONS, REFERENCES):
        precision.append(
            reference(chat_model, refs, [prediction] * len(refs), DEFAULT_INSTRUCTIONS["precision"], system).mean()
        )
        recall.append(
            reference(chat_model, [prediction] * len(refs), refs, DEFAULT_INSTRUCTIONS["recall"], system).mean()
        )
    assert largest_difference(result["faithfulness"], faithfulness) < TOLERANCE
    assert largest_difference(result["precision"], np.array(precision)) < TOLERANCE
    assert largest_difference(result["recall"], np.array(recall)) < TOLERANCE
    assert largest_difference(result["f_score"], (np.array(precision) + np.array(recall)) / 2) < TOLERANCE
    assert f"policy:{scorer.token_policy}" in result["signature"].split("|")


def test_each_direction_takes_its_own_instruction(chatml_llama):
    instructions = {
        "faithfulness": "Summarize this news story: {condition}",
        "precision": "Say this in other words.\n{condition}\nYour version:",
    }
    scorer = bart_score.BARTScorer(checkpoint=chatml_llama, device="cpu", chat=True, instruction=instructions)
    model = (chatml_llama, "chatml", load_tiny(chatml_llama))
    refs = [refs[0] for refs in REFERENCES]
    result = scorer.score_directions(PREDICTIONS, references=refs, sources=SOURCES)
    expected = {
        "faithfulness": reference(model, SOURCES, PREDICTIONS, instructions["faithfulness"]),
        "precision": reference(model, refs, PREDICTIONS, instructions["precision"]),
        "recall": reference(model, PREDICTIONS, refs, DEFAULT_INSTRUCTIONS["recall"]),  # not given: the default
    }
    for direction, scores in expected.items():
        assert largest_difference(result[direction], scores) < TOLERANCE

    one = "Rewrite {{briefly}}: {condition}"  # braces doubled are literal
    scorer = bart_score.BARTScorer(checkpoint=chatml_llama, device="cpu", chat=True, instruction=one)
    assert set(scorer.instructions.values()) == {one}
    result = scorer.score_directions(PREDICTIONS, references=refs, sources=SOURCES)
    assert largest_difference(result["recall"], reference(model, PREDICTIONS, refs, one)) < TOLERANCE
    # score() takes an instruction per pair as well
    per_pair = [one, instructions["precision"], one]
    got = scorer.score(SOURCES, PREDICTIONS, instruction=per_pair)
    expected = [reference(model, [c], [t], i)[0] for c, t, i in zip(SOURCES, PREDICTIONS, per_pair)]
    assert largest_difference(got, np.array(expected)) < TOLERANCE


@pytest.mark.parametrize("max_length", [72, 96, 128])
def test_truncation_cuts_the_condition_inside_the_user_turn_and_keeps_the_reply(chat_model, max_length):
    scorer = bart_score.BARTScorer(checkpoint=chat_model[0], device="cpu", chat=True, max_length=max_length)
    conditions = [LONG_SOURCE, LONG_SOURCE, SOURCES[0], SOURCES[1]]
    targets = [PREDICTIONS[0], LONG_REPLY, LONG_REPLY, PREDICTIONS[1]]
    instruction = DEFAULT_INSTRUCTIONS["faithfulness"]
    with pytest.warns(UserWarning, match="truncated"):
        got = scorer.score(conditions, targets, max_tokens=96)
    expected = reference(chat_model, conditions, targets, instruction, max_length=max_length)
    assert largest_difference(got, expected) < TOLERANCE

    _, template, (_, tokenizer) = chat_model
    cut_conditions, cut_targets = set(), set()
    for condition, target in zip(conditions, targets):
        whole = chat_reference_ids(tokenizer, condition, target, instruction, CLOSING_TOKENS[template])
        kept = chat_reference_ids(tokenizer, condition, target, instruction, CLOSING_TOKENS[template], None, max_length)
        assert len(kept[0]) + len(kept[1]) <= max_length
        if len(kept[0]) < len(whole[0]):
            cut_conditions.add(condition)
        if len(kept[1]) < len(whole[1]):
            cut_targets.add(target)
    tokenized = scorer._plan(conditions, targets).tokenized
    assert (tokenized.truncated_conditions, tokenized.truncated_targets) == (len(cut_conditions), len(cut_targets))
    assert LONG_SOURCE in cut_conditions and LONG_REPLY in cut_targets


def test_a_prompt_too_long_for_max_length_is_refused(chatml_llama):
    with pytest.raises(InputError, match=r"max_length=24.*raise max_length or shorten the instruction"):
        bart_score.BARTScorer(checkpoint=chatml_llama, device="cpu", chat=True, max_length=24)


# ---------------------------------------------------------------------------------------------------------------------
# Identity: signature, baselines, score cache, reference points


def test_the_policy_names_chat_with_a_digest_of_template_instructions_and_system(chatml_llama, tmp_path):
    def policy(**options):
        return bart_score.BARTScorer(checkpoint=chatml_llama, device="cpu", **options).token_policy

    plain = policy()
    default = policy(chat=True)
    assert default.startswith("chat:") and default != plain
    assert policy(chat=True) == default
    assert policy(chat=True, system=SYSTEM) != default
    assert policy(chat=True, instruction="Summarize: {condition}") != default
    assert policy(chat=True, instruction=DEFAULT_INSTRUCTIONS) == default
    scorer = bart_score.BARTScorer(checkpoint=chatml_llama, device="cpu", chat=True)
    assert baseline_settings(scorer, "none")["token_policy"] == default


@pytest.mark.parametrize(
    "options",
    [
        {"chat": True},
        {"chat": True, "instruction": "Summarize: {condition}", "system": SYSTEM},
        {"template": "Text: {condition}\nSummary:"},
    ],
    ids=["chat", "chat-instruction-system", "template"],
)
def test_a_missing_baseline_names_the_command_for_this_token_policy(chatml_llama, options, tmp_path, monkeypatch):
    monkeypatch.setenv(BASELINE_FOLDER_ENV, str(tmp_path))
    scorer = bart_score.BARTScorer(checkpoint=chatml_llama, device="cpu", **options)
    with pytest.raises(BaselineNotFoundError) as raised:
        scorer.score_directions(PREDICTIONS, sources=SOURCES, rescale="baseline")
    (recipe,) = [part for part in raised.value.remedy if isinstance(part, Recipe)]
    assert recipe.settings["checkpoint"] == chatml_llama and recipe.settings.get("chat", False) == options.get(
        "chat", False
    )
    assert {name: recipe.settings[name] for name in options if name != "chat"} == {
        name: value for name, value in options.items() if name != "chat"
    }
    command = baseline_command_from(recipe).removeprefix("bartscore ")
    words = subprocess.run(["bash", "-c", f"printf '%s\\0' {command}"], capture_output=True, check=True, text=True)
    words = words.stdout.split("\0")[:-1]
    args = build_parser().parse_args([*words, "--device", "cpu"])
    again = load_scorer(engine_options(args), quiet=True)  # the command's scorer scores under the same policy
    assert again.token_policy == scorer.token_policy
    message = str(raised.value)
    chat = options.get("chat", False)
    assert ("in its chat format (this scorer uses the model's chat template" in message) == chat
    assert (f"its token policy {scorer.token_policy} covers" in message) == chat
    assert message.endswith("from the texts being scored: rescale='corpus'") and "--rescale" not in message
    assert raised.value.option == "rescale" and raised.value.remedy[-1] == Mention("rescale", "corpus")


@pytest.mark.slow
def test_the_command_lines_missing_chat_baseline_error_names_chat_and_the_remedy_once(chatml_llama, copier, tmp_path):
    """The folder holds a chat baseline of this model under another chat template or instruction, which only the
    loaded model tells apart (its token policy's digest): the library's message, once the model loads."""
    from bart_score.baselines.build import build_baseline
    from bart_score.baselines.files import baseline_id, default_baseline_path, write_baseline
    from bart_score.models.loading import checkpoint_identity

    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join([*SOURCES, *PREDICTIONS]) + "\n", encoding="utf-8")
    document = build_baseline(copier, texts=[*SOURCES, *PREDICTIONS], corpus_file=str(texts), pairs=10)
    settings = {"model": checkpoint_identity(chatml_llama), "token_policy": "chat:00000000"}
    document["settings"] = {**document["settings"], **settings}
    document["id"] = baseline_id(document)
    write_baseline(
        document, str(tmp_path / "baselines" / os.path.basename(default_baseline_path(document["settings"])))
    )
    (tmp_path / "sources.txt").write_text("The cat sat on the mat.\nA dog ran.\n")
    (tmp_path / "outputs.txt").write_text("A cat sat.\nA dog.\n")
    code, stdout, stderr = run_cli(
        "score", "-m", chatml_llama, "--chat", "-s", str(tmp_path / "sources.txt"), "-t", str(tmp_path / "outputs.txt"),
        "--device", "cpu", "-q", "--rescale", "baseline", env={BASELINE_FOLDER_ENV: str(tmp_path / "baselines")},
    )  # fmt: skip
    assert code == 2 and stdout == "" and "Traceback" not in stderr, stderr
    assert "in its chat format (this scorer uses the model's chat template; its token policy chat:" in stderr
    assert stderr.rstrip().endswith("take the reference points from the texts being scored: --rescale corpus")
    assert stderr.count("--rescale corpus") == 1


def test_the_score_cache_tells_instructions_apart(chatml_llama, tmp_path):
    scorer = bart_score.BARTScorer(checkpoint=chatml_llama, device="cpu", chat=True)
    cached = ResumableScorer(scorer, str(tmp_path / "cache.jsonl"))
    first, second = "Summarize: {condition}", "Paraphrase: {condition}"
    got = cached.score([SOURCES[0]] * 2, [PREDICTIONS[0]] * 2, instruction=[first, second])
    assert got[0] != got[1]
    assert cached.scored_pairs == 2
    again = cached.score([SOURCES[0]], [PREDICTIONS[0]], instruction=[second])
    assert again == [got[1]] and cached.cached_pairs == 1
    assert got == scorer.score([SOURCES[0]] * 2, [PREDICTIONS[0]] * 2, instruction=[first, second])
    # Through the cache, each direction's pairs are scored under its instruction too.
    result = score_directions(cached, PREDICTIONS, references=REFERENCES, sources=SOURCES)
    expected = scorer.score_directions(PREDICTIONS, references=REFERENCES, sources=SOURCES)
    for direction in ("faithfulness", "precision", "recall", "f_score"):
        assert largest_difference(result[direction], np.array(expected[direction])) < TOLERANCE
    assert result["signature"] == expected["signature"]


def test_reference_points_score_each_direction_under_its_instruction(chatml_llama):
    instructions = {
        "faithfulness": "Summarize: {condition}",
        "precision": "Paraphrase: {condition}",
        "recall": "Restate: {condition}",
    }
    scorer = bart_score.BARTScorer(checkpoint=chatml_llama, device="cpu", chat=True, instruction=instructions)
    model = (chatml_llama, "chatml", load_tiny(chatml_llama))
    refs = [refs[0] for refs in REFERENCES]
    result = scorer.score_directions(PREDICTIONS, references=refs, sources=SOURCES, rescale="corpus")
    points = result["reference_points"]
    # Every pair of these three rows fits in the samples: the copies are each text given itself, the unrelated
    # pairs every condition and target of different rows.
    roles = {"faithfulness": (SOURCES, PREDICTIONS), "precision": (refs, PREDICTIONS), "recall": (PREDICTIONS, refs)}
    for direction, (conditions, targets) in roles.items():
        copy = reference(model, targets, targets, instructions[direction]).mean()
        unrelated_pairs = [(c, t) for i, c in enumerate(conditions) for j, t in enumerate(targets) if i != j]
        unrelated = reference(model, *zip(*unrelated_pairs), instructions[direction]).mean()
        assert abs(points[direction]["copy"] - copy) < TOLERANCE
        assert abs(points[direction]["unrelated"] - unrelated) < TOLERANCE
    assert points["faithfulness"]["copy"] != points["precision"]["copy"]  # the same pairs, other instructions


def test_shared_samples_are_split_by_direction_only_when_asked():
    rows = {"prediction": [["a"], ["b"]], "source": [["s"], ["t"]], "reference": [["r"], ["q"]]}
    shared = rescale.sample_reference_pairs(rows, [0, 1], ("faithfulness", "precision"))
    split = rescale.sample_reference_pairs(rows, [0, 1], ("faithfulness", "precision"), by_direction=True)
    assert shared.points_of["faithfulness"][1] == shared.points_of["precision"][1]  # one copy sample
    assert split.points_of["faithfulness"][1] != split.points_of["precision"][1]
    for direction, keys in split.points_of.items():
        for key, shared_key in zip(keys, shared.points_of[direction]):
            assert split.samples[key] == shared.samples[shared_key]
    assert split.label == shared.label
    rows = {role: [[f"{role} {row}"] for row in range(6)] for role in ("prediction", "source", "reference")}
    for by_direction in (False, True):  # the pairs budget bounds what is scored, shared samples or not
        budget = rescale.sample_reference_pairs(
            rows, list(range(6)), ("faithfulness", "precision"), pairs=12, by_direction=by_direction
        )
        assert sum(map(len, budget.samples.values())) == 12


# ---------------------------------------------------------------------------------------------------------------------
# Bad input


@pytest.mark.parametrize(
    "options, error, message",
    [
        ({"instruction": "Summarize."}, InputError, "instruction must hold the field {condition} once"),
        ({"instruction": "{condition} and {condition}"}, InputError, "once and no other field"),
        ({"instruction": "{condition} for {audience}"}, InputError, "once and no other field"),
        ({"instruction": "Brace { here: {condition}"}, InputError, "stray brace"),
        ({"instruction": {"f_score": "{condition}"}}, InputError, "has an instruction for 'f_score'"),
        ({"instruction": {"recall": "Recall."}}, InputError, r"instruction\['recall'\] must hold"),
        ({"instruction": 3}, TypeError, "instruction must be a string"),
        ({"system": ""}, InputError, "system is blank"),
        ({"compatibility": "gptscore"}, InputError, "compatibility='gptscore' does not go with chat scoring"),
        ({"template": "{condition}\nSummary:"}, InputError, "template does not go with chat scoring"),
        # The text chat scoring renders in the condition's place is the option's doing, not the chat template's.
        ({"system": f"Be brief.{PLACEHOLDER}"}, InputError, r"system holds '\\u2063bartscore-condition\\u2063' at "),
        ({"instruction": f"{PLACEHOLDER}: {{condition}}"}, InputError, r"instruction holds '\\u2063bartscore-cond"),
        (
            {"instruction": {"recall": f"Recall {{condition}} {PLACEHOLDER}"}},
            InputError,
            r"instruction\['recall'\] holds '\\u2063bartscore-condition\\u2063' at character 19, the text chat",
        ),
    ],
)
def test_chat_options_that_cannot_work_are_refused_before_loading(options, error, message):
    with pytest.raises(error, match=message) as raised:
        bart_score.BARTScorer(checkpoint="/no/such/checkpoint", device="cpu", chat=True, **options)
    assert raised.value.option == next(iter(options))


@pytest.mark.parametrize("options", [{"instruction": "Summarize: {condition}"}, {"system": SYSTEM}])
def test_instruction_and_system_need_chat(options):
    with pytest.raises(InputError, match=r"is for chat scoring, which is not asked for"):
        bart_score.BARTScorer(checkpoint="/no/such/checkpoint", device="cpu", **options)


def test_chat_needs_a_causal_lm_with_a_chat_template(tiny_checkpoint, tmp_path):
    with pytest.raises(InputError, match=r"chat scoring is for causal language models.*'bart'"):
        bart_score.BARTScorer(checkpoint=tiny_checkpoint, device="cpu", chat=True)
    from support.models import build_tiny

    plain = build_tiny("llama", tmp_path / "plain")
    with pytest.raises(UnsupportedModelError, match=r"needs a chat template, and .* has none"):
        bart_score.BARTScorer(checkpoint=plain, device="cpu", chat=True)
    no_closing = build_tiny_chat("llama", "plain-text-turns", tmp_path / "plain-turns")
    with pytest.raises(UnsupportedModelError, match="does not begin with a special token"):
        bart_score.BARTScorer(checkpoint=no_closing, device="cpu", chat=True)


def test_score_instructions_are_checked(chatml_llama, tiny_checkpoint):
    scorer = bart_score.BARTScorer(checkpoint=chatml_llama, device="cpu", chat=True)
    with pytest.raises(ValueError, match="instruction has 1 entries but srcs has 2"):
        scorer.score(SOURCES[:2], PREDICTIONS[:2], instruction=["{condition}"])
    with pytest.raises(InputError, match=r"instruction\[1\] must hold the field"):
        scorer.score(SOURCES[:2], PREDICTIONS[:2], instruction=["{condition}", "none"])
    with pytest.raises(InputError, match=r"instruction\[1\] holds '\\u2063bartscore-condition\\u2063' at character 0"):
        scorer.score(SOURCES[:2], PREDICTIONS[:2], instruction=["{condition}", PLACEHOLDER + "{condition}"])
    with pytest.raises(InputError, match=r"^instruction holds '\\u2063bartscore-condition\\u2063' at character 11,"):
        scorer.score(SOURCES[:1], PREDICTIONS[:1], instruction="{condition}" + PLACEHOLDER)
    plain = bart_score.BARTScorer(checkpoint=tiny_checkpoint, device="cpu")
    with pytest.raises(InputError, match="instruction is for chat scoring; load the scorer with chat=True"):
        plain.score(SOURCES[:1], PREDICTIONS[:1], instruction="{condition}")


def test_meta_eval_with_chat_names_its_row_and_writes_beside_the_plain_run(chatml_llama, tmp_path, monkeypatch):
    require_extra("meta-eval")  # the release's summarization texts are Moses-detokenized
    (tmp_path / "data").mkdir()
    paths = write_fixture_files(tmp_path / "data")
    monkeypatch.chdir(tmp_path)
    base = ["meta-eval", "-b", "summeval", "-m", chatml_llama, "--data", f"summeval={paths['summeval']}", "-q"]
    assert main([*base, "--chat"]) == 0 and main(base) == 0
    name = os.path.basename(chatml_llama)
    for suffix, policy in ((".chat", "|policy:chat:"), ("", "|policy:causal|")):
        with open(tmp_path / "meta-eval" / f"summeval.{name}{suffix}.json", encoding="utf-8") as handle:
            rows = {row["name"]: row for row in json.load(handle)["rows"]}
        row = rows[f"BARTScore {name}{suffix.replace('.', ' ')}"]  # "BARTScore <folder> chat" for the chat run
        assert policy in row["signatures"]["summeval"]


# ---------------------------------------------------------------------------------------------------------------------
# The metric and the Space


@pytest.mark.xdist_group("evaluate")
def test_the_metric_takes_the_chat_options(chatml_llama):
    instruction = "Summarize: {condition}"
    metric = evaluate.load(MODULE, chatml_llama, device="cpu", chat=True, instruction=instruction, system=SYSTEM)
    got = metric.compute(predictions=PREDICTIONS, sources=SOURCES)["faithfulness"]
    model = (chatml_llama, "chatml", load_tiny(chatml_llama))
    assert largest_difference(got, reference(model, SOURCES, PREDICTIONS, instruction, SYSTEM)) < TOLERANCE


def test_the_space_offers_chat_models_from_the_operators_list(chatml_llama):
    entry = f"assistant={chatml_llama};chat=true;instruction=Summarize: {{condition}};system={SYSTEM}"
    settings = space.settings.settings_from_env({"BARTSCORE_APP_MODELS": entry})
    assert settings.models["assistant"] == {
        "checkpoint": chatml_llama,
        "chat": True,
        "instruction": "Summarize: {condition}",
        "system": SYSTEM,
    }
    scorer = space.settings.menu_scorer(settings, "assistant")
    assert scorer.token_policy.startswith("chat:") and scorer.instructions["recall"] == "Summarize: {condition}"
    for bad, message in [
        ("x=/m;chat=yes", "chat must be true or false, got 'yes'"),
        ("x=/m;instruction=Summarize: {condition}", "instruction is for chat scoring, which is not asked for"),
        ("x=/m;chat=true;instruction=Summarize.", "instruction must hold the field {condition} once"),
        ("x=/m;chat=true;compatibility=gptscore", "does not go with chat scoring"),
    ]:
        with pytest.raises(ValueError, match=f"BARTSCORE_APP_MODELS entry .*{message}"):
            space.settings.settings_from_env({"BARTSCORE_APP_MODELS": bad})


@pytest.mark.filterwarnings("ignore:BARTScore. .* cannot be rescaled")  # random weights tell no copy apart
@pytest.mark.parametrize("chat", [False, True])
def test_the_spaces_compare_limit_counts_what_is_scored(chatml_llama, monkeypatch, chat):
    scorer = bart_score.BARTScorer(checkpoint=chatml_llama, device="cpu", chat=chat)
    work = {
        "source": SOURCES[0],
        "references": REFERENCES[0],
        "candidates": [("A", PREDICTIONS[0]), ("B", PREDICTIONS[1]), ("C", PREDICTIONS[2])],
        "directions": list(bart_score.DIRECTIONS),
        "prompts": (None,),
    }
    scored, score = [], scorer.score
    monkeypatch.setattr(
        scorer, "score", lambda c, t, *args, **kwargs: scored.append(len(c)) or score(c, t, *args, **kwargs)
    )
    comparison = space.candidates.compare_candidates(scorer, **{k: v for k, v in work.items() if k != "prompts"})
    needed = sum(scored) + len(comparison.tokens)  # the directions and reference points, and the heatmap's pairs
    with pytest.raises(ValueError, match=f"needs {needed:,} scored pairs"):
        space.candidates.check_compare_work(**work, max_pairs=needed - 1, by_direction=chat)
    space.candidates.check_compare_work(**work, max_pairs=needed, by_direction=chat)
    if chat:
        expected = scorer.score_tokens([SOURCES[0]] * 3, PREDICTIONS, instruction=DEFAULT_INSTRUCTIONS["faithfulness"])
        assert comparison.tokens == expected


# ---------------------------------------------------------------------------------------------------------------------
# The real model: SmolLM2-135M-Instruct (ChatML, a default system turn)

# Each source with a faithful summary and one that changes an entity, a number or a negation.
REAL_PAIRS = [
    (
        "The city council of Springfield voted on Tuesday to approve a new budget that raises spending on public "
        "schools by five percent and cuts the parks budget by two percent.",
        "Springfield's council approved a budget that raises school spending by five percent.",
        "Springfield's council rejected a budget that raises school spending by five percent.",
    ),
    (
        "Heavy rain flooded the main road near the river on Sunday, and the police closed it for most of the day "
        "while crews pumped out the water.",
        "Police closed a road near the river after heavy rain flooded it on Sunday.",
        "Police closed a road near the river after a heavy snowfall blocked it on Sunday.",
    ),
    (
        "Maria Lopez, a baker from Denver, won the national bread prize on Friday; she thanked the six people who "
        "work in her shop.",
        "Denver baker Maria Lopez won the national bread prize and thanked her six staff.",
        "Denver baker Maria Lopez won the national bread prize and thanked her sixty staff.",
    ),
    (
        "The museum will open its new wing in March. The wing holds two hundred paintings donated by a local "
        "family, and entry will be free for the first month.",
        "The museum's new wing opens in March, with free entry for the first month.",
        "The museum's new wing opens in March, with paid entry for the first month.",
    ),
    (
        "Scientists at the university found that the lake's water level fell by three metres over the last ten "
        "years, mainly because of less rain and more farming nearby.",
        "The lake's level fell three metres in ten years, scientists found.",
        "The lake's level rose three metres in ten years, scientists found.",
    ),
    (
        "The football club signed a new coach, Tom Baker, on a two-year contract after the old coach left in "
        "May. Baker previously coached a team in Spain.",
        "The club signed Tom Baker as its new coach on a two-year contract.",
        "The club signed Tom Baker as its new coach on a ten-year contract.",
    ),
]


@pytest.fixture(scope="module")
def smollm2(smollm2_folder):
    """(folder, chat scorer) of the real SmolLM2's plain folder (conftest.py)."""
    return smollm2_folder, bart_score.BARTScorer(checkpoint=smollm2_folder, device="cpu", chat=True)


def test_smollm2_chat_scores_equal_the_plain_loop(smollm2):
    folder, scorer = smollm2
    model, tokenizer = load_tiny(folder)
    sources = [source for source, _, _ in REAL_PAIRS]
    summaries = [faithful for _, faithful, _ in REAL_PAIRS]
    instruction = DEFAULT_INSTRUCTIONS["faithfulness"]
    expected = np.array(
        [chat_reference_score(model, tokenizer, s, t, instruction, "<|im_end|>") for s, t in zip(sources, summaries)]
    )
    assert largest_difference(scorer.score(sources, summaries, max_tokens=256), expected) < TOLERANCE
    assert largest_difference(scorer.score(sources, summaries, 2), expected) < TOLERANCE
    short = bart_score.BARTScorer(checkpoint=folder, device="cpu", chat=True, max_length=64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the truncation warning
        got = short.score(sources, summaries)
    expected = [
        chat_reference_score(model, tokenizer, s, t, instruction, "<|im_end|>", max_length=64)
        for s, t in zip(sources, summaries)
    ]
    assert largest_difference(got, np.array(expected)) < TOLERANCE


def test_smollm2_in_chat_scores_a_faithful_summary_above_an_unfaithful_one(smollm2):
    _, scorer = smollm2
    sources = [source for source, _, _ in REAL_PAIRS]
    faithful = scorer.score(sources, [summary for _, summary, _ in REAL_PAIRS])
    unfaithful = scorer.score(sources, [summary for _, _, summary in REAL_PAIRS])
    above = [f > u for f, u in zip(faithful, unfaithful)]
    assert all(above), list(zip(faithful, unfaithful))


# ---------------------------------------------------------------------------------------------------------------------
# Chat templates under a time and memory budget. Each hostile template is loaded in a process of its own, limited to
# 3 GB and 60 s for each template, so that a regression fails instead of hanging or taking the machine's memory.

CHATML = build_tiny_chat.__globals__["TEMPLATES"]["chatml"]
THREE_LOOPS = "".join(f"{{% for {v} in range(10000) %}}" for v in "ijk") + "{% endfor %}" * 3
HOSTILE_TEMPLATES = {
    "endless": (
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        r"it asks range\(\) for 100,000 numbers, over the limit of 10,000",
    ),
    "three loops": (THREE_LOOPS, r"it ran past its time limit of 5 s"),
    "huge string": (
        "{{ 'x' * 4000000000 }}",
        r"it repeats a string of 1 characters 4,000,000,000 times, making 4,000,000,000 characters, over the limit "
        r"of 1,000,\d+",
    ),
    "huge list": (
        "{{ ([0] * 4000000000)|length }}",
        r"it repeats a list of 1 items 4,000,000,000 times, making 4,000,000,000 items, over the limit of 1,000,\d+",
    ),
    "float count": ("{{ 'x' * 4e9 }}", r"can't multiply sequence by non-int of type 'float'"),
    "doubling": (
        "{% set s = 'xxxxxxxxxx' %}" + "{% set s = s + s %}" * 40 + "{{ s }}",
        r"it joins a string of 655,360 characters and a string of 655,360 characters, making 1,310,720 characters, "
        r"over the limit of 1,000,\d+",
    ),
    "huge power": ("{{ 9 ** (9 ** 9) }}", r"it raises 9 to the power 387,420,489, a number of over 1,549,681,956 bits"),
    "wide center": ("{{ 'x'|center(3000000000) }}", r"it needed more memory than its limit of [\d,]+ MiB"),
    "long output": (
        "{% for i in range(10000) %}{{ 'y' * 1000 }}{% endfor %}",
        r"it writes over 65,\d+ characters, the limit for messages of \d+ characters \(twice theirs and 65,536 more\)",
    ),
    # Within every other limit: the scoring process tokenized it for each prompt, until it was killed at 4.9 GB.
    "long text": (
        "{{ 'x ' * 490000 }}",
        r"it writes over 65,\d+ characters, the limit for messages of \d+ characters \(twice theirs and 65,536 more\)",
    ),
    "recursion": ("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", r"it recursed too deeply"),
}
_LOAD_EACH = """
import json, sys, time
import bart_score
results = {}
for name, checkpoint in json.loads(sys.argv[1]).items():
    start = time.monotonic()
    try:
        bart_score.BARTScorer(checkpoint=checkpoint, device="cpu", chat=True)
        results[name] = ["loaded", "", time.monotonic() - start]
    except Exception as error:
        results[name] = [type(error).__name__, str(error), time.monotonic() - start]
print(json.dumps(results))
"""
BOUND_SECONDS, BOUND_BYTES = 60, 3 << 30


def load_each_bounded(checkpoints):
    """{name: (error class name or "loaded", message, seconds)}: each checkpoint loaded with chat=True, in one
    process limited to BOUND_BYTES of memory and BOUND_SECONDS for each checkpoint."""
    import resource
    import sys

    completed = subprocess.run(
        [sys.executable, "-c", _LOAD_EACH, json.dumps(checkpoints)],
        capture_output=True,
        text=True,
        timeout=BOUND_SECONDS * len(checkpoints) + 30,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        env={**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"},
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (BOUND_BYTES, BOUND_BYTES)),
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def hostile_template_loads(chatml_llama, tmp_path_factory):
    """What loading a copy of the ChatML model with each hostile template before its own gives, and a GGUF file with
    the endless one in its metadata."""
    import shutil

    from support.gguf import build_tiny_causal, write_gguf

    folder = tmp_path_factory.mktemp("hostile-templates")
    checkpoints = {}
    for name, (hostile, _) in HOSTILE_TEMPLATES.items():
        copy = shutil.copytree(chatml_llama, folder / name.replace(" ", "-"))
        (copy / "chat_template.jinja").write_text(hostile + CHATML, encoding="utf-8")
        checkpoints[name] = str(copy)
    model, tokenizer = build_tiny_causal("llama")
    tokenizer.chat_template = HOSTILE_TEMPLATES["endless"][0] + tokenizer.chat_template
    checkpoints["gguf endless"] = write_gguf(model, tokenizer, folder / "endless.gguf")
    return checkpoints, load_each_bounded(checkpoints)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(HOSTILE_TEMPLATES))
def test_a_hostile_chat_template_is_refused_with_its_reason_within_the_bounds(hostile_template_loads, name):
    checkpoints, results = hostile_template_loads
    error, message, seconds = results[name]
    assert error == "UnsupportedModelError", message
    where = f"the chat template of {checkpoints[name]!r} (in chat_template.jinja) cannot render a user and "
    assert message.startswith(where + "assistant conversation: ") and "\n" not in message, message
    assert re.fullmatch(HOSTILE_TEMPLATES[name][1], message[len(where + "assistant conversation: ") :]), message
    assert seconds < BOUND_SECONDS


@pytest.mark.slow
def test_an_endless_chat_template_in_gguf_metadata_is_refused_naming_the_metadata(hostile_template_loads):
    checkpoints, results = hostile_template_loads
    error, message, seconds = results["gguf endless"]
    assert error == "UnsupportedModelError", message
    assert message == (
        f"the chat template of {checkpoints['gguf endless']!r} (tokenizer.chat_template in its GGUF metadata) cannot "
        f"render a user and assistant conversation: it asks range() for 100,000 numbers, over the limit of 10,000"
    )
    assert seconds < BOUND_SECONDS


def test_a_template_that_renders_the_date_renders_a_fixed_one_on_any_day(chatml_llama, tmp_path, monkeypatch):
    """Scores on two days (the clock read in time zones 26 hours apart, which always fall on different dates) are
    the same, and equal the plain loop's under the template with the fixed date written in."""
    import shutil
    import time

    from support.models import load_tiny

    dated = "{{ '<|im_start|>system\\nToday is ' + strftime_now('%d %B %Y') + '.<|im_end|>\\n' }}"
    clock = shutil.copytree(chatml_llama, tmp_path / "clock")
    (clock / "chat_template.jinja").write_text(dated + CHATML, encoding="utf-8")
    fixed = shutil.copytree(chatml_llama, tmp_path / "fixed")
    (fixed / "chat_template.jinja").write_text(dated.replace("strftime_now('%d %B %Y')", "'26 July 2024'") + CHATML)
    _, tokenizer = load_tiny(str(clock))
    scores, renders = {}, {}
    for zone in ("Etc/GMT+12", "Etc/GMT-14"):  # UTC-12 and UTC+14
        monkeypatch.setenv("TZ", zone)
        time.tzset()
        scorer = bart_score.BARTScorer(checkpoint=str(clock), device="cpu", chat=True)
        scores[zone] = (scorer.score(SOURCES, PREDICTIONS), scorer.token_policy)
        renders[zone] = tokenizer.apply_chat_template([{"role": "user", "content": "Hi."}], tokenize=False)
    monkeypatch.delenv("TZ")
    time.tzset()
    assert renders["Etc/GMT+12"] != renders["Etc/GMT-14"]  # transformers' own rendering reads the clock
    assert scores["Etc/GMT+12"] == scores["Etc/GMT-14"]
    expected = reference(
        (str(fixed), "chatml", load_tiny(str(fixed))), SOURCES, PREDICTIONS, DEFAULT_INSTRUCTIONS["faithfulness"]
    )
    assert largest_difference(scores["Etc/GMT+12"][0], expected) < TOLERANCE


def test_the_policy_digest_of_a_template_that_renders_the_date_records_the_date(chatml_llama, tmp_path, monkeypatch):
    import datetime
    import shutil

    import bart_score.models.chat as chat

    clock = shutil.copytree(chatml_llama, tmp_path / "clock")
    (clock / "chat_template.jinja").write_text("{{ strftime_now('%Y-%m-%d') }}" + CHATML, encoding="utf-8")
    dated, plain = (bart_score.BARTScorer(checkpoint=c, device="cpu", chat=True) for c in (str(clock), chatml_llama))
    policies = (dated.token_policy, plain.token_policy)
    monkeypatch.setattr(chat, "TEMPLATE_DATE", datetime.datetime(2031, 2, 3))
    assert dated.token_policy != policies[0] and plain.token_policy == policies[1]
    assert dated.score_tokens(["A text."], ["A reply."]) != []
    assert dated.family._render([([{"role": "user", "content": "Hi."}], False)])[0].startswith("2031-02-03")


def render_one(template, content):
    """What the renderer answers for one conversation of a user's message, rendered in this process."""
    from bart_score.models import chat, chat_render

    request = {
        "template": template,
        "conversations": [{"messages": [{"role": "user", "content": content}], "add_generation_prompt": True}],
        "variables": {},
        "date": chat.TEMPLATE_DATE.isoformat(),
        "max_size": chat.RENDER_ALLOWANCE + 4 * len(content),
        "seconds": chat.RENDER_SECONDS,
        "memory": chat.RENDER_MEMORY,
    }
    return chat_render.render(request)


def test_a_rendered_conversation_holds_at_most_twice_its_messages_and_65536_characters_more():
    echo = "{% for m in messages %}{{ m['content'] }}{{ m['content'] }}{% endfor %}"
    assert render_one(echo + "{{ 'x' * 65536 }}", "a" * 1000) == {"rendered": ["a" * 2000 + "x" * 65_536]}
    refused = render_one(echo + "{{ 'x' * 65537 }}", "a" * 1000)
    assert refused["error"] == (
        "it writes over 67,536 characters, the limit for messages of 1,000 characters (twice theirs and 65,536 more)"
    )
    assert "q" * 100_000 in render_one(CHATML, "q" * 100_000)["rendered"][0]  # a long message is its own room
    assert "it writes over 65,548 characters" in render_one("{{ 'x ' * 490000 }}" + CHATML, "Hello.")["error"]


@pytest.mark.slow
def test_a_template_writing_a_long_text_is_refused_by_the_command_line_in_bounded_memory(chatml_llama, tmp_path):
    import shutil

    from support.cli import run_cli_capped

    copy = shutil.copytree(chatml_llama, tmp_path / "long-text")
    (copy / "chat_template.jinja").write_text("{{ 'x ' * 490000 }}" + CHATML, encoding="utf-8")
    (tmp_path / "src.txt").write_text("".join(f"Source number {n} is here.\n" for n in range(300)), encoding="utf-8")
    (tmp_path / "sys.txt").write_text("A summary.\n" * 300, encoding="utf-8")
    arguments = ["score", "-m", str(copy), "--chat", "-s", str(tmp_path / "src.txt"), "-t", str(tmp_path / "sys.txt")]
    # The memory is the bound; the time limit only stops a hang, with room for a machine at load 20 (the command
    # imports torch and transformers and loads the model before the template is rendered: 60 s was not enough there).
    status, error, _, peak = run_cli_capped(*arguments, "-q", memory=3 << 30, seconds=900)
    assert status == 2 and len(error.strip().splitlines()) == 1, (status, error)
    assert re.search(HOSTILE_TEMPLATES["long text"][1], error), error
    assert peak < 1 << 30, f"{peak:,} bytes resident"


# ---------------------------------------------------------------------------------------------------------------------
# chat_template: a template file for a model that has none, or instead of its own


@pytest.fixture(scope="module")
def templateless_llama(chatml_llama, tmp_path_factory):
    """The ChatML checkpoint saved again without its chat template (a base model's), and the template as a file."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = tmp_path_factory.mktemp("templateless")
    tokenizer = AutoTokenizer.from_pretrained(chatml_llama, trust_remote_code=False)
    template = tokenizer.chat_template
    tokenizer.chat_template = None
    tokenizer.save_pretrained(folder / "model")
    AutoModelForCausalLM.from_pretrained(chatml_llama, trust_remote_code=False).save_pretrained(folder / "model")
    assert not AutoTokenizer.from_pretrained(folder / "model", trust_remote_code=False).chat_template
    (folder / "chatml.jinja").write_text(template, encoding="utf-8")
    return str(folder / "model"), str(folder / "chatml.jinja")


def test_a_chat_template_file_gives_a_model_without_one_its_chat_format(chatml_llama, templateless_llama):
    """The template file makes the base model score exactly as the plain loop does under that template (the same
    weights with it in their tokenizer), with the same token policy as the checkpoint that carries it."""
    model_folder, template_file = templateless_llama
    with pytest.raises(UnsupportedModelError, match="needs a chat template"):
        bart_score.BARTScorer(checkpoint=model_folder, device="cpu", chat=True)
    scorer = bart_score.BARTScorer(checkpoint=model_folder, device="cpu", chat=True, chat_template=template_file)
    conditions, targets = [*SOURCES, SOURCES[0]], [*PREDICTIONS, REFERENCES[2][0]]
    expected = reference(
        (chatml_llama, "chatml", load_tiny(chatml_llama)), conditions, targets, DEFAULT_INSTRUCTIONS["faithfulness"]
    )
    assert largest_difference(scorer.score(conditions, targets), expected) < TOLERANCE
    assert scorer.token_policy == chat_scorer(chatml_llama).token_policy


def test_a_chat_template_file_replaces_a_models_own(chatml_llama, tmp_path):
    """Another template than the checkpoint's own is what is scored in: another token policy, other scores."""
    own = chat_scorer(chatml_llama)
    template = tmp_path / "other.jinja"
    tokenizer_template = own.tokenizer.chat_template
    template.write_text("{{ bos_token }}" + tokenizer_template, encoding="utf-8")  # the same turns, a BOS first
    other = bart_score.BARTScorer(checkpoint=chatml_llama, device="cpu", chat=True, chat_template=str(template))
    assert other.token_policy != own.token_policy
    assert other.score(SOURCES[:1], PREDICTIONS[:1]) != own.score(SOURCES[:1], PREDICTIONS[:1])


def test_an_engine_shared_for_a_chat_template_file_is_loaded_again_once_the_file_is_edited(
    templateless_llama, tmp_path
):
    import shutil

    from bart_score.integrations.shared_engines import shared_engine

    model_folder, template_file = templateless_llama
    template = shutil.copyfile(template_file, tmp_path / "chatml.jinja")
    options = bart_score.EngineOptions(checkpoint=model_folder, device="cpu", chat=True, chat_template=str(template))
    held = shared_engine(options)
    assert shared_engine(options) is held
    template.write_text("{{ bos_token }}" + template.read_text(encoding="utf-8"), encoding="utf-8")
    edited = shared_engine(options)
    assert edited is not held and edited.scorer.token_policy != held.scorer.token_policy


@pytest.mark.parametrize(
    "content, options, message",
    [
        ("{{ messages }}", {"chat": False}, r"chat_template is for chat scoring, which is not asked for"),
        (None, {"chat": True}, r"chat_template: cannot read .*missing\.jinja"),
        (b"\xff\xfe{{ x }}", {"chat": True}, r"chat_template '.*bad\.jinja' is not UTF-8 text"),
        ("x" * (1 << 20 | 1), {"chat": True}, r"chat_template: .* over the limit of 1,048,576 bytes"),
    ],
    ids=["without-chat", "missing", "not-utf8", "too-large"],
)
def test_a_chat_template_file_that_cannot_be_used_is_refused_before_loading(
    content, options, message, tmp_path, no_model_load
):
    name = "missing.jinja" if content is None else "bad.jinja"
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=message) as raised:
        bart_score.BARTScorer(checkpoint="/no/such/model", device="cpu", chat_template=str(path), **options)
    assert raised.value.option == "chat_template"


def test_the_command_line_offers_chat_template_and_says_its_flag(tmp_path, capsys, no_model_load):
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    assert "--chat-template FILE" in capsys.readouterr().out
    source, template = tmp_path / "s.txt", tmp_path / "chatml.jinja"
    source.write_text("A source.\n", encoding="utf-8")
    template.write_text("{{ messages }}", encoding="utf-8")
    code = main(
        ["score", "-m", "/no/such/model", "-s", str(source), "-t", str(source), "--chat-template", str(template)]
    )
    assert code == 2
    error = capsys.readouterr().err
    assert "--chat-template is for chat scoring, which is not asked for; ask for it with --chat" in error


# ---------------------------------------------------------------------------------------------------------------------
# The renderer's process: kept across requests, replaced after a failure, never outliving its owner


def renderer_payload(template, content="Hello.", seconds=None):
    """One request of a user's message, as chat scoring sends it (without the line break)."""
    from bart_score.models import chat

    return json.dumps(
        {
            "template": template,
            "conversations": [{"messages": [{"role": "user", "content": content}], "add_generation_prompt": True}],
            "variables": {},
            "date": chat.TEMPLATE_DATE.isoformat(),
            "max_size": chat.RENDER_ALLOWANCE + 4 * len(content),
            "seconds": chat.RENDER_SECONDS if seconds is None else seconds,
            "memory": chat.RENDER_MEMORY,
        }
    ).encode()


def process_alive(pid):
    """Whether process `pid` runs (a zombie, ended but not yet reaped by whoever adopted it, does not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def ended_within(pid, seconds):
    import time

    deadline = time.monotonic() + seconds
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not process_alive(pid)


linux_only = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads processes from /proc")


def test_the_renderer_keeps_its_process_and_replaces_it_after_a_failure():
    from bart_score.models.chat import TemplateRenderer

    renderer = TemplateRenderer()
    assert renderer.pid is None  # started by the first request
    assert renderer.request(renderer_payload(CHATML), 30) == render_one(CHATML, "Hello.")
    first = renderer.pid
    assert renderer.request(renderer_payload(CHATML, "Again."), 30) == render_one(CHATML, "Again.")
    assert renderer.pid == first
    failing = "{{ raise_exception('no such turn') }}"
    assert renderer.request(renderer_payload(failing), 30) == {"error": "no such turn", "conversation": 0}
    assert renderer.pid is None and ended_within(first, 5)
    assert renderer.request(renderer_payload(CHATML), 30) == render_one(CHATML, "Hello.")
    assert renderer.pid not in (None, first)
    renderer.stop()


@pytest.mark.parametrize(
    "hostile, seconds, reason",
    [
        (THREE_LOOPS, 0.5, "it ran past its time limit of 0.5 s"),
        (HOSTILE_TEMPLATES["wide center"][0], None, "it needed more memory than its limit of 1,024 MiB"),
        (HOSTILE_TEMPLATES["huge string"][0], None, "it repeats a string of 1 characters 4,000,000,000 times"),
        (HOSTILE_TEMPLATES["endless"][0], None, "it asks range() for 100,000 numbers, over the limit of 10,000"),
        (HOSTILE_TEMPLATES["long output"][0], None, "it writes over 65,548 characters"),
        (HOSTILE_TEMPLATES["recursion"][0], None, "it recursed too deeply"),
    ],
    ids=["time", "memory", "string", "range", "output", "recursion"],
)
def test_a_kept_process_holds_every_limit_on_a_later_request_and_renders_after_it(hostile, seconds, reason):
    from bart_score.models.chat import TemplateRenderer

    renderer = TemplateRenderer()
    for _ in range(2):  # the limit is held by a process that rendered before, and by the one started after it
        assert renderer.request(renderer_payload(CHATML), 30) == render_one(CHATML, "Hello.")
        refused = renderer.request(renderer_payload(hostile + CHATML, seconds=seconds), 30)
        assert refused["conversation"] == 0 and refused["error"].startswith(reason), refused
    renderer.stop()


def test_no_template_sees_what_another_render_left():
    from bart_score.models.chat import TemplateRenderer

    renderer = TemplateRenderer()
    leaves = "{% set leaked = 'left' %}{% set ns = namespace(count=1) %}{% set ns.count = ns.count + 1 %}{{ ns.count }}"
    reads = "{{ leaked is defined }} {{ ns is defined }}"
    for template, rendered in [(leaves, "2"), (leaves, "2"), (reads, "False False"), (leaves, "2")]:
        assert renderer.request(renderer_payload(template), 30) == {"rendered": [rendered]}
    renderer.stop()


def test_a_request_past_the_callers_time_ends_the_process():
    from bart_score.models.chat import RendererStopped, TemplateRenderer

    renderer = TemplateRenderer()
    renderer.request(renderer_payload(CHATML), 30)
    pid = renderer.pid
    with pytest.raises(RendererStopped) as stopped:
        renderer.request(renderer_payload(THREE_LOOPS + CHATML, seconds=30), 0.5)
    assert stopped.value.timed_out
    assert renderer.pid is None and ended_within(pid, 5)
    assert renderer.request(renderer_payload(CHATML), 30) == render_one(CHATML, "Hello.")
    renderer.stop()


def test_a_process_that_ends_without_answering_is_reported_with_its_last_words():
    from bart_score.models.chat import RendererStopped, TemplateRenderer

    renderer = TemplateRenderer()
    with pytest.raises(RendererStopped) as stopped:
        renderer.request(b"not a request", 30)
    assert not stopped.value.timed_out and stopped.value.status == 1
    assert stopped.value.said.startswith("json.decoder.JSONDecodeError: Expecting value")
    assert renderer.request(renderer_payload(CHATML), 30) == render_one(CHATML, "Hello.")
    renderer.stop()


def test_a_copy_of_a_renderer_starts_a_process_of_its_own():
    """Pickled or deep-copied (as datasets hashes a scorer passed to map), a renderer is a new one."""
    import copy
    import pickle

    from bart_score.models.chat import TemplateRenderer

    renderer = TemplateRenderer()
    renderer.request(renderer_payload(CHATML), 30)
    for copied in (pickle.loads(pickle.dumps(renderer)), copy.deepcopy(renderer)):
        assert copied.pid is None
        assert copied.request(renderer_payload(CHATML, "Copied."), 30) == render_one(CHATML, "Copied.")
        assert copied.pid not in (None, renderer.pid)
        copied.stop()
    assert renderer.request(renderer_payload(CHATML), 30) == render_one(CHATML, "Hello.")
    renderer.stop()


@linux_only
def test_a_forked_child_renders_with_a_process_of_its_own_and_leaves_its_parents_alone():
    from bart_score.models.chat import TemplateRenderer

    renderer = TemplateRenderer()
    renderer.request(renderer_payload(CHATML), 30)
    parent = renderer.pid
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child: renders, says with which process, and exits (its renderer's process ending with it)
        try:
            answer = renderer.request(renderer_payload(CHATML, "From the child."), 30)
            os.write(write, json.dumps([answer, renderer.pid]).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as said:
        answer, child_renderer = json.loads(said.read())
    os.waitpid(child, 0)
    assert answer == render_one(CHATML, "From the child.")
    assert child_renderer not in (None, parent) and ended_within(child_renderer, 5)
    assert renderer.pid == parent
    assert renderer.request(renderer_payload(CHATML), 30) == render_one(CHATML, "Hello.")
    renderer.stop()


@linux_only
def test_the_renderer_ends_when_its_scorer_is_collected(chatml_llama):
    import gc

    scorer = bart_score.BARTScorer(checkpoint=chatml_llama, device="cpu", chat=True)
    scorer.score(SOURCES, PREDICTIONS)
    pid = scorer.family.renderer.pid
    assert pid is not None and process_alive(pid)
    del scorer
    gc.collect()
    assert ended_within(pid, 5)


_OWNER = """
import os, signal, sys, time
import bart_score
scorer = bart_score.BARTScorer(checkpoint=sys.argv[1], device="cpu", chat=True)
print(scorer.family.renderer.pid, flush=True)
if sys.argv[2] == "killed":
    os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.slow
@linux_only
@pytest.mark.parametrize("end", ["exits", "killed"])
def test_the_renderer_does_not_outlive_its_interpreter(chatml_llama, end):
    import sys

    completed = subprocess.run(
        [sys.executable, "-c", _OWNER, chatml_llama, end],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    )
    assert completed.returncode == (0 if end == "exits" else -9), completed.stderr[-2000:]
    assert ended_within(int(completed.stdout.split()[-1]), 10)
