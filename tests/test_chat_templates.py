"""Chat templates as a model brings them: hostile ones refused with their reason within time and memory bounds, a
template that renders the date, and a chat_template file for a model that has none or instead of its own."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest
from support.chat_cases import (
    HOSTILE_TEMPLATES,
    PREDICTIONS,
    REFERENCES,
    SOURCES,
    TOLERANCE,
    chat_scorer,
    largest_difference,
    reference,
)
from support.models import CHATML, load_tiny

import bart_score
from bart_score.cli import main
from bart_score.errors import InputError, UnsupportedModelError
from bart_score.options import DEFAULT_INSTRUCTIONS

# ---------------------------------------------------------------------------------------------------------------------
# Chat templates under a time and memory budget. Each hostile template is loaded in a process of its own, limited to
# 3 GB and 60 s for each template, so that a regression fails instead of hanging or taking the machine's memory.

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
# A template that renders the date: scored as of a fixed day, which the policy's digest records


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_chat_template_file_replaces_a_models_own(chatml_llama, tmp_path):
    """Another template than the checkpoint's own is what is scored in: another token policy, other scores."""
    own = chat_scorer(chatml_llama)
    template = tmp_path / "other.jinja"
    tokenizer_template = own.tokenizer.chat_template
    template.write_text("{{ bos_token }}" + tokenizer_template, encoding="utf-8")  # the same turns, a BOS first
    other = bart_score.BARTScorer(checkpoint=chatml_llama, device="cpu", chat=True, chat_template=str(template))
    assert other.token_policy != own.token_policy
    assert other.score(SOURCES[:1], PREDICTIONS[:1]) != own.score(SOURCES[:1], PREDICTIONS[:1])


@pytest.mark.slow
def test_an_engine_shared_for_a_chat_template_file_is_loaded_again_once_the_file_is_edited(
    templateless_llama, tmp_path
):
    import shutil

    from bart_score.integrations._shared_engines import shared_engine

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
