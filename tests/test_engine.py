"""The engine (`BARTScorer`) against the plain reference implementation, and its behaviour on bad input."""

import random
import warnings

import numpy as np
import pytest
import torch
from support.reference import reference_score, reference_token_log_probs
from support.text import english_like_text

import bart_score
from bart_score import CheckpointLoadError, CorpusPoints
from bart_score.messages import Mention

TOLERANCE = 1e-5


def corpus(seed=0, n=12):
    rng = random.Random(seed)
    sources = [english_like_text(rng, rng.randint(5, 60)) for _ in range(n)]
    targets = [english_like_text(rng, rng.randint(1, 25)) for _ in range(n)]
    # Edge cases: empty texts, non-ASCII, a repeated pair, a source shared by several targets.
    # A <pad> written in a text: the original leaves it out of the sum but counts it.
    sources += ["", "Café déjà vu — naïve 😀.", sources[0], sources[1], sources[1], "Padded <pad> source."]
    targets += ["Nothing to see.", "", targets[0], targets[2], "The cat sat.", "The cat <pad> sat."]
    return sources, targets


@pytest.mark.slow
def test_scores_equal_the_reference_implementation(scorer, reference_model):
    sources, targets = corpus()
    expected = [reference_score(*reference_model, s, t) for s, t in zip(sources, targets)]
    assert np.max(np.abs(np.array(scorer.score(sources, targets)) - expected)) < TOLERANCE


@pytest.fixture(scope="module")
def batching_reference(reference_model):
    """The batching test's texts and their plain loop's scores, computed once for its five ways to batch."""
    sources, targets = corpus(seed=1)
    return sources, targets, [reference_score(*reference_model, s, t) for s, t in zip(sources, targets)]


@pytest.mark.parametrize("batch_size,max_tokens", [(1, None), (3, None), (None, 40), (2, 100000), (None, 1)])
def test_scores_do_not_depend_on_batching(scorer, batching_reference, batch_size, max_tokens):
    sources, targets, expected = batching_reference
    got = scorer.score(sources, targets, batch_size=batch_size, max_tokens=max_tokens)
    assert np.max(np.abs(np.array(got) - expected)) < TOLERANCE


def test_scores_do_not_depend_on_input_order(scorer):
    sources, targets = corpus(seed=2)
    order = list(range(len(sources)))
    random.Random(0).shuffle(order)
    straight = scorer.score(sources, targets)
    shuffled = scorer.score([sources[i] for i in order], [targets[i] for i in order])
    assert np.max(np.abs(np.array(shuffled) - np.array(straight)[order])) < TOLERANCE


def test_original_batch_size_argument_is_accepted_positionally(scorer, reference_model):
    got = scorer.score(["This is interesting."], ["This is fun."], 4)
    assert got[0] == pytest.approx(
        reference_score(*reference_model, "This is interesting.", "This is fun."), abs=TOLERANCE
    )


@pytest.mark.slow
def test_truncation_matches_the_reference_and_is_reported(tiny_checkpoint, reference_model):
    short = bart_score.BARTScorer(checkpoint=tiny_checkpoint, device="cpu", max_length=16)
    rng = random.Random(3)
    long_source, long_target = english_like_text(rng, 80), english_like_text(rng, 40)
    sources = [long_source, "Short source.", long_source]
    targets = ["Short target.", long_target, long_target]
    with pytest.warns(
        UserWarning,
        match=r"truncated 1 distinct source text\(s\) and 1 distinct target text\(s\) "
        r"to max_length=16",
    ):
        got = short.score(sources, targets)
    expected = [reference_score(*reference_model, s, t, max_length=16) for s, t in zip(sources, targets)]
    assert np.max(np.abs(np.array(got) - expected)) < TOLERANCE


