"""Baseline files: their figures equal plain-loop statistics, they survive a round trip, a file made with other
settings (or edited) is refused with the setting named, a missing one is answered with the command that makes it,
the command line (`baseline`, `score --rescale`, `compare --rescale`) agrees with the library, and less than was asked
(fewer reference pairs than requested, points too close together to make a scale) is said and recorded."""

import itertools
import json
import re
import shlex
import warnings

import numpy as np
import pytest
from support.cli import run_cli, tsv_scores
from support.reference import prompted_score, reference_score

import bart_score
from bart_score.baselines import files as baseline_files
from bart_score.baselines import rescale
from bart_score.baselines.build import build_baseline
from bart_score.cli import main
from bart_score.cli._wording import baseline_command_from
from bart_score.errors import FewerReferencePairsWarning
from bart_score.messages import FileName, Mention, Recipe

TEXTS = [
    "The cat sat on the mat.",
    "Rain is expected in the north tomorrow.",
    "The team won the game last week after a long season.",
    "Good.",
    "A report says the market was high.",
]


@pytest.fixture
def baselines(tmp_path, monkeypatch):
    """An empty default baseline folder, for this process and the command lines it runs."""
    folder = tmp_path / "baselines"
    monkeypatch.setenv(baseline_files.BASELINE_FOLDER_ENV, str(folder))
    return folder


@pytest.fixture
def texts_file(tmp_path):
    path = tmp_path / "texts.txt"
    path.write_text("\n".join(TEXTS[:2]) + "\n\n" + "\n".join(TEXTS[2:]) + "\n", encoding="utf-8")  # one blank line
    return str(path)


def built(scorer, texts_file, **options):
    return build_baseline(scorer, texts=TEXTS, corpus_file=texts_file, **options)


@pytest.mark.slow
def test_baseline_figures_are_plain_statistics_of_every_pair(copier, copier_reference_model, texts_file):
    document = built(copier, texts_file, pairs=1000)  # every pair of 5 texts fits: the figures are exact
    unrelated = [reference_score(*copier_reference_model, c, t) for c, t in itertools.permutations(TEXTS, 2)]
    copies = [reference_score(*copier_reference_model, t, t) for t in TEXTS]
    assert list(document["directions"]) == ["faithfulness", "precision", "recall"]
    for direction in document["directions"].values():
        for figures, scores in ((direction["unrelated"], unrelated), (direction["copy"], copies)):
            assert figures["pairs"] == len(scores)
            assert figures["mean"] == pytest.approx(np.mean(scores), abs=1e-5)
            assert figures["std"] == pytest.approx(np.std(scores, ddof=1), abs=1e-5)
            assert list(figures["quantiles"]) == ["0.05", "0.25", "0.5", "0.75", "0.95"]
            assert list(figures["quantiles"].values()) == pytest.approx(
                np.quantile(scores, [0.05, 0.25, 0.5, 0.75, 0.95]), abs=1e-5
            )
    # Targets by length in words: "Good." has 1, three have 6 or 7, one has 11.
    copy_buckets = document["directions"]["recall"]["copy"]["by_target_words"]
    assert [(b["words"], b["pairs"]) for b in copy_buckets] == [("1-5", 1), ("6-10", 3), ("11-20", 1)]
    assert copy_buckets[0]["mean"] == pytest.approx(copies[3], abs=1e-5)
    assert document["settings"] == {
        "model": copier.model_identity,
        "token_policy": "bart",
        "prompt": "none",
        "max_length": 1024,
    }
    assert document["corpus"]["kind"] == "plain text" and len(document["corpus"]["sha256"]) == 64
    assert document["sampling"] == {
        "pairs": 1000,
        "pairs_scored": len(unrelated) + len(copies),
        "seed": rescale.DEFAULT_SEED,
    }
    assert document["made_with"]["bart_score"] == bart_score.__version__
    assert "rescaled = (score - unrelated.mean) / (copy.mean - unrelated.mean)" in document["about"]


