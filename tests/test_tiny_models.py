"""The tiny checkpoints of every family, the per-family reference policies and the peers' scorers: the test-side
foundation that the scorer's tests compare against, checked on their own here."""

import math
import statistics

import pytest
import torch
from support import reference
from support.models import (
    CAUSAL_FAMILIES,
    FAMILIES,
    MBART50_LANGUAGE_CODES,
    MBART_CC25_LANGUAGE_CODES,
    SEQ2SEQ_FAMILIES,
    build_tiny,
    load_tiny,
    prebuilt,
    tiny_checkpoint_for,
)
from transformers import AutoConfig, AutoTokenizer

LAST = "last id"  # stands for len(tokenizer) - 1 below
FAIRSEQ = {"bos": 0, "pad": 1, "eos": 2, "unk": 3}
T5 = {"bos": None, "pad": 0, "eos": 1, "unk": 2}

# family: tokenizer class, model class, special-token ids, decoder start id (seq2seq)
EXPECTED = {
    "bart": ("RobertaTokenizer", "BartForConditionalGeneration", FAIRSEQ, 2),
    "mbart50": ("MBart50Tokenizer", "MBartForConditionalGeneration", FAIRSEQ, 2),
    "mbart": ("MBartTokenizer", "MBartForConditionalGeneration", FAIRSEQ, None),
    "t5": ("T5Tokenizer", "T5ForConditionalGeneration", T5, 0),
    "flan-t5": ("T5Tokenizer", "T5ForConditionalGeneration", T5, 0),
    "mt5": ("T5Tokenizer", "MT5ForConditionalGeneration", T5, 0),
    "pegasus": (
        "PegasusTokenizer",
        "PegasusForConditionalGeneration",
        {"bos": None, "pad": 0, "eos": 1, "unk": 105},
        0,
    ),
    "marian": ("MarianTokenizer", "MarianMTModel", {"bos": None, "pad": LAST, "eos": 0, "unk": 1}, LAST),
    "gpt2": ("GPT2Tokenizer", "GPT2LMHeadModel", {"bos": LAST, "pad": None, "eos": LAST, "unk": LAST}, None),
    "opt": ("GPT2Tokenizer", "OPTForCausalLM", {"bos": 2, "pad": 1, "eos": 2, "unk": 2}, None),
    "llama": ("LlamaTokenizer", "LlamaForCausalLM", {"bos": 1, "pad": None, "eos": 2, "unk": 0}, None),
    "qwen2": ("Qwen2Tokenizer", "Qwen2ForCausalLM", {"bos": None, "pad": LAST, "eos": LAST, "unk": None}, None),
}

# family: (tokens the tokenizer puts before a text, tokens after it), for a source and for a target
SPECIAL_LAYOUT = {
    "bart": (["<s>"], ["</s>"]),
    "mbart50": (["en_XX"], ["</s>"]),
    "mbart": ([], ["</s>", "en_XX"]),
    "t5": ([], ["</s>"]),
    "flan-t5": ([], ["</s>"]),
    "mt5": ([], ["</s>"]),
    "pegasus": ([], ["</s>"]),
    "marian": ([], ["</s>"]),
    "gpt2": ([], []),
    "opt": (["</s>"], []),
    "llama": (["<s>"], []),
    "qwen2": ([], []),
}

TEXTS = (
    "The cat sat on the mat, and the dog was in the house.",
    "Die Straße ist schön, größer als gestern!",
    "Le garçon était déjà à côté du château (très bien); 3-1.",
    'She said "yes" - 5 € & more?',
)
CONDITION = "The government said the report was good, and the team found many new results in the city."
TARGET = "The study shows a new model for the news market."
PAIRS = [
    (CONDITION, TARGET),
    ("A cat.", "The dog was in the house, and the cat was on the mat."),
    ("Die Stadt ist schön.", "Le château est très grand."),
    ("The team found a new result in the report about the river.", "A good game."),
    ("The player said the game was bad.", "The player <pad> said it."),
]


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    """family -> (model, tokenizer) of its tiny checkpoint, loaded once through the Auto classes."""
    loaded = {}

    def get(family):
        if family not in loaded:
            loaded[family] = load_tiny(tiny_checkpoint_for(tmp_path_factory, family))
        return loaded[family]

    return get


