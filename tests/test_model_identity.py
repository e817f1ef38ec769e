"""Baselines and score caches are keyed on the model's identity, not on the name the checkpoint was given: the same
model named another way matches, another model at the same name does not, and a checkpoint saved again is new."""

import json
import os
import shutil

import pytest
from test_cli import run_cli

import bart_score
from bart_score import baseline_files, baselines
from bart_score.models import checkpoint_identity, weights_identity
from bart_score.score_cache import ResumableScorer

TEXTS = ["The cat sat on the mat.", "Rain is expected in the north tomorrow.", "The team won the game.", "Good."]


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
    # Saved again in place (same names and sizes, as retraining gives): the modification time tells them apart.
    weights = next(name for name in os.listdir(first / "model") if name.endswith((".safetensors", ".bin")))
    stat = os.stat(first / "model" / weights)
    os.utime(first / "model" / weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
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
    path.write_bytes(b"other weights")
    assert weights_identity(str(path)) != identity
    assert copier.model_identity == checkpoint_identity(copying_checkpoint)


def _baseline(copier, tmp_path):
    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    document = baselines.build_baseline(copier, texts=TEXTS, corpus_file=str(texts), pairs=10)
    path = tmp_path / "base.json"
    baseline_files.write_baseline(document, str(path))
    return document, path


def test_a_baseline_applies_to_its_model_named_any_way_and_to_no_other(
    copier, copying_checkpoint, tiny_checkpoint, tmp_path, monkeypatch
):
    document, path = _baseline(copier, tmp_path)
    assert document["settings"]["model"] == copier.model_identity
    monkeypatch.chdir(os.path.dirname(copying_checkpoint))
    renamed = bart_score.BARTScorer(checkpoint=os.path.basename(copying_checkpoint), device="cpu")
    assert renamed.model_label != copier.model_label
    result = renamed.score_directions(TEXTS[:2], sources=TEXTS[2:], baseline=str(path))
    assert f"rescale:baseline-{document['id']}" in result["signature"]
    assert f"ckpt:{renamed.model_label}|" in result["signature"]  # the signature keeps the name as given

    other_folder = tmp_path / "other"
    shutil.copytree(tiny_checkpoint, other_folder / os.path.basename(copying_checkpoint))
    monkeypatch.chdir(other_folder)  # the same name, another model
    impostor = bart_score.BARTScorer(checkpoint=os.path.basename(copying_checkpoint), device="cpu")
    assert impostor.model_label == renamed.model_label
    with pytest.raises(bart_score.BaselineError, match=r"made with other settings \(model: the file has 'dir:"):
        impostor.score_directions(TEXTS[:2], sources=TEXTS[2:], baseline=str(path))


def test_cli_a_baseline_of_another_model_at_the_same_name_is_refused(
    copier, copying_checkpoint, tiny_checkpoint, tmp_path
):
    _, path = _baseline(copier, tmp_path)
    name = os.path.basename(copying_checkpoint)
    shutil.copytree(tiny_checkpoint, tmp_path / "other" / name)
    sources, outputs = tmp_path / "src.txt", tmp_path / "sys.txt"
    sources.write_text("\n".join(TEXTS[:2]) + "\n")
    outputs.write_text("\n".join(TEXTS[2:]) + "\n")
    arguments = ["score", "-m", name, "-s", str(sources), "-t", str(outputs), "--baseline", str(path), "-q"]
    code, _, stderr = run_cli(*arguments, cwd=str(tmp_path / "other"))
    assert code == 2 and "made with other settings (model: the file has 'dir:" in stderr, stderr
    code, _, stderr = run_cli(*arguments, cwd=os.path.dirname(copying_checkpoint))  # the model itself
    assert code == 0, stderr


def test_a_baseline_written_before_identities_is_a_clear_mismatch(copier, tmp_path):
    document, path = _baseline(copier, tmp_path)
    document["settings"]["model"] = copier.model_label  # how files named the model before
    document["id"] = baseline_files.baseline_id(document)
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(bart_score.BaselineError, match=r"the file names the model as it was typed"):
        copier.score_directions(TEXTS[:2], sources=TEXTS[2:], baseline=str(path))


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
    for name in os.listdir(model):  # saved again: the same names and sizes, later times
        stat = os.stat(model / name)
        os.utime(model / name, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    retrained = ResumableScorer(bart_score.BARTScorer(checkpoint=str(model), device="cpu"), cache)
    retrained.score(TEXTS[:2], TEXTS[2:])
    assert retrained.cached_pairs == 0 and retrained.scored_pairs == 2