def test_a_table_corpus_gives_each_direction_its_roles(copier, copier_reference_model, tmp_path):
    path = tmp_path / "table.jsonl"
    rows = [
        {"source": TEXTS[0], "reference": TEXTS[1], "sys": TEXTS[3]},
        {"source": TEXTS[2], "reference": TEXTS[4], "sys": "A cat."},
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    corpus = bart_score.read_table_corpus(str(path))
    document = build_baseline(copier, corpus=corpus, corpus_file=str(path), prompt="mt")
    prompts = bart_score.PROMPT_SETS["mt"]

    def mean(pairs):
        return np.mean([prompted_score(*copier_reference_model, c, t, prompts, "encoder") for c, t in pairs])

    recall = document["directions"]["recall"]
    assert recall["unrelated"]["mean"] == pytest.approx(mean([(TEXTS[3], TEXTS[4]), ("A cat.", TEXTS[1])]), abs=1e-5)
    assert recall["copy"]["mean"] == pytest.approx(mean([(TEXTS[1], TEXTS[1]), (TEXTS[4], TEXTS[4])]), abs=1e-5)
    faithfulness = document["directions"]["faithfulness"]
    assert faithfulness["unrelated"]["mean"] == pytest.approx(mean([(TEXTS[2], TEXTS[3]), (TEXTS[0], "A cat.")]), 1e-5)
    assert document["settings"]["prompt"] == "mt(1)@encoder"
    assert document["corpus"] == {**document["corpus"], "kind": "table", "rows": 2, "systems": ["sys"]}


@pytest.mark.slow
def test_baseline_files_survive_a_round_trip_and_rescale_like_their_points(copier, texts_file, tmp_path):
    document = built(copier, texts_file, pairs=12, seed=3)
    assert built(copier, texts_file, pairs=12, seed=3)["id"] == document["id"]  # the same inputs, the same file
    assert built(copier, texts_file, pairs=12, seed=4)["id"] != document["id"]
    path = str(tmp_path / "base.json")
    baseline_files.write_baseline(document, path)
    loaded = baseline_files.load_baseline(path)
    assert loaded.document == document and loaded.id == document["id"]
    for direction, point in loaded.points.items():
        assert point.unrelated == document["directions"][direction]["unrelated"]["mean"]
        assert point.copy == document["directions"][direction]["copy"]["mean"]
    predictions, references = TEXTS[:2], [TEXTS[2], TEXTS[3]]
    result = copier.score_directions(predictions, references, baseline=path)
    points = rescale.with_f_score(loaded.points)
    for direction in ("precision", "recall", "f_score"):
        expected = (np.array(result[direction]) - points[direction].unrelated) / (
            points[direction].copy - points[direction].unrelated
        )
        assert result[f"{direction}_rescaled"] == pytest.approx(expected.tolist(), abs=1e-12)
        assert result["reference_points"][direction] == {
            "unrelated": points[direction].unrelated,
            "copy": points[direction].copy,
        }
    assert f"|rescale:baseline-{document['id']}|" in result["signature"]


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(prompt="summary"), "prompt setting: the file has 'none', this call uses 'summary(70)@encoder'"),
        (dict(max_length=512), "max_length: the file has 1024, this call uses 512"),
        (dict(model="tiny"), "model: the file has '{copier}', this call uses '{tiny}'"),
    ],
)
def test_a_baseline_made_with_other_settings_is_refused_naming_the_setting(
    copier, scorer, copying_checkpoint, texts_file, tmp_path, change, message
):
    path = str(tmp_path / "base.json")
    baseline_files.write_baseline(built(copier, texts_file, pairs=10), path)
    user = copier
    if "max_length" in change:
        user = bart_score.BARTScorer(checkpoint=copying_checkpoint, device="cpu", max_length=512)
    elif "model" in change:
        user = scorer
    prompt = change.get("prompt")
    with pytest.raises(bart_score.BaselineError) as raised:
        user.score_directions(TEXTS[:2], sources=TEXTS[2:4], prompt=prompt, baseline=path)
    text = str(raised.value)
    assert message.format(copier=copier.model_identity, tiny=scorer.model_identity) in text
    assert FileName(path) in raised.value.parts  # the file, which the Space does not show
    (setting,) = change
    assert baseline_files.SETTING_NAMES[setting] in raised.value.parts  # max_length as a Mention
    (recipe,) = [part for part in raised.value.remedy if isinstance(part, Recipe)]
    prompted = {"prompt": prompt, "prompt_side": "encoder"} if prompt else {}
    assert recipe.settings == {"checkpoint": user.model_label, **prompted, "max_length": user.max_length, "path": path}
    assert "; make one for these settings:\n    bart_score.build_baseline and bart_score.write_baseline with " in text
    assert baseline_command_from(recipe).startswith(f"bartscore baseline -m {user.model_label} --corpus TEXTS.txt")