def _expected_id(value, tokenizer):
    return len(tokenizer) - 1 if value == LAST else value


@pytest.mark.parametrize("family", FAMILIES)
def test_family_loads_through_the_auto_classes_with_its_special_tokens(family, tiny, tmp_path_factory):
    model, tokenizer = tiny(family)
    tokenizer_class, model_class, ids, decoder_start = EXPECTED[family]
    assert type(tokenizer).__name__ == tokenizer_class
    assert type(model).__name__ == model_class
    assert AutoConfig.from_pretrained(
        tiny_checkpoint_for(tmp_path_factory, family), trust_remote_code=False
    ).is_encoder_decoder == (family in SEQ2SEQ_FAMILIES)
    found = {name: getattr(tokenizer, f"{name}_token_id") for name in ids}
    assert found == {name: _expected_id(value, tokenizer) for name, value in ids.items()}
    config = model.config
    assert config.vocab_size >= len(tokenizer)
    assert config.eos_token_id == tokenizer.eos_token_id
    if config.pad_token_id is not None:  # Qwen2's config, like Qwen2.5's, names none
        assert config.pad_token_id == tokenizer.pad_token_id
    if family in SEQ2SEQ_FAMILIES:
        assert config.decoder_start_token_id == _expected_id(decoder_start, tokenizer)
    assert sum(p.numel() for p in model.parameters()) < 200_000


@pytest.mark.parametrize("family", FAMILIES)
def test_tokenizer_adds_the_family_special_tokens_to_sources_and_targets(family, tiny):
    _, tokenizer = tiny(family)
    before, after = SPECIAL_LAYOUT[family]
    for side in ("text", "text_target"):
        words = tokenizer(**{side: "the cat"}, add_special_tokens=False)["input_ids"]
        encoded = tokenizer(**{side: "the cat"})["input_ids"]
        assert tokenizer.convert_ids_to_tokens(encoded) == before + tokenizer.convert_ids_to_tokens(words) + after


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("text", TEXTS)
def test_tokenizer_round_trips_english_german_and_french(family, text, tiny):
    _, tokenizer = tiny(family)
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    assert tokenizer.unk_token_id not in ids or family in ("gpt2", "opt")  # their unk is a real special token
    assert tokenizer.decode(ids) == text
    assert tokenizer.decode(tokenizer(text)["input_ids"], skip_special_tokens=True) == text
    assert tokenizer.decode(tokenizer(text_target=text)["input_ids"], skip_special_tokens=True) == text


def test_mbart50_tokenizer_has_every_language_code_before_the_text(tmp_path_factory):
    tokenizer = AutoTokenizer.from_pretrained(tiny_checkpoint_for(tmp_path_factory, "mbart50"), trust_remote_code=False)
    code_ids = [tokenizer.convert_tokens_to_ids(code) for code in MBART50_LANGUAGE_CODES]
    assert tokenizer.lang_code_to_id == dict(zip(MBART50_LANGUAGE_CODES, code_ids))
    assert code_ids == list(range(code_ids[0], code_ids[0] + 52))  # one block, in the checkpoint's order
    assert tokenizer.convert_tokens_to_ids("<mask>") == code_ids[-1] + 1 == len(tokenizer) - 1
    assert tokenizer.src_lang == "en_XX" and tokenizer.tgt_lang is None

    tokenizer.src_lang, tokenizer.tgt_lang = "de_DE", "fr_XX"
    encoded = tokenizer("the cat", text_target="the dog")
    assert tokenizer.convert_ids_to_tokens(encoded["input_ids"]) == ["de_DE", "▁the", "▁cat", "</s>"]
    assert tokenizer.convert_ids_to_tokens(encoded["labels"]) == ["fr_XX", "▁the", "▁dog", "</s>"]
    from_options = AutoTokenizer.from_pretrained(
        tiny_checkpoint_for(tmp_path_factory, "mbart50"), src_lang="sl_SI", tgt_lang="ro_RO", trust_remote_code=False
    )
    assert from_options("a")["input_ids"][0] == tokenizer.lang_code_to_id["sl_SI"]
    assert from_options(text_target="a")["input_ids"][0] == tokenizer.lang_code_to_id["ro_RO"]


