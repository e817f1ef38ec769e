"""Baselines and score caches are keyed on the model's identity, not on the name the checkpoint was given: the same
model named another way matches, another model at the same name does not, and a checkpoint saved again (its weights,
its config or any tokenizer file) is new, even with its sizes and modification times set back; one merely touched is
the same. The signature names a local checkpoint by its real path."""

import json
import os
import shutil

import numpy as np
import pytest
from support.fast_subset import fast_cases
from support.models import tiny_checkpoint_for
from support.reference import seq2seq_score

import bart_score
from bart_score.baselines import files as baseline_files
from bart_score.baselines.build import build_baseline
from bart_score.models.checkpoints import locate_checkpoint, weights_identity
from bart_score.models.loading import checkpoint_identity
from bart_score.scoring.score_cache import ResumableScorer

TEXTS = ["The cat sat on the mat.", "Rain is expected in the north tomorrow.", "The team won the game.", "Good."]


def retrain_in_place(folder):
    """Writes other values into the folder's model.safetensors in place, as retraining would (the same tensors and
    shapes, so the same size), and sets its modification time back: only its bytes tell it apart."""
    import safetensors.torch

    weights = os.path.join(folder, "model.safetensors")
    before = os.stat(weights)
    tensors = safetensors.torch.load_file(weights)
    name = max(tensors, key=lambda key: tensors[key].numel())
    tensors[name] = tensors[name] * 2
    with safetensors.safe_open(weights, "pt") as handle:
        metadata = handle.metadata()
    safetensors.torch.save_file(tensors, weights, metadata=metadata)
    os.utime(weights, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(weights)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def touch(path):
    status = os.stat(path)
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns + 10**9))


def test_one_directory_named_three_ways_has_one_identity(copying_checkpoint, tmp_path, monkeypatch):
    link = tmp_path / "link"
    link.symlink_to(copying_checkpoint)
    monkeypatch.chdir(os.path.dirname(copying_checkpoint))
    relative = os.path.basename(copying_checkpoint)
    identity = checkpoint_identity(copying_checkpoint)
    assert identity == checkpoint_identity(relative) == checkpoint_identity(str(link))
    assert identity.startswith(f"dir:{os.path.realpath(copying_checkpoint)}#")


def test_another_model_at_the_same_name_or_a_checkpoint_saved_again_is_another_identity(
    copying_checkpoint, tiny_checkpoint, tmp_path, monkeypatch
):
    first, second = tmp_path / "first", tmp_path / "second"
    shutil.copytree(copying_checkpoint, first / "model")
    shutil.copytree(tiny_checkpoint, second / "model")
    monkeypatch.chdir(first)
    in_first = checkpoint_identity("model")
    monkeypatch.chdir(second)
    assert checkpoint_identity("model") != in_first  # `-m model` typed in two folders: two models
    # The same files copied elsewhere: another path, another identity.
    assert checkpoint_identity(str(first / "model")) != checkpoint_identity(copying_checkpoint)
    # Touched, or copied over with the same bytes: the same model.
    touch(first / "model" / "model.safetensors")
    assert checkpoint_identity(str(first / "model")) == in_first
    # Saved again in place (same names and sizes, as retraining gives), even with the old mtime: the bytes tell them
    # apart.
    retrain_in_place(first / "model")
    assert checkpoint_identity(str(first / "model")) != in_first
    # A changed config.json too.
    config = json.loads((second / "model" / "config.json").read_text())
    before = checkpoint_identity(str(second / "model"))
    (second / "model" / "config.json").write_text(json.dumps({**config, "dropout": 0.5}))
    assert checkpoint_identity(str(second / "model")) != before


def test_a_hub_id_is_named_with_its_cached_snapshot_commit(empty_hf_cache):
    assert checkpoint_identity("someone/some-model") == "hub:someone/some-model"
    commit = "0123456789abcdef0123456789abcdef01234567"
    snapshot = empty_hf_cache / "models--someone--some-model" / "snapshots" / commit
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (empty_hf_cache / "models--someone--some-model" / "refs").mkdir()
    (empty_hf_cache / "models--someone--some-model" / "refs" / "main").write_text(commit)
    assert checkpoint_identity("someone/some-model") == f"hub:someone/some-model@{commit}"
    assert checkpoint_identity("not a valid/repo/id") == "hub:not a valid/repo/id"