def test_the_settings_a_baseline_was_made_with_are_compared_as_data():
    settings = {"model": "cnn", "token_policy": "seq2seq", "prompt": "none", "max_length": 1024}
    baseline = baseline_files.Baseline("/b.json", {"settings": settings})
    call = {"model": "cnn", "prompt": "mt(1)@encoder", "max_length": 512}
    mismatches = baseline.mismatches(call)
    assert mismatches == [("prompt", "none", "mt(1)@encoder"), ("max_length", 1024, 512)]
    assert [mismatch.setting for mismatch in mismatches] == ["prompt", "max_length"]
    assert baseline_files.mismatch_parts(mismatches) == [
        "prompt setting",
        ": the file has 'none', this call uses 'mt(1)@encoder'",
        "; ",
        Mention("max_length"),
        ": the file has 1024, this call uses 512",
    ]
    (model,) = baseline.mismatches({"model": "dir:/models/cnn#0123"})  # a file made before models had identities
    assert "the file names the model as it was typed" in "".join(map(str, baseline_files.mismatch_parts([model])))


def test_broken_edited_or_incomplete_baselines_are_refused(copier, texts_file, tmp_path):
    document = built(copier, texts_file, pairs=10, directions=["faithfulness"])
    path = tmp_path / "base.json"

    def refused(content, message):
        path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
        with pytest.raises(bart_score.BaselineError, match=message):
            copier.score_directions(TEXTS[:2], references=TEXTS[2:4], sources=TEXTS[2:4], baseline=str(path))

    refused("{not json", r"is not valid JSON")
    refused({"format": "something else"}, r"is not a baseline file \(its format is not 'bartscore-baseline'\)")
    refused({**document, "format_version": 99}, "is a version 99 baseline file; this bart_score reads version 1")
    edited = json.loads(json.dumps(document))
    edited["directions"]["faithfulness"]["copy"]["mean"] = 0.0
    refused(edited, "does not match its id .*: it was changed after it was written; make it again rather than editing")
    incomplete = {key: value for key, value in document.items() if key != "settings"}
    refused(incomplete, r"is not a complete baseline file: settings is missing")
    refused(document, r"has no reference points for precision, recall \(it has faithfulness\)")
    missing = r"no baseline file at .*nowhere\.json'; make it with:\n"
    with pytest.raises(bart_score.BaselineNotFoundError, match=missing) as raised:
        copier.score_directions(TEXTS[:2], sources=TEXTS[2:4], baseline=str(tmp_path / "nowhere.json"))
    assert raised.value.parts == ("no baseline file at ", FileName(str(tmp_path / "nowhere.json")))
    assert raised.value.remedy[-1].settings["path"] == str(tmp_path / "nowhere.json")


def _malformed(document, change):
    """A copy of `document` with `change(copy)` applied and its id recomputed, so that only the structure is wrong."""
    copy = json.loads(json.dumps(document))
    change(copy)
    copy["id"] = baseline_files.baseline_id(copy)
    return copy


def _setter(*keys, value):
    def change(document):
        target = document
        for key in keys[:-1]:
            target = target[key]
        if value is _DELETE:
            del target[keys[-1]]
        else:
            target[keys[-1]] = value

    return change