def test_mbart_tokenizers_quirks_with_unset_target_language_and_unknown_codes(tmp_path_factory):
    """What the scorer must guard against: with tgt_lang unset, the first target encoding adopts the source language
    for good; an unknown code silently becomes <unk>."""
    tokenizer = AutoTokenizer.from_pretrained(tiny_checkpoint_for(tmp_path_factory, "mbart50"), trust_remote_code=False)
    tokenizer(text_target="a")
    assert tokenizer.tgt_lang == "en_XX"
    tokenizer.src_lang = "de_DE"
    assert tokenizer(text_target="a")["input_ids"][0] == tokenizer.lang_code_to_id["en_XX"]
    tokenizer.src_lang = "xx_YY"
    assert tokenizer("a")["input_ids"][0] == tokenizer.unk_token_id


def test_mbart_cc25_tokenizer_puts_the_language_code_after_the_end_of_text(tmp_path_factory):
    tokenizer = AutoTokenizer.from_pretrained(tiny_checkpoint_for(tmp_path_factory, "mbart"), trust_remote_code=False)
    assert list(tokenizer.lang_code_to_id) == list(MBART_CC25_LANGUAGE_CODES)
    assert tokenizer.convert_tokens_to_ids("sl_SI") == tokenizer.unk_token_id  # a code of mBART-50 only
    tokenizer.src_lang, tokenizer.tgt_lang = "de_DE", "fr_XX"
    encoded = tokenizer("the cat", text_target="the dog")
    assert tokenizer.convert_ids_to_tokens(encoded["input_ids"]) == ["▁the", "▁cat", "</s>", "de_DE"]
    assert tokenizer.convert_ids_to_tokens(encoded["labels"]) == ["▁the", "▁dog", "</s>", "fr_XX"]


def test_marian_encodes_targets_with_its_target_sentencepiece_model(tiny):
    _, tokenizer = tiny("marian")
    assert tokenizer("The house")["input_ids"] != tokenizer(text_target="The house")["input_ids"]
    assert tokenizer.decode(tokenizer(text_target="The house")["input_ids"], skip_special_tokens=True) == "The house"


def test_t5_variants_differ_as_the_public_checkpoints_do(tiny):
    t5, _ = tiny("t5")
    flan, _ = tiny("flan-t5")
    mt5, _ = tiny("mt5")
    assert t5.config.scale_decoder_outputs and not flan.config.scale_decoder_outputs
    assert t5.lm_head.weight.data_ptr() == t5.shared.weight.data_ptr()
    assert not torch.equal(flan.lm_head.weight, flan.shared.weight)
    assert not torch.equal(mt5.lm_head.weight, mt5.shared.weight)
    assert t5.config.feed_forward_proj == "relu" and not t5.config.is_gated_act
    assert flan.config.is_gated_act and mt5.config.is_gated_act
    assert len(tiny("t5")[1]) == len(tiny("mt5")[1]) + 100  # the sentinels <extra_id_0..99>, absent from mt5's


@pytest.mark.parametrize("family", [f for f in SEQ2SEQ_FAMILIES if f not in ("t5", "flan-t5", "mt5")])
def test_final_logits_bias_is_saved_and_loaded(family, tiny):
    model, _ = tiny(family)
    assert model.final_logits_bias.abs().mean() > 0.1


@pytest.mark.parametrize("family", FAMILIES)
def test_log_probs_of_a_target_spread_over_nats(family, tiny):
    model, tokenizer = tiny(family)
    if family in SEQ2SEQ_FAMILIES:
        log_probs = reference.seq2seq_token_log_probs(model, tokenizer, CONDITION, TARGET)
    else:
        log_probs = reference.causal_token_log_probs(model, tokenizer, CONDITION, TARGET)
    assert all(math.isfinite(lp) and lp < 0 for lp in log_probs)
    assert max(log_probs) - min(log_probs) > 1.0