@pytest.mark.slow
def test_a_cut_source_is_pointed_to_long_source_windows(tiny_checkpoint):
    from bart_score.cli._wording import COMMAND_LINE

    short = bart_score.BARTScorer(checkpoint=tiny_checkpoint, device="cpu", max_length=16)
    long_text = english_like_text(random.Random(3), 80)

    def truncation_warning(sources, targets):
        with pytest.warns(bart_score.TokenizationWarning) as caught:
            short.score(sources, targets)
        (warning,) = [w.message for w in caught if "truncated" in str(w.message)]
        return warning

    warning = truncation_warning([long_text], ["Short target."])
    assert str(warning).endswith(
        "their tails are not scored; for faithfulness to a long source, score each prediction sentence against the "
        "best windows of the whole source: long_source='windows' (docs/long-documents.md)"
    )
    assert "source: --long-source windows (docs/long-documents.md)" in warning.said(COMMAND_LINE)
    assert truncation_warning(["Short source."], [long_text]).remedy == ()  # a cut target: windows would not help


def test_no_truncation_warning_for_texts_that_fit(scorer):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scorer.score(["This is interesting."], ["This is fun."])


@pytest.mark.slow
def test_multi_ref_score_with_different_reference_counts(scorer, reference_model):
    sources = ["I'm super happy today.", "This is a good idea.", "A third one."]
    refs = [["I feel good today.", "I feel sad today."], ["Not bad.", "Sounds like a good idea.", "Hm."], ["Yes."]]
    for agg, combine in (("mean", np.mean), ("max", np.max)):
        expected = [combine([reference_score(*reference_model, s, r) for r in rs]) for s, rs in zip(sources, refs)]
        got = scorer.multi_ref_score(sources, refs, agg=agg)
        assert np.max(np.abs(np.array(got) - expected)) < TOLERANCE


@pytest.mark.slow
def test_token_scores_average_to_the_score(scorer, reference_model):
    sources, targets = corpus(seed=4, n=4)
    tokens = scorer.score_tokens(sources, targets)
    scores = scorer.score(sources, targets)
    for source, target, pieces, score in zip(sources, targets, tokens, scores):
        log_probs = [lp for _, lp in pieces]
        assert np.mean(log_probs) == pytest.approx(score, abs=TOLERANCE)
        assert np.allclose(log_probs, reference_token_log_probs(*reference_model, source, target), atol=TOLERANCE)
        texts = [text for text, _ in pieces]
        assert texts[0] == "<s>" and texts[-1] == "</s>"
        assert "".join(texts[1:-1]) == target


def test_token_texts_keep_characters_that_tokens_split_whole(scorer):
    (pieces,) = scorer.score_tokens(["A source."], ["Café déjà 😀 東京"])
    texts = [text for text, _ in pieces]
    assert "".join(texts[1:-1]) == "Café déjà 😀 東京"
    assert "\ufffd" not in "".join(texts)
    assert "" in texts  # some characters take several byte-level tokens; the earlier ones have no text of their own


def test_empty_call_returns_empty(scorer):
    assert scorer.score([], []) == []
    assert scorer.multi_ref_score([], []) == []


def test_identical_pairs_are_scored_once(scorer, monkeypatch):
    decoded = []
    original = scorer._decode

    def counting(encoded, rows, targets):
        decoded.extend(targets)
        return original(encoded, rows, targets)

    monkeypatch.setattr(scorer, "_decode", counting)
    scorer.score(["a b", "a b", "c", "a b"], ["x", "x", "x", "y"])
    assert len(decoded) == 3


@pytest.mark.slow
def test_out_of_memory_batches_are_split_and_results_unchanged(scorer, monkeypatch):
    sources, targets = corpus(seed=5)
    expected = scorer.score(sources, targets)
    decode, encode = scorer._decode, scorer._encode
    calls = {"decode": 0, "encode": 0}

    def small_decodes_only(encoded, rows, batch_targets):
        calls["decode"] += 1
        if len(rows) > 2:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        return decode(encoded, rows, batch_targets)

    def small_encodes_only(sequences):
        calls["encode"] += 1
        if len(sequences) > 3:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        return encode(sequences)

    monkeypatch.setattr(scorer, "_decode", small_decodes_only)
    monkeypatch.setattr(scorer, "_encode", small_encodes_only)
    got = scorer.score(sources, targets)
    assert np.max(np.abs(np.array(got) - expected)) < TOLERANCE
    assert calls["decode"] > 1 and calls["encode"] > 1