_DELETE = object()
MALFORMED = [
    (("directions",), [], r"directions must be a mapping \(a JSON object\), got a list \[\]"),
    (("directions",), "faithfulness", r"directions must be a mapping \(a JSON object\), got a string"),
    (("directions",), {}, r"directions has no directions"),
    (("directions", "faithfulness"), [1, 2], r"directions\.faithfulness must be a mapping .* got a list"),
    (("directions", "faithfulness", "copy"), None, r"directions\.faithfulness\.copy must be a mapping .* got null"),
    (("directions", "faithfulness", "unrelated"), _DELETE, r"directions\.faithfulness\.unrelated is missing"),
    (("directions", "faithfulness", "copy", "mean"), _DELETE, r"directions\.faithfulness\.copy\.mean is missing"),
    (("directions", "faithfulness", "copy", "mean"), float("nan"), r"copy\.mean must be a finite number, got .*nan"),
    (("directions", "faithfulness", "copy", "mean"), float("inf"), r"copy\.mean must be a finite number, got .*inf"),
    (("directions", "faithfulness", "copy", "mean"), True, r"copy\.mean must be a finite number, got a boolean"),
    (
        ("directions", "faithfulness", "unrelated", "mean"),
        "-3.5",
        r"unrelated\.mean must be a finite number, got a str",
    ),
    (("directions", "faithfulness", "unrelated", "mean"), [-3.5], r"unrelated\.mean must be a finite number, got a li"),
    (("settings",), ["model"], r"settings must be a mapping \(a JSON object\), got a list"),
    (("settings", "model"), _DELETE, r"settings\.model is missing"),
    (("settings", "model"), 7, r"settings\.model must be a non-empty string, got a number 7"),
    (("settings", "prompt"), None, r"settings\.prompt must be a non-empty string, got null"),
    (("settings", "token_policy"), {"a": 1}, r"settings\.token_policy must be a non-empty string, got an object"),
    (("settings", "max_length"), True, r"settings\.max_length must be an integer, got a boolean True"),
    (("settings", "max_length"), "1024", r"settings\.max_length must be an integer, got a string '1024'"),
    (("settings", "max_length"), 1024.0, r"settings\.max_length must be an integer, got a number 1024\.0"),
    (("directions", "fluency"), {}, r"directions\.fluency is not a direction with reference points"),
]


@pytest.mark.parametrize("keys, value, message", MALFORMED)
def test_a_malformed_baseline_is_refused_naming_the_field(copier, texts_file, tmp_path, keys, value, message):
    document = _malformed(built(copier, texts_file, pairs=10), _setter(*keys, value=value))
    path = tmp_path / "base.json"
    path.write_text(json.dumps(document), encoding="utf-8")  # NaN and Infinity as Python's json writes them
    whole = "is not a complete baseline file: (directions.faithfulness.)?" + message
    with pytest.raises(bart_score.BaselineError, match=whole):
        baseline_files.load_baseline(str(path))
    with pytest.raises(bart_score.BaselineError, match=message):  # the library's baseline=, not a crash
        copier.score_directions(TEXTS[:2], references=TEXTS[2:4], sources=TEXTS[2:4], baseline=str(path))


@pytest.mark.slow
@pytest.mark.parametrize("keys, value, message", [MALFORMED[0], MALFORMED[7], MALFORMED[10], MALFORMED[17]])
def test_cli_a_malformed_baseline_is_a_usage_error(copier, texts_file, tmp_path, keys, value, message):
    path = tmp_path / "base.json"
    path.write_text(json.dumps(_malformed(built(copier, texts_file, pairs=10), _setter(*keys, value=value))))
    code, stdout, stderr = run_cli(
        "score", "-m", str(tmp_path / "no-model"), "-s", texts_file, "-t", texts_file, "--baseline", str(path)
    )
    assert code == 2 and stdout == "", stderr
    assert re.search(message, stderr) and "Traceback" not in stderr, stderr


@pytest.mark.slow
def test_a_missing_baseline_error_gives_the_command_that_makes_it(
    in_process, copier, baselines, texts_file, monkeypatch
):
    calls = []
    with monkeypatch.context() as patch, pytest.raises(bart_score.BaselineNotFoundError) as raised:
        patch.setattr(copier, "score", lambda *args, **kwargs: calls.append(args))
        copier.score_directions(TEXTS[:2], sources=TEXTS[2:4], prompt=["In short"], rescale="baseline")
    assert calls == []  # found missing before any scoring
    (recipe,) = [part for part in raised.value.remedy if isinstance(part, Recipe)]
    assert raised.value.option == "rescale" and raised.value.remedy[-1] == Mention("rescale", "corpus")
    words = shlex.split(baseline_command_from(recipe))
    assert words[:6] == ["bartscore", "baseline", "-m", copier.model_label, "--corpus", "TEXTS.txt"]
    assert words[6:9] == ["--prompt-phrases", "In short", "--prompt-side"]
    assert words[-2] == "-o" and words[-1].startswith(str(baselines))
    assert str(raised.value).endswith("take the reference points from the texts being scored: rescale='corpus'")
    assert "chat" not in str(raised.value)

    words[5] = texts_file
    code, stdout, stderr = in_process(*words[1:], "-q", "--pairs", "20")
    assert code == 0, stderr
    assert "1 blank line(s) of" in stderr and f"written to {words[-1]}" in stdout
    result = copier.score_directions(TEXTS[:2], sources=TEXTS[2:4], prompt=["In short"], rescale="baseline")
    same = copier.score_directions(TEXTS[:2], sources=TEXTS[2:4], prompt=["In short"], baseline=words[-1])
    assert result == same and "|rescale:baseline-" in result["signature"]