@pytest.mark.slow
def test_builds_are_reproducible_and_cached(tmp_path, tmp_path_factory):
    for family in ("t5", "gpt2"):
        first = build_tiny(family, tmp_path / f"{family}-1")
        second = build_tiny(family, tmp_path / f"{family}-2")
        for name in ("tokenizer.json", "model.safetensors"):
            assert (tmp_path / f"{family}-1" / name).read_bytes() == (tmp_path / f"{family}-2" / name).read_bytes()
        assert first != second
    assert tiny_checkpoint_for(tmp_path_factory, "t5") == tiny_checkpoint_for(tmp_path_factory, "t5")
    # The session's copy from the machine's model cache is the fresh build, and changing it changes nothing later.
    copy = prebuilt(tmp_path / "t5-copy", build_tiny, family="t5")
    for name in ("tokenizer.json", "model.safetensors", "config.json"):
        assert (tmp_path / "t5-copy" / name).read_bytes() == (tmp_path / "t5-1" / name).read_bytes()
    (tmp_path / "t5-copy" / "config.json").write_text("{}")
    prebuilt(tmp_path / "t5-again", build_tiny, family="t5")
    assert (tmp_path / "t5-again" / "config.json").read_bytes() == (tmp_path / "t5-1" / "config.json").read_bytes()
    assert copy == str(tmp_path / "t5-copy")
    with pytest.raises(ValueError, match="family: unknown 'gpt5'"):
        build_tiny("gpt5", tmp_path / "unknown")


# The seq2seq reference policy


def _labels(tokenizer, target):
    return tokenizer(text_target=[target], return_tensors="pt")["input_ids"]


@pytest.mark.parametrize("family", [f for f in SEQ2SEQ_FAMILIES if not f.startswith("mbart")])
def test_seq2seq_reference_is_the_model_loss(family, tiny):
    model, tokenizer = tiny(family)
    source = tokenizer([CONDITION], return_tensors="pt")
    with torch.no_grad():
        loss = model(**source, labels=_labels(tokenizer, TARGET)).loss.item()
    assert reference.seq2seq_score(model, tokenizer, CONDITION, TARGET) == pytest.approx(-loss, abs=1e-5)


@pytest.mark.parametrize("family", ["mbart50", "mbart"])
def test_seq2seq_reference_leaves_mbart_language_codes_out(family, tiny, tmp_path_factory):
    model, _ = tiny(family)
    directory = tiny_checkpoint_for(tmp_path_factory, family)
    tokenizer = AutoTokenizer.from_pretrained(directory, tgt_lang="de_DE", trust_remote_code=False)
    source = tokenizer([CONDITION], return_tensors="pt")
    labels = _labels(tokenizer, TARGET)
    code = tokenizer.lang_code_to_id["de_DE"]
    assert (labels == code).sum() == 1
    with torch.no_grad():
        # mBART's decoder input: the labels shifted right, the last one (mBART-50: </s>; cc25: the code) moved first
        decoder_input_ids = torch.cat([labels[:, -1:], labels[:, :-1]], dim=1)
        logits = model(**source, decoder_input_ids=decoder_input_ids).logits
        loss = model(**source, labels=labels).loss.item()
    log_probs = torch.log_softmax(logits[0], dim=-1)[torch.arange(labels.shape[1]), labels[0]]

    fresh = AutoTokenizer.from_pretrained(directory, trust_remote_code=False)
    options = {"src_lang": "en_XX", "tgt_lang": "de_DE"}
    scored = reference.seq2seq_token_log_probs(model, fresh, CONDITION, TARGET, **options)
    assert scored == pytest.approx(log_probs[labels[0] != code].tolist(), abs=1e-5)
    assert -loss == pytest.approx(log_probs.mean().item(), abs=1e-5)  # the model's own loss counts the code
    assert (fresh.src_lang, fresh.tgt_lang) == ("en_XX", None)  # the reference left the tokenizer as it was
    other = reference.seq2seq_token_log_probs(model, fresh, CONDITION, TARGET, src_lang="en_XX", tgt_lang="fr_XX")
    assert scored != pytest.approx(other)


@pytest.mark.parametrize("family", ["bart", "t5"])
def test_seq2seq_reference_counts_a_written_pad_as_zero(family, tiny):
    model, tokenizer = tiny(family)
    target = "The player <pad> said it."
    labels = _labels(tokenizer, target)[0].tolist()
    scored = reference.seq2seq_token_log_probs(model, tokenizer, CONDITION, target)
    assert len(scored) == len(labels)
    assert [lp == 0.0 for lp in scored] == [label == tokenizer.pad_token_id for label in labels]