def test_a_group_retried_with_fewer_sources_does_not_score_its_finished_pairs_again(scorer, monkeypatch):
    sources = ["First source.", "Second source."] * 3
    targets = ["A.", "B b.", "C c c.", "D d d d.", "E e e e e.", "F f f f f f."]
    expected = scorer.score(sources, targets)
    decode = scorer._decode
    last = scorer.tokenizer("A.")["input_ids"]  # the shortest target: decoded after the others of its group
    finished = []

    def last_target_needs_a_group_of_one(encoded, rows, batch_targets):
        if len(encoded.mask) > 1 and any(t.labels == tuple(last) for t in batch_targets):
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        finished.extend(t.labels for t in batch_targets)
        return decode(encoded, rows, batch_targets)

    monkeypatch.setattr(scorer, "_decode", last_target_needs_a_group_of_one)
    # a budget that holds both sources in one encoder batch but only one pair per decoder batch
    got = scorer.score(sources, targets, max_tokens=2 * max(len(scorer.tokenizer(s)["input_ids"]) for s in sources))
    assert np.max(np.abs(np.array(got) - expected)) < TOLERANCE
    assert len(finished) == len(set(finished)) == len(targets)


def test_a_pair_that_cannot_fit_alone_is_named(scorer, monkeypatch):
    def never_fits(encoded, rows, batch_targets):
        if any(len(t.labels) > 6 for t in batch_targets):
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        return original(encoded, rows, batch_targets)

    original = scorer._decode
    monkeypatch.setattr(scorer, "_decode", never_fits)
    sources = ["Short.", "Short too.", "Another one."]
    targets = ["Ok.", "This target is much longer than the others by far.", "Fine."]
    with pytest.raises(
        RuntimeError, match=r"pair 1 \(a source of \d+ tokens and a target of \d+ tokens\) does not fit"
    ):
        scorer.score(sources, targets)