@pytest.mark.slow
def test_cli_score_and_compare_agree_with_the_library(
    in_process, copier, copying_checkpoint, baselines, texts_file, tmp_path
):
    table = tmp_path / "outputs.csv"
    table.write_text(
        "source,reference,good,bad\n"
        + "".join(f'"{TEXTS[i]}","{TEXTS[(i + 1) % 5]}","{TEXTS[i]}","{TEXTS[(i + 2) % 5]}"\n' for i in range(5)),
        encoding="utf-8",
    )
    code, stdout, stderr = in_process(
        "baseline", "-m", copying_checkpoint, "--corpus", texts_file, "-q", "--pairs", "30"
    )
    assert code == 0, stderr
    assert re.search(r"faithfulness +-\d+\.\d{4} \(\d+\.\d{4}\) +-\d+\.\d{4} \(\d+\.\d{4}\)", stdout)
    corpus = bart_score.read_table_corpus(str(table))

    code, stdout, stderr = in_process("score", "-m", copying_checkpoint, "-i", str(table), "-q", "--rescale")
    assert code == 0, stderr
    header, rows = tsv_scores(stdout)
    assert header[2:4] == ["faithfulness", "faithfulness_rescaled"] and len(header) == 10
    per_system, signature = bart_score.score_corpus(copier, corpus, rescale="baseline")
    for name in ("good", "bad"):
        shown = [row for row in rows if row["system"] == name]
        for key in header[2:]:
            assert [float(row[key]) for row in shown] == pytest.approx(per_system[name][key], abs=2e-6), key
    assert f"signature: {signature}" in stderr

    code, stdout, stderr = in_process(
        "compare", "-m", copying_checkpoint, "-i", str(table), "-q", "--json", "--rescale", "corpus", "-d", "recall"
    )
    assert code == 0, stderr
    shown = json.loads(stdout)
    per_system, signature = bart_score.score_corpus(copier, corpus, directions=["recall"], rescale="corpus")
    assert shown["signature"] == signature and "|rescale:corpus-" in signature
    assert list(shown["directions"]) == ["recall", "recall_rescaled"]
    means = [s["mean"] for s in shown["directions"]["recall_rescaled"]["systems"]]
    assert means == pytest.approx([np.mean(per_system[n]["recall_rescaled"]) for n in ("good", "bad")], abs=1e-5)
    raw, rescaled = shown["directions"]["recall"]["pairs"][0], shown["directions"]["recall_rescaled"]["pairs"][0]
    assert (rescaled["winner"], rescaled["bootstrap_p"]) == (raw["winner"], raw["bootstrap_p"])


@pytest.mark.slow
@pytest.mark.parametrize(
    "arguments, message",
    [
        (
            ["--rescale", "corpus", "--baseline", "b.json"],
            "--rescale corpus takes its reference points from the texts being scored, and cannot be combined",
        ),
        (["--rescale-pairs", "10"], "--rescale-pairs is for --rescale corpus only"),
        (["--rescale", "corpus", "--rescale-pairs", "0"], "--rescale-pairs must be a positive integer, got 0"),
        (["--baseline", "{missing}"], "no baseline file at '?{missing}"),
        (["--baseline", "{texts}"], r"is not valid JSON"),
        (["--baseline", "{base}", "-p", "mt"], r"prompt setting: the file has 'none', this call uses 'mt\(1\)@"),
    ],
)
def test_cli_rescale_mistakes_are_usage_errors_found_before_loading(copier, texts_file, tmp_path, arguments, message):
    base = str(tmp_path / "base.json")
    baseline_files.write_baseline(built(copier, texts_file, pairs=10), base)
    names = {"missing": str(tmp_path / "missing.json"), "texts": texts_file, "base": base}
    arguments = [argument.format(**names) for argument in arguments]
    code, _, stderr = run_cli("score", "-m", str(tmp_path / "no-model"), "-s", texts_file, "-t", texts_file, *arguments)
    assert code == 2, stderr
    assert re.search(message.format(**names), stderr), stderr


