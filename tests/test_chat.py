"""Chat-format scoring: the engine against a plain loop built from apply_chat_template (one full forward pass per
pair), on tiny Llama and Qwen2 checkpoints in two chat formats, and on the real SmolLM2-135M-Instruct; every
direction, with and without a system turn, batch sizes and token budgets, truncation; the options' errors. The chat
templates themselves are tested in test_chat_templates.py, the process that renders them in test_chat_render.py."""

from __future__ import annotations

import json
import os
import subprocess
import warnings

import numpy as np
import pytest
from support.chat_cases import PREDICTIONS, REFERENCES, SOURCES, TOLERANCE, chat_scorer, largest_difference, reference
from support.extras import require_extra
from support.fast_subset import fast_cases
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
from bart_score.cli._requests import engine_options, load_scorer
from bart_score.cli._wording import baseline_command_from
from bart_score.errors import BaselineNotFoundError, InputError, UnsupportedModelError
from bart_score.messages import Mention, Recipe
from bart_score.options import DEFAULT_INSTRUCTIONS
from bart_score.scoring._directions import score_directions
from bart_score.scoring.score_cache import ResumableScorer

evaluate = LazyModule("evaluate")  # imported by the first test that uses it (support/lazy.py)
SYSTEM = "You judge summaries and paraphrases."
# The text chat scoring renders in the condition's place to find where the condition goes (written out here, so that
# a change to it is seen).
PLACEHOLDER = "\u2063bartscore-condition\u2063"
LONG_SOURCE = " ".join(SOURCES * 3)
LONG_REPLY = " ".join(PREDICTIONS * 3)

FORMATS = [("llama", "chatml"), ("qwen2", "chatml"), ("llama", "llama3"), ("qwen2", "llama3")]
# The fast subset's formats (tests/README.md): both families (Llama with a BOS, Qwen2 without) and both templates.
FAST_FORMATS = [("llama", "chatml"), ("qwen2", "llama3")]


@pytest.fixture(
    scope="module",
    params=[pytest.param(f, marks=() if f in FAST_FORMATS else pytest.mark.slow) for f in FORMATS],
    ids=["-".join(f) for f in FORMATS],
)
def chat_model(request, tmp_path_factory):
    """(checkpoint, format, (model, tokenizer) loaded independently of the code under test)."""
    family, template = request.param
    checkpoint = build_tiny_chat(family, template, tmp_path_factory.mktemp(f"{family}-{template}"))
    return checkpoint, template, load_tiny(checkpoint)


def chat_formats(fast):
    """chat_model's formats for a test that keeps fewer of them in the fast subset than FAST_FORMATS: those not in
    `fast` marked slow, with the fixture's ids. Put it below the test's other parametrize marks, so that the format
    stays first in its ids."""
    return pytest.mark.parametrize(
        "chat_model",
        [pytest.param(f, id="-".join(f), marks=() if f in fast else pytest.mark.slow) for f in FORMATS],
        indirect=True,
    )


# ---------------------------------------------------------------------------------------------------------------------
# The policy against the plain loop


@chat_formats([("llama", "chatml")])
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


@pytest.mark.parametrize("system", fast_cases([None, SYSTEM], [SYSTEM]), ids=["no-system", "system"])
@chat_formats([("llama", "chatml")])
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


@pytest.mark.slow
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
    assert set(scorer.options.chat_settings.instructions.values()) == {one}
    result = scorer.score_directions(PREDICTIONS, references=refs, sources=SOURCES)
    assert largest_difference(result["recall"], reference(model, PREDICTIONS, refs, one)) < TOLERANCE
    # score() takes an instruction per pair as well
    per_pair = [one, instructions["precision"], one]
    got = scorer.score(SOURCES, PREDICTIONS, instruction=per_pair)
    expected = [reference(model, [c], [t], i)[0] for c, t, i in zip(SOURCES, PREDICTIONS, per_pair)]
    assert largest_difference(got, np.array(expected)) < TOLERANCE