@pytest.mark.parametrize(
    "call,error,message",
    [
        (lambda s: s.score(["a", "b"], ["a"]), ValueError, r"srcs has 2 entries but tgts has 1"),
        (lambda s: s.score(["a", None], ["a", "b"]), TypeError, r"srcs\[1\] is None; expected a string"),
        (lambda s: s.score(["a"], [3]), TypeError, r"tgts\[0\] is an int; expected a string"),
        (lambda s: s.score("a", "b"), TypeError, r"srcs must be a list of strings, got a str"),
        (lambda s: s.score(["a"], ["b"], batch_size=0), ValueError, r"batch_size must be a positive integer"),
        (lambda s: s.score(["a"], ["b"], max_tokens=-5), ValueError, r"max_tokens must be a positive integer"),
        (lambda s: s.multi_ref_score(["a"], [[]]), ValueError, r"tgts\[0\] is an empty list"),
        (lambda s: s.multi_ref_score(["a", "b"], [["c"]]), ValueError, r"tgts has 1 entries but srcs has 2"),
        (lambda s: s.score(["a"], ["b"], batch_size=np.float64(2)), ValueError, r"batch_size must be a positive"),
        (lambda s: s.multi_ref_score(["a"], [["b", None]]), TypeError, r"tgts\[0\]\[1\] is None"),
        (lambda s: s.multi_ref_score(["a"], [["b"]], agg="median"), ValueError, r"agg must be one of"),
        # Unordered or single-pass collections: scores come back in input order, so the order must be the caller's.
        (
            lambda s: s.score({"a", "b"}, ["c", "d"]),
            TypeError,
            r"srcs must be a list of strings, got a set \(its order",
        ),
        (lambda s: s.score(["a"], (t for t in ["b"])), TypeError, r"tgts must be a list of strings, got a generator"),
        (
            lambda s: s.score({"k": "a"}.values(), ["b"]),
            TypeError,
            r"srcs must be a list of strings, got a dict_values",
        ),
        (lambda s: s.score(["a"], iter(["b"])), TypeError, r"tgts must be a list of strings, got a list_iterator"),
        (
            lambda s: s.multi_ref_score(["a"], [{"b", "c"}]),
            TypeError,
            r"tgts\[0\] must be a list of strings, got a set",
        ),
        (lambda s: s.multi_ref_score(["a"], {"b": ["c"]}.keys()), TypeError, r"tgts must be a list .*got a dict_keys"),
        # Lone surrogates: Python holds them, no tokenizer can encode them.
        (lambda s: s.score(["ok", "x\ud800"], ["a", "b"]), ValueError, r"srcs\[1\] holds '\\ud800' at character 1"),
        (
            lambda s: s.score(["a"], ["\udcff"]),
            ValueError,
            r"tgts\[0\] holds '\\udcff' at character 0, a lone surrogate",
        ),
        (lambda s: s.multi_ref_score(["a"], [["b", "c\udfff"]]), ValueError, r"tgts\[0\]\[1\] holds '\\udfff'"),
        (lambda s: s.multi_ref_score(["a"], ["\ud83d"]), ValueError, r"tgts\[0\] holds '\\ud83d'"),
        (lambda s: s.score_tokens(["a"], ["b\ud800"]), ValueError, r"tgts\[0\] holds '\\ud800'"),
        (lambda s: s.score_directions(["a", "\ud800"], sources=["s", "t"]), ValueError, r"predictions\[1\] holds"),
        (lambda s: s.score_directions(["a"], sources=["s"], prompt="Say \ud800"), ValueError, r"prompt holds"),
        (lambda s: s.score_directions(["a"], sources=["s"], prompt=["ok", "\ud800"]), ValueError, r"prompt\[1\] holds"),
    ],
)
def test_bad_input_is_named(scorer, call, error, message):
    with pytest.raises(error, match=message):
        call(scorer)


@pytest.mark.slow
def test_numpy_integers_are_integers_wherever_a_count_is_asked_for(scorer, tiny_checkpoint, tmp_path):
    sources, targets = ["A cat.", "A dog sat.", "Rain."], ["The cat.", "Dogs.", "It rained all day."]
    expected = scorer.score(sources, targets)
    got = scorer.score(sources, targets, batch_size=np.int64(2), max_tokens=np.int32(64))
    assert got == pytest.approx(expected, abs=TOLERANCE)
    short = bart_score.BARTScorer(checkpoint=tiny_checkpoint, device="cpu", max_length=np.int64(64))
    assert short.max_length == 64 and type(short.max_length) is int
    assert short.score(sources, targets) == pytest.approx(expected, abs=TOLERANCE)
    corpus = scorer.score_directions(
        targets, sources=sources, rescale="corpus", corpus_points={"pairs": np.int64(6), "seed": np.uint8(3)}
    )
    again = scorer.score_directions(
        targets, sources=sources, rescale="corpus", corpus_points=CorpusPoints(pairs=6, seed=3)
    )
    assert corpus["faithfulness_rescaled"] == pytest.approx(again["faithfulness_rescaled"], abs=TOLERANCE)
    assert corpus["signature"] == again["signature"]
    comparison = bart_score.compare_systems({"a": [1.0, 2.0, 3.0], "b": [1.5, 2.5, 2.0]}, resamples=np.int64(50))
    assert comparison == bart_score.compare_systems({"a": [1.0, 2.0, 3.0], "b": [1.5, 2.5, 2.0]}, resamples=50)
    resumable = bart_score.ResumableScorer(scorer, str(tmp_path / "cache.jsonl"), chunk_pairs=np.int64(2))
    assert resumable.chunk_pairs == 2