def test_seq2seq_reference_on_bart_is_the_bart_reference(tiny):
    model, tokenizer = tiny("bart")
    for condition, target in PAIRS:
        assert reference.seq2seq_token_log_probs(model, tokenizer, condition, target) == pytest.approx(
            reference.reference_token_log_probs(model, tokenizer, condition, target)
        )


@pytest.mark.parametrize("family", SEQ2SEQ_FAMILIES)
def test_seq2seq_reference_truncates_both_sides(family, tiny):
    model, tokenizer = tiny(family)
    full = reference.seq2seq_token_log_probs(model, tokenizer, CONDITION, TARGET)
    short = reference.seq2seq_token_log_probs(model, tokenizer, CONDITION, TARGET, max_length=6)
    codes_left_out = 1 if family.startswith("mbart") else 0
    assert len(short) == 6 - codes_left_out < len(full)


# The causal reference policy


@pytest.mark.parametrize("family", CAUSAL_FAMILIES)
def test_causal_prefix_starts_with_one_bos_where_the_family_has_one(family, tiny):
    _, tokenizer = tiny(family)
    prefix, target_ids = reference.causal_ids(tokenizer, CONDITION, TARGET)
    words = tokenizer(CONDITION + "\n", add_special_tokens=False)["input_ids"]
    bos = [] if tokenizer.bos_token_id is None else [tokenizer.bos_token_id]
    assert prefix == bos + words
    assert target_ids == [*tokenizer(TARGET, add_special_tokens=False)["input_ids"], tokenizer.eos_token_id]
    assert (family == "qwen2") == (bos == [])


@pytest.mark.parametrize("family", CAUSAL_FAMILIES)
def test_causal_reference_is_the_model_loss_on_the_target(family, tiny):
    model, tokenizer = tiny(family)
    prefix, target_ids = reference.causal_ids(tokenizer, CONDITION, TARGET, template="Say: {condition} =")
    with torch.no_grad():
        loss = model(
            input_ids=torch.tensor([prefix + target_ids]), labels=torch.tensor([[-100] * len(prefix) + target_ids])
        ).loss.item()
    score = reference.causal_score(model, tokenizer, CONDITION, TARGET, template="Say: {condition} =")
    assert score == pytest.approx(-loss, abs=1e-5)


@pytest.mark.parametrize("family", CAUSAL_FAMILIES)
def test_causal_reference_truncates_the_prefix_first(family, tiny):
    model, tokenizer = tiny(family)
    prefix, target_ids = reference.causal_ids(tokenizer, CONDITION, TARGET)
    assert tokenizer.decode(prefix[-1:]) == "\n"  # the default template's text after the condition
    short_prefix, short_target = reference.causal_ids(tokenizer, CONDITION, TARGET, max_length=len(target_ids) + 3)
    assert short_target == target_ids and short_prefix == prefix[:2] + prefix[-1:]  # the condition is cut, not "\n"
    tiny_prefix, tiny_target = reference.causal_ids(tokenizer, CONDITION, TARGET, max_length=5)
    assert tiny_target == [*target_ids[:3], tokenizer.eos_token_id]
    starts_with_bos = prefix[0] == tokenizer.bos_token_id
    assert tiny_prefix == (prefix[:1] if starts_with_bos else prefix[-1:])  # a BOS stays before the template's text
    assert len(reference.causal_token_log_probs(model, tokenizer, CONDITION, TARGET, max_length=5)) == 4


# The peers' scorers against the reference policies


@pytest.mark.parametrize("family", ["t5", "mt5"])
def test_t5score_is_the_seq2seq_policy_on_t5(family, tiny):
    model, tokenizer = tiny(family)
    sources, targets = zip(*PAIRS)
    expected = [reference.seq2seq_score(model, tokenizer, s, t) for s, t in PAIRS]
    assert reference.t5score(model, tokenizer, sources, targets, batch_size=2) == pytest.approx(expected, abs=1e-5)


def test_gptscore_flan_is_the_seq2seq_policy_on_flan_t5(tiny):
    model, tokenizer = tiny("flan-t5")
    sources, targets = zip(*PAIRS)
    expected = [reference.seq2seq_score(model, tokenizer, s, t) for s, t in PAIRS]
    assert reference.gptscore_flan(model, tokenizer, sources, targets, batch_size=3) == pytest.approx(
        expected, abs=1e-5
    )