def test_weights_loaded_over_a_checkpoint_join_its_identity(copier, copying_checkpoint, tmp_path):
    path = tmp_path / "bart.pth"
    path.write_bytes(b"weights")
    identity = weights_identity(str(path))
    assert identity.startswith(f"weights:{os.path.realpath(path)}#")
    stamp = os.stat(path)
    path.write_bytes(b"WEIGHTS")  # the same size and mtime
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert weights_identity(str(path)) != identity
    path.write_bytes(b"weights")
    touch(path)
    assert weights_identity(str(path)) == identity
    assert copier.model_identity == checkpoint_identity(copying_checkpoint)


def _baseline(copier, tmp_path):
    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    document = build_baseline(copier, texts=TEXTS, corpus_file=str(texts), pairs=10)
    path = tmp_path / "base.json"
    baseline_files.write_baseline(document, str(path))
    return document, path


@pytest.mark.slow
def test_a_baseline_applies_to_its_model_named_any_way_and_to_no_other(
    copier, copying_checkpoint, tiny_checkpoint, tmp_path, monkeypatch
):
    document, path = _baseline(copier, tmp_path)
    assert document["settings"]["model"] == copier.model_identity
    monkeypatch.chdir(os.path.dirname(copying_checkpoint))
    renamed = bart_score.BARTScorer(checkpoint=os.path.basename(copying_checkpoint), device="cpu")
    result = renamed.score_directions(TEXTS[:2], sources=TEXTS[2:], baseline=str(path))
    assert f"rescale:baseline-{document['id']}" in result["signature"]
    assert result["signature"].startswith(f"ckpt:{os.path.realpath(copying_checkpoint)}|")

    other_folder = tmp_path / "other"
    shutil.copytree(tiny_checkpoint, other_folder / os.path.basename(copying_checkpoint))
    monkeypatch.chdir(other_folder)  # the same name, another model
    impostor = bart_score.BARTScorer(checkpoint=os.path.basename(copying_checkpoint), device="cpu")
    assert impostor.model_label == os.path.realpath(os.path.basename(copying_checkpoint)) != renamed.model_label
    with pytest.raises(bart_score.BaselineError, match=r"made with other settings \(model: the file has 'dir:"):
        impostor.score_directions(TEXTS[:2], sources=TEXTS[2:], baseline=str(path))


@pytest.mark.slow
def test_cli_a_baseline_of_another_model_at_the_same_name_is_refused(
    in_process, monkeypatch, copier, copying_checkpoint, tiny_checkpoint, tmp_path
):
    _, path = _baseline(copier, tmp_path)
    name = os.path.basename(copying_checkpoint)
    shutil.copytree(tiny_checkpoint, tmp_path / "other" / name)
    sources, outputs = tmp_path / "src.txt", tmp_path / "sys.txt"
    sources.write_text("\n".join(TEXTS[:2]) + "\n")
    outputs.write_text("\n".join(TEXTS[2:]) + "\n")
    arguments = ["score", "-m", name, "-s", str(sources), "-t", str(outputs), "--baseline", str(path), "-q"]
    monkeypatch.chdir(tmp_path / "other")
    code, _, stderr = in_process(*arguments)
    assert code == 2 and "made with other settings (model: the file has 'dir:" in stderr, stderr
    monkeypatch.chdir(os.path.dirname(copying_checkpoint))  # the model itself
    code, _, stderr = in_process(*arguments)
    assert code == 0, stderr


def test_a_baseline_written_before_identities_is_a_clear_mismatch(copier, tmp_path):
    document, path = _baseline(copier, tmp_path)
    document["settings"]["model"] = copier.model_label  # how files named the model before
    document["id"] = baseline_files.baseline_id(document)
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(bart_score.BaselineError, match=r"the file names the model as it was typed"):
        copier.score_directions(TEXTS[:2], sources=TEXTS[2:], baseline=str(path))


@pytest.mark.slow
def test_the_score_cache_never_answers_for_a_checkpoint_saved_again(copying_checkpoint, tmp_path):
    model = tmp_path / "model"
    shutil.copytree(copying_checkpoint, model)
    cache = str(tmp_path / "cache.jsonl")
    first = ResumableScorer(bart_score.BARTScorer(checkpoint=str(model), device="cpu"), cache)
    first.score(TEXTS[:2], TEXTS[2:])
    assert first.scored_pairs == 2
    again = ResumableScorer(bart_score.BARTScorer(checkpoint=str(model), device="cpu"), cache)
    again.score(TEXTS[:2], TEXTS[2:])
    assert again.cached_pairs == 2 and again.scored_pairs == 0
    for name in os.listdir(model):  # touched: the same model, whose scores are still the cache's
        touch(model / name)
    touched = ResumableScorer(bart_score.BARTScorer(checkpoint=str(model), device="cpu"), cache)
    touched.score(TEXTS[:2], TEXTS[2:])
    assert touched.cached_pairs == 2 and touched.scored_pairs == 0
    retrain_in_place(model)  # saved again: the same names, sizes and times, other weights
    retrained = ResumableScorer(bart_score.BARTScorer(checkpoint=str(model), device="cpu"), cache)
    retrained.score(TEXTS[:2], TEXTS[2:])
    assert retrained.cached_pairs == 0 and retrained.scored_pairs == 2