def test_ordered_sequences_other_than_lists_are_taken_in_their_order(scorer):
    import pandas as pd

    sources, targets = ["A cat.", "A dog sat.", "Rain."], ["The cat.", "Dogs.", "It rained all day."]
    expected = scorer.score(sources, targets)
    assert scorer.score(tuple(sources), np.array(targets)) == pytest.approx(expected, abs=TOLERANCE)
    assert scorer.score(pd.Series(sources), targets) == pytest.approx(expected, abs=TOLERANCE)


@pytest.mark.slow
def test_token_outside_the_model_vocabulary_is_a_clear_error(tiny_checkpoint):
    small_vocab = bart_score.BARTScorer(checkpoint=tiny_checkpoint, device="cpu")
    small_vocab.model.resize_token_embeddings(5)  # the tokenizer knows many more tokens than this
    with pytest.raises(ValueError, match=r"contains token .* which the model's 5-token vocabulary lacks"):
        small_vocab.score(["This is interesting."], ["This is fun."])


@pytest.mark.slow
def test_max_length_must_fit_the_model(tiny_checkpoint):
    with pytest.raises(ValueError, match=r"max_length must be an integer from 2 to 1024"):
        bart_score.BARTScorer(checkpoint=tiny_checkpoint, device="cpu", max_length=4096)


@pytest.mark.parametrize("max_length", ["1024", 1, 3.5, True])
def test_max_length_is_checked_before_any_model_is_loaded(max_length):
    with pytest.raises(ValueError, match=r"max_length must be an integer of at least 2"):
        bart_score.BARTScorer(checkpoint="/nowhere/no-model", device="cpu", max_length=max_length)