@pytest.mark.slow
@pytest.mark.parametrize("command", ["score", "compare"])
@pytest.mark.parametrize(
    "inputs",
    [
        {"-s": ["The cat sat."], "-t": [["A cat."], ["A dog."]]},  # one segment
        {"-s": ["One source."] * 3, "-t": [["a", "b", "c"], ["d", "e", "f"]]},  # every row shares its source
        {"-r": ["One reference."] * 2, "-t": [["a", "b"], ["c", "d"]]},
    ],
)
def test_cli_rescale_corpus_of_one_document_is_a_usage_error_before_loading(tmp_path, command, inputs):
    arguments = []
    for flag, content in inputs.items():
        files = content if flag == "-t" else [content]
        arguments.append(flag)
        for number, lines in enumerate(files):
            path = tmp_path / f"{flag[1]}{number}.txt"
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            arguments.append(str(path))
    rows = len(inputs["-t"][0])
    code, stdout, stderr = run_cli(command, "-m", str(tmp_path / "no-model"), *arguments, "--rescale", "corpus")
    assert code == 2 and stdout == "", stderr
    counted = "the 1 row is" if rows == 1 else f"all {rows} rows are"
    assert f"--rescale corpus needs unrelated pairs, from different documents, but {counted} one document" in stderr
    assert "--rescale baseline" in stderr and "--baseline FILE" in stderr
    assert "unrelated_texts" not in stderr and "no-model" not in stderr  # the CLI has no such option; nothing loaded


@pytest.mark.slow
@pytest.mark.parametrize(
    "corpus, arguments, message",
    [
        ("one.txt", [], "unrelated pairs need at least two different texts"),
        ("texts.txt", ["--aggregation", "max"], "--aggregation does not apply to a baseline"),
        ("texts.txt", ["--system-columns", "a"], "--system-columns are for .csv/.jsonl corpora"),
        ("texts.txt", ["--pairs", "0"], "--pairs must be a positive integer"),
        ("same.csv", [], "are one document (rows that share a source or a reference are one document); make it from"),
        ("empty.txt", [], "has no text: it is empty or blank"),
    ],
)
def test_cli_baseline_mistakes_are_usage_errors(tmp_path, texts_file, corpus, arguments, message):
    files = {
        "one.txt": "Same text.\nSame text.\n",
        "same.csv": "source,sys\nA source.,x\nA source.,y\n",
        "empty.txt": "\n \n",
    }
    path = texts_file if corpus == "texts.txt" else str(tmp_path / corpus)
    if corpus in files:
        (tmp_path / corpus).write_text(files[corpus], encoding="utf-8")
    code, _, stderr = run_cli("baseline", "-m", str(tmp_path / "no-model"), "--corpus", path, *arguments)
    assert code == 2, stderr
    assert message in stderr


def test_a_model_that_cannot_tell_a_copy_from_an_unrelated_text_writes_no_baseline(scorer, texts_file):
    """The tests' random BART scores copies no higher than unrelated texts: a scale between them would be noise."""
    with pytest.raises(ValueError, match=r"no baseline written: for faithfulness, a copy scores .* on average"):
        build_baseline(scorer, texts=TEXTS, corpus_file=texts_file)


# ---------------------------------------------------------------------------------------------------------------------
# Less than asked, said and recorded: fewer reference pairs than requested, points too close to make a scale

NUMBERED_TEXTS = [
    f"Text number {word} is about the {thing} ." for word, thing in zip("abcdefghijkl", "catdogsunmapcar" * 2)
]


def distinct_reference_pairs(texts):
    """Copies and unrelated pairs of plain texts, each text its own document, by a plain loop."""
    return len(texts) + len(list(itertools.permutations(texts, 2)))