@pytest.mark.slow
def test_the_signature_names_a_local_directory_by_its_real_path_and_a_hub_id_as_it_is(
    copier, copying_checkpoint, tmp_path, monkeypatch
):
    """`ckpt:./tiny` and `ckpt:/abs/tiny` for one model would read as two models: the signature names the folder
    once, by its real absolute path, however it was typed."""
    link = tmp_path / "link"
    link.symlink_to(copying_checkpoint)
    monkeypatch.chdir(os.path.dirname(copying_checkpoint))
    names = [copying_checkpoint, f"./{os.path.basename(copying_checkpoint)}", str(link), f"{link}/"]
    signatures = {
        bart_score.BARTScorer(checkpoint=name, device="cpu")
        .score_directions(TEXTS[:1], sources=TEXTS[1:2])["signature"]
        .split("|")[0]
        for name in names
    }
    assert signatures == {f"ckpt:{os.path.realpath(copying_checkpoint)}"}
    assert copier.model_label == os.path.realpath(copying_checkpoint)
    assert locate_checkpoint("facebook/bart-large-cnn").label == "facebook/bart-large-cnn"
    assert locate_checkpoint("someone/some-model").label == "someone/some-model"


@pytest.fixture(scope="module")
def tokenizer_file_names():
    """Every file a tokenizer is read from, as transformers names them: each tokenizer class's vocab_files_names, the
    files every tokenizer reads beside them, and a chat template in the templates folder."""
    from transformers import tokenization_utils_base as base
    from transformers.models.auto.tokenization_auto import TOKENIZER_MAPPING_NAMES, tokenizer_class_from_name

    names = {
        base.ADDED_TOKENS_FILE,
        base.SPECIAL_TOKENS_MAP_FILE,
        base.TOKENIZER_CONFIG_FILE,
        base.FULL_TOKENIZER_FILE,
        base.CHAT_TEMPLATE_FILE,
        f"{base.CHAT_TEMPLATE_DIR}/tool_use.jinja",
    }
    for classes in TOKENIZER_MAPPING_NAMES.values():
        for class_name in classes if isinstance(classes, (tuple, list)) else [classes]:
            tokenizer_class = tokenizer_class_from_name(class_name) if class_name else None
            names.update(getattr(tokenizer_class, "vocab_files_names", {}).values())
    assert {"vocab.json", "merges.txt", "spiece.model", "source.spm", "tokenizer.model"} <= names
    return sorted(names)