@pytest.mark.parametrize("max_length", fast_cases([72, 96, 128], [72]))
@chat_formats([("llama", "chatml")])
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


@pytest.mark.slow
def test_a_prompt_too_long_for_max_length_is_refused(chatml_llama):
    with pytest.raises(
        InputError, match=r"max_length=24 leaves pair \d+ no room for a reply.*; raise it or shorten the instruction"
    ):
        bart_score.BARTScorer(checkpoint=chatml_llama, device="cpu", chat=True, max_length=24)


# ---------------------------------------------------------------------------------------------------------------------
# Identity: signature, baselines, score cache, reference points


@pytest.mark.slow
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
        pytest.param({"chat": True}, marks=pytest.mark.slow),
        {"chat": True, "instruction": "Summarize: {condition}", "system": SYSTEM},
        pytest.param({"template": "Text: {condition}\nSummary:"}, marks=pytest.mark.slow),
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
def test_the_command_lines_missing_chat_baseline_error_names_chat_and_the_remedy_once(
    in_process, monkeypatch, chatml_llama, copier, tmp_path
):
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
    monkeypatch.setenv(BASELINE_FOLDER_ENV, str(tmp_path / "baselines"))
    code, stdout, stderr = in_process(
        "score", "-m", chatml_llama, "--chat", "-s", str(tmp_path / "sources.txt"), "-t", str(tmp_path / "outputs.txt"),
        "--device", "cpu", "-q", "--rescale", "baseline",
    )  # fmt: skip
    assert code == 2 and stdout == "" and "Traceback" not in stderr, stderr
    assert "in its chat format (this scorer uses the model's chat template; its token policy chat:" in stderr
    assert stderr.rstrip().endswith("take the reference points from the texts being scored: --rescale corpus")
    assert stderr.count("--rescale corpus") == 1


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_chat_needs_a_causal_lm_with_a_chat_template(tiny_checkpoint, tmp_path):
    with pytest.raises(InputError, match=r"chat=True is for causal language models, and .* is a sequence-to-sequence"):
        bart_score.BARTScorer(checkpoint=tiny_checkpoint, device="cpu", chat=True)
    from support.models import build_tiny

    plain = build_tiny("llama", tmp_path / "plain")
    with pytest.raises(UnsupportedModelError, match=r"needs a chat template, and .* has none"):
        bart_score.BARTScorer(checkpoint=plain, device="cpu", chat=True)
    no_closing = build_tiny_chat("llama", "plain-text-turns", tmp_path / "plain-turns")
    with pytest.raises(UnsupportedModelError, match="does not begin with a special token"):
        bart_score.BARTScorer(checkpoint=no_closing, device="cpu", chat=True)


@pytest.mark.slow
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
    with pytest.raises(
        InputError, match="instruction is for chat scoring, which is not asked for; load the scorer with chat=True"
    ):
        plain.score(SOURCES[:1], PREDICTIONS[:1], instruction="{condition}")


@pytest.mark.slow
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


@pytest.mark.slow
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
    assert scorer.token_policy.startswith("chat:")
    assert scorer.options.chat_settings.instructions["recall"] == "Summarize: {condition}"
    for bad, message in [
        ("x=/m;chat=yes", "chat must be true or false, got 'yes'"),
        ("x=/m;instruction=Summarize: {condition}", "instruction is for chat scoring, which is not asked for"),
        ("x=/m;chat=true;instruction=Summarize.", "instruction must hold the field {condition} once"),
        ("x=/m;chat=true;compatibility=gptscore", "does not go with chat scoring"),
    ]:
        with pytest.raises(ValueError, match=f"BARTSCORE_APP_MODELS entry .*{message}"):
            space.settings.settings_from_env({"BARTSCORE_APP_MODELS": bad})


@pytest.mark.filterwarnings("ignore:BARTScore. .* cannot be rescaled")  # random weights tell no copy apart
@pytest.mark.parametrize("chat", fast_cases([False, True], [True]))
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