@pytest.mark.slow
def test_a_config_without_the_teacher_forcing_ids_is_refused(tiny_checkpoint, tmp_path):
    import shutil

    import transformers

    broken = shutil.copytree(tiny_checkpoint, tmp_path / "no-start-id")
    config = transformers.AutoConfig.from_pretrained(broken, trust_remote_code=False)
    config.decoder_start_token_id = None
    config.save_pretrained(broken)
    with pytest.raises(ValueError, match=r"has no decoder_start_token_id in its config"):
        bart_score.BARTScorer(checkpoint=str(broken), device="cpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="reason: this machine has a CUDA device")
def test_asking_for_cuda_without_one_is_a_clear_error(tiny_checkpoint):
    with pytest.raises(
        ValueError, match=r"device 'cuda:0' was asked for, but this torch build sees no CUDA device"
    ) as raised:
        bart_score.BARTScorer(checkpoint=tiny_checkpoint, device="cuda:0")
    assert (raised.value.option, raised.value.value) == ("device", "cuda:0")
    assert Mention("device", "cpu") in raised.value.remedy


@pytest.mark.parametrize(
    "device, error, message",
    [
        ("tpu", ValueError, r"device 'tpu' is not a device; use 'cpu', 'cuda', 'cuda:<n>' or 'mps'"),
        ("cuda:x", ValueError, r"device 'cuda:x' is not a device"),
        (3.5, TypeError, r"device must be a string such as 'cpu', 'cuda' or 'cuda:1', got 3.5"),
        (True, TypeError, r"device must be a string"),
        ("meta", ValueError, r"device 'meta' is not supported here"),
    ],
)
def test_a_device_that_is_not_one_is_refused_before_any_model_loads(device, error, message):
    with pytest.raises(error, match=message):
        bart_score.BARTScorer(checkpoint="/nowhere/no-model", device=device)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA device")
@pytest.mark.parametrize("device", [5, np.int64(5), "cuda", "cuda:5"])
def test_a_cuda_device_index_without_cuda_is_refused(device):
    with pytest.raises(ValueError, match=r"was asked for, but this torch build sees no CUDA device"):
        bart_score.BARTScorer(checkpoint="/nowhere/no-model", device=device)


def test_a_folder_that_is_not_a_checkpoint_is_named(tmp_path):
    with pytest.raises(bart_score.CheckpointNotFoundError, match=r"'/etc' is a directory without a config.json"):
        bart_score.BARTScorer(checkpoint="/etc", device="cpu")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(OSError, match=r"cannot .* of '.*broken'"):
        bart_score.BARTScorer(checkpoint=str(broken), device="cpu")


def test_truncated_weights_are_named(tiny_checkpoint, tmp_path):
    import shutil

    copy = shutil.copytree(tiny_checkpoint, tmp_path / "truncated")
    weights = copy / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    with pytest.raises(CheckpointLoadError, match=r"cannot read the weights file .*truncated/model\.safetensors"):
        bart_score.BARTScorer(checkpoint=str(copy), device="cpu")


@pytest.mark.parametrize("text", ["<pad><pad><pad>", "A cat </s> sat.", "<s>"])
def test_texts_with_special_token_strings_are_scored_as_the_original_but_warned_about(scorer, reference_model, text):
    with pytest.warns(UserWarning, match=r"1 distinct text\(s\) contain special-token strings .* as the original"):
        (got,) = scorer.score(["A plain source."], [text])
    assert got == pytest.approx(reference_score(*reference_model, "A plain source.", text), abs=TOLERANCE)


def test_unknown_dtype(tiny_checkpoint):
    with pytest.raises(ValueError, match=r"dtype must be one of"):
        bart_score.BARTScorer(checkpoint=tiny_checkpoint, device="cpu", dtype="float64")


@pytest.mark.slow
def test_bfloat16_runs_and_stays_close(tiny_checkpoint, scorer):
    half = bart_score.BARTScorer(checkpoint=tiny_checkpoint, device="cpu", dtype="bfloat16")
    sources, targets = corpus(seed=6, n=4)
    got = np.array(half.score(sources, targets))
    assert np.all(np.isfinite(got))
    assert np.max(np.abs(got - scorer.score(sources, targets))) < 0.2


@pytest.mark.slow
def test_load_state_dict_over_the_checkpoint(tiny_checkpoint, tmp_path, reference_model):
    model, tokenizer = reference_model
    tuned = {k: v.clone() for k, v in model.state_dict().items()}
    generator = torch.Generator().manual_seed(7)
    for _name, tensor in tuned.items():
        if tensor.is_floating_point():
            tensor.add_(0.05 * torch.randn(tensor.shape, generator=generator))
    path = tmp_path / "bart.pth"
    torch.save(tuned, path)

    engine = bart_score.BARTScorer(checkpoint=tiny_checkpoint, device="cpu").load(str(path))
    other = type(model)(model.config)
    other.load_state_dict(tuned)
    other.eval()
    pairs = [("This is interesting.", "This is fun."), ("The cat sat on the mat.", "A cat.")]
    expected = [reference_score(other, tokenizer, s, t) for s, t in pairs]
    assert np.allclose(engine.score(*zip(*pairs)), expected, atol=TOLERANCE)
    assert not np.allclose(expected, [reference_score(model, tokenizer, s, t) for s, t in pairs], atol=1e-3)
    assert engine.model_label.endswith("+bart.pth")


@pytest.mark.slow
def test_load_reports_a_missing_or_foreign_state_dict(tiny_checkpoint, tmp_path, monkeypatch):
    engine = bart_score.BARTScorer(checkpoint=tiny_checkpoint, device="cpu")
    monkeypatch.delenv("BARTSCORE_PARA_WEIGHTS", raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(bart_score.CheckpointNotFoundError, match=r"No state dict at 'models/bart.pth'"):
        engine.load()
    foreign = tmp_path / "foreign.pth"
    torch.save({"layer.weight": torch.zeros(2, 2)}, foreign)
    with pytest.raises(ValueError, match=r"does not fit the .* model"):
        engine.load(str(foreign))


def test_missing_checkpoint_offline_names_it(empty_hf_cache):
    with pytest.raises(
        bart_score.CheckpointNotFoundError,
        match=r"Cannot load the checkpoint "
        r"'facebook/bart-large-cnn'.*hf download",
    ):
        bart_score.BARTScorer(device="cpu")


def test_cnn_para_without_weights_says_what_is_missing(monkeypatch, tmp_path):
    monkeypatch.delenv("BARTSCORE_PARA_WEIGHTS", raising=False)
    with pytest.raises(bart_score.CheckpointNotFoundError, match=r"bart.pth .* set BARTSCORE_PARA_WEIGHTS"):
        bart_score.BARTScorer(checkpoint="cnn-para", device="cpu")
    monkeypatch.setenv("BARTSCORE_PARA_WEIGHTS", str(tmp_path / "nowhere.pth"))
    with pytest.raises(bart_score.CheckpointNotFoundError, match=r"no file is there"):
        bart_score.BARTScorer(checkpoint="cnn-para", device="cpu")


def test_variants_map_to_the_papers_checkpoints(monkeypatch, tmp_path):
    assert bart_score.resolve_checkpoint("vanilla") == ("facebook/bart-large", None)
    assert bart_score.resolve_checkpoint("cnn") == ("facebook/bart-large-cnn", None)
    assert bart_score.resolve_checkpoint("some/model") == ("some/model", None)
    weights = tmp_path / "bart.pth"
    weights.write_bytes(b"")
    monkeypatch.setenv("BARTSCORE_PARA_WEIGHTS", str(weights))
    assert bart_score.resolve_checkpoint("cnn-para") == ("facebook/bart-large-cnn", str(weights))


def test_a_checkpoint_of_an_unsupported_family_is_refused(tmp_path):
    from transformers import BertConfig

    BertConfig(num_hidden_layers=1, hidden_size=8, num_attention_heads=2, intermediate_size=8).save_pretrained(tmp_path)
    with pytest.raises(ValueError, match=r"is a 'bert' model, which cannot score text as generation: supported are"):
        bart_score.BARTScorer(checkpoint=str(tmp_path), device="cpu")


@pytest.mark.parametrize("call", ["score", "multi_ref_score", "score_tokens", "score_directions"])
def test_a_table_is_refused_by_every_scoring_function_never_read_as_its_column_names(scorer, call):
    import pandas as pd

    table = pd.DataFrame({"text_column": ["The cat sat.", "A dog ran.", "Rain."]})
    texts = ["A cat.", "A dog.", "Rain fell."]
    calls = {
        "score": lambda: scorer.score(table, texts),
        "multi_ref_score": lambda: scorer.multi_ref_score(texts, table),
        "score_tokens": lambda: scorer.score_tokens(texts, table),
        "score_directions": lambda: scorer.score_directions(texts, sources=table),
    }
    name = {"score": "srcs", "multi_ref_score": "tgts", "score_tokens": "tgts", "score_directions": "sources"}[call]
    with pytest.raises(TypeError, match=rf"{name} is a DataFrame, a table \(columns 'text_column'\); pass the column"):
        calls[call]()


def test_array_likes_are_scored_as_their_values(scorer, reference_model):
    import pyarrow as pa

    sources, targets = ["A cat.", "A dog sat.", "Rain."], ["The cat.", "Dogs.", "It rained all day."]
    expected = [reference_score(*reference_model, s, t) for s, t in zip(sources, targets)]
    assert scorer.score(pa.array(sources), np.array(targets, dtype=object)) == pytest.approx(expected, abs=TOLERANCE)
    got = scorer.multi_ref_score(np.array(sources), np.array([[t, t] for t in targets]))
    assert got == pytest.approx(expected, abs=TOLERANCE)