@pytest.mark.slow
def test_fewer_pairs_than_asked_are_reported_and_recorded(copier, tmp_path):
    path = tmp_path / "texts.txt"
    path.write_text("\n".join(NUMBERED_TEXTS) + "\n", encoding="utf-8")
    assert len(set(NUMBERED_TEXTS)) == 12
    with pytest.warns(
        FewerReferencePairsWarning, match=r"2000 reference pairs were asked for, but the texts give only 144"
    ):
        document = build_baseline(copier, texts=NUMBERED_TEXTS, corpus_file=str(path), pairs=2000)
    assert document["sampling"]["pairs"] == 2000
    assert document["sampling"]["pairs_scored"] == distinct_reference_pairs(NUMBERED_TEXTS) == 144
    with warnings.catch_warnings():  # enough pairs (half the budget each for the copies and the unrelated pairs)
        warnings.filterwarnings("error", message=".*reference pairs were asked for")
        document = build_baseline(copier, texts=NUMBERED_TEXTS, corpus_file=str(path), pairs=24)
    assert document["sampling"] == {"pairs": 24, "pairs_scored": 24, "seed": rescale.DEFAULT_SEED}


@pytest.mark.slow
def test_the_cli_baseline_reports_fewer_pairs_than_asked(copying_checkpoint, tmp_path):
    path = tmp_path / "texts.txt"
    path.write_text("\n".join(NUMBERED_TEXTS) + "\n", encoding="utf-8")
    argv = ["baseline", "-m", copying_checkpoint, "--device", "cpu", "-q", "--corpus", str(path), "--pairs", "2000"]
    with pytest.warns(UserWarning, match=r"2000 reference pairs were asked for, but the texts give only 144"):
        assert main([*argv, "-o", str(tmp_path / "b.json")]) == 0
    recorded = json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))["sampling"]
    assert (recorded["pairs"], recorded["pairs_scored"]) == (2000, 144)


def test_degenerate_points_are_warned_of_when_a_baseline_is_built(copier, tmp_path, monkeypatch):
    path = tmp_path / "texts.txt"
    path.write_text("\n".join(NUMBERED_TEXTS) + "\n", encoding="utf-8")
    monkeypatch.setattr(
        rescale.ReferencePairs,
        "points",
        lambda self, scores: {d: rescale.ReferencePoints(-3.0, -2.99) for d in self.points_of},
    )
    with pytest.warns(
        bart_score.RescaleWarning, match=r"the baseline's faithfulness reference points barely differ"
    ) as caught:
        build_baseline(copier, texts=NUMBERED_TEXTS, corpus_file=str(path), pairs=100)
    remedies = {warning.message.remedy for warning in caught if "barely differ" in str(warning.message)}
    assert remedies == {("make the reference points from more varied texts",)}


def test_a_folder_holding_only_another_settings_baseline_is_refused_before_the_model_loads(
    copier, copying_checkpoint, baselines, texts_file, monkeypatch, capsys
):
    """The model's identity, the prompt setting, --max-length (where given) and chat or not are known before the model
    loads: a default folder whose files are all for other settings is refused then, naming them."""
    from support.model_loads import refuse_model_loads

    document = built(copier, texts_file, pairs=10)
    path = baseline_files.default_baseline_path(document["settings"])
    baseline_files.write_baseline(document, path)
    found = baseline_files.baselines_agreeing(
        str(baselines), {"model": copier.model_identity, "prompt": "none", "max_length": 1024}, chat=False
    )
    assert found == [path]
    assert baseline_files.baselines_agreeing(str(baselines), {"model": copier.model_identity}, chat=True) == []
    refuse_model_loads(monkeypatch)
    arguments = ["-s", texts_file, "-t", texts_file, "-m", copying_checkpoint, "-q", "--rescale"]
    for other in (["-p", "In short"], ["--max-length", "64"]):
        assert main(["score", *arguments, *other]) == 2
        error = capsys.readouterr().err
        assert f"none of the baseline files in {baselines} is for the model {copier.model_identity}" in error, error
        assert "make one from a few thousand texts like those you score (bartscore baseline -m" in error
    assert "--max-length 64 and scoring without --chat" in error