@pytest.mark.slow
def test_t5score_on_mbart50_scores_the_source_language_code_on_the_target(tiny, tmp_path_factory):
    model, _ = tiny("mbart50")
    tokenizer = AutoTokenizer.from_pretrained(
        tiny_checkpoint_for(tmp_path_factory, "mbart50"), src_lang="en_XX", trust_remote_code=False
    )
    source = tokenizer([CONDITION], return_tensors="pt")
    labels = tokenizer([TARGET], return_tensors="pt")["input_ids"]  # a plain call: en_XX first
    with torch.no_grad():
        loss = model(**source, labels=labels).loss.item()
    assert reference.t5score(model, tokenizer, [CONDITION], [TARGET]) == pytest.approx([-loss], abs=1e-5)
    policy = reference.seq2seq_score(model, tokenizer, CONDITION, TARGET, src_lang="en_XX", tgt_lang="en_XX")
    assert policy != pytest.approx(-loss, abs=1e-3)


def test_gptscore_is_the_causal_policy_without_its_eos_on_opt_with_a_newline_prompt(tiny):
    model, tokenizer = tiny("opt")
    sources, targets = zip(*PAIRS)
    expected = [statistics.fmean(reference.causal_token_log_probs(model, tokenizer, s, t)[:-1]) for s, t in PAIRS]
    assert reference.gptscore_causal(model, tokenizer, sources, targets, "\n") == pytest.approx(expected, abs=1e-5)


def test_gptscore_on_gpt2_drops_the_first_target_token_and_the_bos(tiny):
    """GPT-2 adds no BOS, so GPTScore's `encode(tgt)[1:]` removes the target's first token, and nothing stands
    before the source; the default policy scores every target token after a BOS."""
    model, tokenizer = tiny("gpt2")
    joint = tokenizer(CONDITION + "\n" + TARGET)["input_ids"]
    target_ids = tokenizer(TARGET)["input_ids"]
    with torch.no_grad():
        log_probs = torch.log_softmax(model(input_ids=torch.tensor([joint])).logits[0], dim=-1)
    positions = range(len(joint) - len(target_ids) + 1, len(joint))
    expected = statistics.fmean(log_probs[p - 1, joint[p]].item() for p in positions)
    assert reference.gptscore_causal(model, tokenizer, [CONDITION], [TARGET], "\n") == pytest.approx(
        [expected], abs=1e-5
    )
    assert expected != pytest.approx(reference.causal_score(model, tokenizer, CONDITION, TARGET), abs=1e-2)


def test_gptscore_on_llama_labels_tokens_the_input_does_not_have(tiny):
    """A sentencepiece target encoded alone starts with "▁The"; after the prompt's newline the joint encoding has
    "The" in other pieces, yet GPTScore writes the alone-encoding over the end of the input as labels."""
    model, tokenizer = tiny("llama")
    joint = tokenizer(CONDITION + "\n" + TARGET)["input_ids"]
    labels = tokenizer(TARGET)["input_ids"][1:]
    assert joint[-len(labels) :] != labels
    assert joint[-len(labels) + 1 :] == labels[1:]
    policy = reference.causal_score(model, tokenizer, CONDITION, TARGET)
    assert reference.gptscore_causal(model, tokenizer, [CONDITION], [TARGET], "\n")[0] != pytest.approx(
        policy, abs=1e-2
    )


def test_gptscore_truncation_drops_two_more_tokens_and_ignores_the_prompt(tiny):
    _, tokenizer = tiny("opt")
    source = "The cat the dog the mat the house"
    words = tokenizer(source, add_special_tokens=False)["input_ids"]
    assert len(words) == 8  # one token per word
    # encode(...)[1:-1] drops </s> and "house" (7 ids) and keeps "a" of "a cat" (1 id): 8 > 6, so 2 ids go;
    # the 5 left ("The cat the dog the") lose their first and last once more
    assert reference.gptscore_truncated_source(tokenizer, source, "a cat", 6) == " cat the dog"
    assert reference.gptscore_truncated_source(tokenizer, source, "a cat", 8) == source