@pytest.mark.slow
def test_every_kind_of_tokenizer_file_is_part_of_the_identity(copying_checkpoint, tokenizer_file_names, tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(copying_checkpoint, folder)
    initial = checkpoint_identity(str(folder))
    for name in tokenizer_file_names:
        path = folder / name
        path.parent.mkdir(exist_ok=True)
        original = path.read_bytes() if path.exists() else None
        path.write_bytes(b"one version.")
        first = checkpoint_identity(str(folder))
        stamp = os.stat(path)
        path.write_bytes(b"two version.")  # the same size, and the same mtime put back: told apart by the bytes
        os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
        second = checkpoint_identity(str(folder))
        assert len({initial, first, second}) == 3, name
        if original is None:
            path.unlink()
        else:
            path.write_bytes(original)
        assert checkpoint_identity(str(folder)) == initial, name
    # Files no tokenizer reads (notes, outputs written beside the model) leave it alone, so that a cache or output
    # kept in the model's folder does not make the model another one.
    for name in ("README.md", "scores.jsonl", "notes.txt", "generation_config.json"):
        (folder / name).write_text("written beside the model\n", encoding="utf-8")
        assert checkpoint_identity(str(folder)) == initial, name


def _swap_two_vocabulary_entries(vocabulary, tokenizer, text):
    """Gives the first two distinct ordinary tokens of `text` each other's ids in `vocabulary` (token -> id)."""
    specials = set(tokenizer.all_special_tokens)
    pieces = [piece for piece in tokenizer.tokenize(text) if piece not in specials]
    first, second = pieces[0], next(piece for piece in pieces if piece != pieces[0])
    vocabulary[first], vocabulary[second] = vocabulary[second], vocabulary[first]


def _reference(folder):
    """The plain reference scorer on the folder's model and tokenizer, loaded apart from the engine."""
    from support.models import load_tiny

    model, tokenizer = load_tiny(folder)
    return lambda condition, target: seq2seq_score(model, tokenizer, condition, target)


@pytest.fixture(scope="module")
def marian_checkpoint(tmp_path_factory):
    """A tiny Marian checkpoint: its tokenizer is read from vocab.json and two sentencepiece models, not from a
    tokenizer.json."""
    return tiny_checkpoint_for(tmp_path_factory, "marian")


@pytest.mark.parametrize(
    "kind", fast_cases(["tokenizer.json of a BART", "vocab.json of a Marian"], ["tokenizer.json of a BART"])
)
def test_a_tokenizer_changed_in_place_gets_no_cached_scores_and_no_stale_baseline(
    kind, copying_checkpoint, marian_checkpoint, tmp_path
):
    source = copying_checkpoint if kind.endswith("BART") else marian_checkpoint
    model = tmp_path / "model"
    shutil.copytree(source, model)
    cache = str(tmp_path / "cache.jsonl")
    before = bart_score.BARTScorer(checkpoint=str(model), device="cpu")
    old = ResumableScorer(before, cache).score(TEXTS[:2], TEXTS[2:])
    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    document = build_baseline(before, texts=TEXTS, corpus_file=str(texts), pairs=10)
    baseline = tmp_path / "base.json"
    baseline_files.write_baseline(document, str(baseline))

    file_name = "tokenizer.json" if kind.startswith("tokenizer.json") else "vocab.json"
    content = json.loads((model / file_name).read_text(encoding="utf-8"))
    vocabulary = content["model"]["vocab"] if file_name == "tokenizer.json" else content
    _swap_two_vocabulary_entries(vocabulary, before.tokenizer, " ".join(TEXTS))
    stamp = os.stat(model / file_name)
    (model / file_name).write_text(json.dumps(content, ensure_ascii=False), encoding="utf-8")
    os.utime(model / file_name, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))  # even with its old mtime

    reference = _reference(str(model))
    truth = [reference(c, t) for c, t in zip(TEXTS[:2], TEXTS[2:])]
    assert not np.allclose(truth, old, atol=1e-3)  # the swap changed the true scores
    after = ResumableScorer(bart_score.BARTScorer(checkpoint=str(model), device="cpu"), cache)
    assert np.allclose(after.score(TEXTS[:2], TEXTS[2:]), truth, atol=1e-5)
    assert after.cached_pairs == 0 and after.scored_pairs == 2
    with pytest.raises(bart_score.BaselineSettingsError, match=r"made with other settings \(model: the file has"):
        after.scorer.score_directions(TEXTS[:2], sources=TEXTS[2:], baseline=str(baseline))


@pytest.mark.parametrize("hostile", ["/dev/zero", "fifo", "nothing"], ids=["device", "pipe", "dangling-link"])
def test_a_weights_file_that_is_not_a_file_is_refused_before_it_is_read(hostile, tiny_checkpoint, tmp_path):
    """The identity reads every weights file's bytes: a device would be read forever, a pipe waited on. Each is
    refused at once, naming the file (the call runs in a thread given 60 s, so that a regression fails)."""
    import threading

    folder = shutil.copytree(tiny_checkpoint, tmp_path / "model")
    weights = folder / "model.safetensors"
    weights.unlink()
    if hostile == "fifo":
        os.mkfifo(weights)
    else:
        weights.symlink_to(hostile if hostile.startswith("/") else tmp_path / hostile)
    outcome = []
    worker = threading.Thread(target=lambda: outcome.append(_raised(checkpoint_identity, str(folder))), daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert outcome, "the identity was still reading after 60 s"
    (error,) = outcome
    assert isinstance(error, bart_score.CheckpointLoadError), error
    assert "the weights file model.safetensors of " in str(error) and str(folder) in str(error)
    assert ("is not there" if hostile == "nothing" else "is not a regular file") in str(error)


def _raised(call, *arguments):
    try:
        call(*arguments)
    except Exception as error:  # the error is what the test looks at
        return error
    return None
