"""`bartscore meta-eval --select`: the split, the bootstrap interval, the choice on development documents against a
plain loop that splits, picks and correlates, the command end to end on a tiny model with a planted configuration,
and its refusals."""

import copy
import hashlib
import json
import pickle
import random

import numpy as np
import pytest
from scipy.stats import spearmanr
from support.extras import require_extra
from support.meta_eval_fixtures import summeval_like
from support.reference import reference_score

from bart_score.cli import main
from bart_score.errors import InputError
from bart_score.messages import Mention
from bart_score.meta_eval._selection_grid import (
    Configuration,
    GridPlan,
    ScorerRecord,
    benchmark_grids,
    build_grid,
    lone_configuration,
)
from bart_score.meta_eval._selection_statistics import bootstrap_interval, select, value_on
from bart_score.meta_eval._split import MAX_SEED, check_split, in_development, split_records, split_shortfall
from bart_score.options import EngineOptions, ScoringOptions

ASPECTS = ("coherence", "consistency", "fluency", "relevance")


def reference_part(key, seed, dev_fraction):
    """The documented split rule, written out: SHA-256 of "<seed>:<key>", first 8 bytes over 2**64."""
    digest = hashlib.sha256(f"{seed}:{key}".encode()).digest()
    return "development" if int.from_bytes(digest[:8], "big") / 2**64 < dev_fraction else "held-out"


def summary_records(documents, systems=4, seed=0):
    """A SummEval-like dataset (the columns the selection reads), human scores drawn at random."""
    draw = random.Random(seed)
    records = {"doc_id": [], "system": [], "source": [], **{f"human_{a}": [] for a in ASPECTS}}
    for doc in range(documents):
        for system in range(systems):
            records["doc_id"].append(f"d{doc}")
            records["system"].append(f"M{system}")
            records["source"].append(f"article {doc}")
            for aspect in ASPECTS:
                records[f"human_{aspect}"].append(float(draw.randint(1, 5)) + draw.random())
    return records


def test_the_split_is_deterministic_disjoint_and_covers_every_document():
    records = summary_records(60)
    development, held_out = split_records("summeval", records, 0.5, seed=7)
    again = split_records("summeval", records, 0.5, seed=7)
    assert development.tolist() == again[0].tolist() and held_out.tolist() == again[1].tolist()
    assert not set(development) & set(held_out)
    assert sorted([*development, *held_out]) == list(range(len(records["doc_id"])))
    parts = {}
    for part, rows in (("development", development), ("held-out", held_out)):
        for row in rows:
            parts.setdefault(records["doc_id"][row], set()).add(part)
    assert all(len(found) == 1 for found in parts.values())  # no document's systems straddle the split
    assert {doc: found.pop() for doc, found in parts.items()} == {
        f"d{doc}": reference_part(f"d{doc}", 7, 0.5) for doc in range(60)
    }
    other = in_development([f"d{doc}" for doc in range(60)], 0.5, seed=8)
    assert other != {f"d{doc}": reference_part(f"d{doc}", 7, 0.5) == "development" for doc in range(60)}
    share = np.mean(list(in_development([f"k{i}" for i in range(4000)], 0.3, seed=1).values()))
    assert abs(share - 0.3) < 0.03


def test_wmt_segments_are_split_by_their_source_sentence():
    # Six DARR judgments over three source sentences: the judgments of one sentence stay together.
    records = {"doc_id": [], "source": [], "system": []}
    for judgment in range(60):
        for side in ("better", "worse"):
            records["doc_id"].append(str(judgment))
            records["source"].append(f"sentence {judgment % 20}")
            records["system"].append(side)
    development, held_out = split_records("wmt19-kk-en", records, 0.5, seed=0)
    sources = {records["source"][row]: "development" for row in development}
    sources.update({records["source"][row]: "held-out" for row in held_out})
    assert len({records["source"][row] for row in development} & {records["source"][row] for row in held_out}) == 0
    assert sources == {f"sentence {s}": reference_part(f"sentence {s}", 0, 0.5) for s in range(20)}


def test_a_part_under_five_documents_is_refused_with_the_counts_and_the_option_that_mends_it():
    records = summary_records(6)
    development = sum(reference_part(f"d{doc}", 0, 0.5) == "development" for doc in range(6))
    short = "development" if development < 5 else "held-out"
    count = development if development < 5 else 6 - development
    problem = f"summeval: the {short} part has {count} documents of 6 (dev fraction 0.5, seed 0)"
    with pytest.raises(InputError) as error:
        split_records("summeval", records, 0.5, seed=0)
    assert str(error.value).startswith(problem) and (error.value.option, error.value.value) == ("dev_fraction", 0.5)
    assert str(error.value).endswith(
        "selection needs at least 5 in each part; give more documents or another dev_fraction"
    )
    assert error.value.remedy == ("give more documents or another ", Mention("dev_fraction"))
    assert split_shortfall("summeval", records, 0.5, seed=0).startswith(problem)
    assert split_shortfall("summeval", summary_records(60), 0.5, seed=0) is None


def noisy_scores(records, aspect, noise, seed):
    draw = np.random.default_rng(seed)
    human = np.asarray(records[f"human_{aspect}"])
    return human + draw.normal(0, noise, len(human))


@pytest.mark.slow
@pytest.mark.parametrize("benchmark", ["summeval", "qags-cnn"])
def test_the_bootstrap_interval_holds_the_estimate_and_narrows_with_more_documents(benchmark):
    widths = []
    for documents in (20, 80, 320):
        systems = 4 if benchmark == "summeval" else 1
        records = summary_records(documents, systems=systems, seed=documents)
        records["human_fact"] = records["human_coherence"]
        aspect = "coherence" if benchmark == "summeval" else "fact"
        scores = noisy_scores(records, aspect, 1.5, seed=documents)
        rows = np.arange(len(records["doc_id"]))
        estimate = value_on(benchmark, records, aspect, scores, rows)["value"]
        # 500 resamples where users get 2,000: what is asserted holds at any count, at a quarter of the CPU time.
        low, high = bootstrap_interval(benchmark, records, aspect, scores, rows, seed=0, resamples=500)
        assert low <= estimate <= high
        widths.append(high - low)
    assert widths[0] > widths[1] > widths[2]


def reference_selection(records, configurations, seed, dev_fraction):
    """The plain loop: split the documents by the rule, correlate each configuration per document on each part
    (documents with constant human or metric scores skipped), take the mean, pick the best on development."""
    parts = {doc: reference_part(doc, seed, dev_fraction) for doc in records["doc_id"]}
    result = {}
    for aspect in ASPECTS:
        values = {}
        for name, scores in configurations.items():
            for part in ("development", "held-out"):
                per_document = []
                for doc in dict.fromkeys(records["doc_id"]):
                    if parts[doc] != part:
                        continue
                    rows = [i for i, d in enumerate(records["doc_id"]) if d == doc]
                    human = [records[f"human_{aspect}"][i] for i in rows]
                    metric = [scores[i] for i in rows]
                    if len(set(human)) > 1 and len(set(metric)) > 1:
                        per_document.append(spearmanr(human, metric)[0])
                values[name, part] = sum(per_document) / len(per_document)
        best = None
        for name in configurations:
            if best is None or values[name, "development"] > values[best, "development"]:
                best = name
        result[aspect] = best, values
    return result


@pytest.mark.slow
def test_select_chooses_the_planted_configuration_and_matches_a_plain_loop():
    records = summary_records(40, systems=5, seed=3)
    # The planted configuration follows the coherence judgments on every document, through a monotone map.
    configurations = {
        Configuration("m", "m", "faithfulness"): noisy_scores(records, "coherence", 3.0, seed=1),
        Configuration("m", "m", "recall"): noisy_scores(records, "relevance", 2.0, seed=2),
        Configuration("m", "m", "faithfulness", ("p",), "p", "decoder"): -np.exp(
            -np.asarray(records["human_coherence"])
        ),
        Configuration("m", "m", "precision"): noisy_scores(records, "fluency", 1.0, seed=4),
    }
    report = select({"summeval": records}, {"summeval": configurations}, dev_fraction=0.5, seed=11, resamples=200)
    names = {configuration.name: scores for configuration, scores in configurations.items()}
    expected = reference_selection(records, names, seed=11, dev_fraction=0.5)
    columns = {column["aspect"]: column for column in report["columns"]}
    assert columns["coherence"]["best"]["name"] == "m faithfulness +prompt 'p' @decoder"
    assert columns["coherence"]["best"]["held_out"] == pytest.approx(1.0)
    for aspect, (best, values) in expected.items():
        column = columns[aspect]
        assert column["best"]["name"] == best
        assert column["default"]["name"] == "m faithfulness"
        for entry in column["configurations"]:
            assert entry["development"] == pytest.approx(values[entry["name"], "development"], abs=1e-12)
            assert entry["held_out"] == pytest.approx(values[entry["name"], "held-out"], abs=1e-12)
        assert column["optimism"] == pytest.approx(values[best, "development"] - values[best, "held-out"])
    split = report["split"]["summeval"]
    assert sorted(split["development"] + split["held_out"]) == sorted(set(records["doc_id"]))
    assert all(reference_part(doc, 11, 0.5) == "development" for doc in split["development"])


@pytest.mark.parametrize(
    "dev_fraction, seed, option",
    [
        (0.5, -1, "seed"),  # numpy's generators refused it with a ValueError, after the scoring
        (0.5, MAX_SEED + 1, "seed"),
        (0.5, 1.5, "seed"),
        (0.5, "7", "seed"),
        (0.5, True, "seed"),
        (0.0, 0, "dev_fraction"),
        (1, 0, "dev_fraction"),
        (float("nan"), 0, "dev_fraction"),
        (True, 0, "dev_fraction"),
        ("0.5", 0, "dev_fraction"),
    ],
)
def test_the_splits_settings_are_refused_naming_them_before_anything_is_drawn(dev_fraction, seed, option):
    with pytest.raises(InputError) as raised:
        check_split(dev_fraction, seed)
    assert (raised.value.option, raised.value.value) == (option, seed if option == "seed" else dev_fraction)
    records = summary_records(40, systems=2)
    configurations = (Configuration("m", "m", "faithfulness"), Configuration("m", "m", "recall"))
    scores = {configuration: noisy_scores(records, "coherence", 1.0, seed=0) for configuration in configurations}
    with pytest.raises(InputError, match=f"^{option} must be"):
        select({"summeval": records}, {"summeval": scores}, dev_fraction=dev_fraction, seed=seed, resamples=20)
    check_split(0.5, MAX_SEED)  # numpy takes the largest
    values = scores[configurations[0]]
    interval = bootstrap_interval("summeval", records, "coherence", values, np.arange(40), seed=MAX_SEED, resamples=20)
    assert np.isfinite(interval).all()


def test_a_grid_without_a_choice_is_refused_by_one_rule():
    """lone_configuration is the rule; select() says it in the library's words, the command line in its own (below)."""
    records = summary_records(60)
    only = Configuration("m", "m", "faithfulness")
    grids = {"summeval": [only, Configuration("m", "m", "recall")], "realsumm": [only]}
    assert lone_configuration(grids) == ("realsumm", "m faithfulness")
    assert lone_configuration({"summeval": grids["summeval"]}) is None
    with pytest.raises(InputError, match=r"^summeval: the grid has one configuration \(m faithfulness\), so there is "):
        select({"summeval": records}, {"summeval": {only: noisy_scores(records, "coherence", 1.0, seed=0)}})


def test_the_plan_holds_each_distinct_pair_once_with_its_chat_instruction():
    sources = ["First article.", "Second article.", "First article."]  # a repeated source: its pairs once
    hypotheses = ["One.", "Two.", "One."]
    texts = {"summeval": {"source": sources, "references": [["Ref."]] * 3, "hypothesis": hypotheses}}
    instructions = {d: f"{d}: {{condition}}" for d in ("faithfulness", "precision", "recall")}
    grid = build_grid(
        ["m"], prompt=["In short", "To sum up"], prompt_sides=("decoder",), instructions=["Do {condition}"]
    )
    grids = benchmark_grids(grid, ["summeval"])
    assert len(grids["summeval"]) == 8  # two instructions x (no prompt, both phrases, each phrase)
    identity = ScorerRecord(model_label="m", fields=(), options=EngineOptions(chat=True, instruction=instructions))
    plan = GridPlan(texts, grids, ScoringOptions(aggregation=None), identity)
    expected = set()
    for instruction in (instructions["faithfulness"], "Do {condition}"):
        for source, hypothesis in zip(sources, hypotheses):
            for target in (hypothesis, f"In short, {hypothesis}", f"To sum up, {hypothesis}"):
                expected.add((source, target, None, instruction))
    assert set(plan.pairs) == expected and len(plan.pairs) == 12
    # Once scored, each configuration reads its own pairs' scores back.
    values = {key: float(index) for index, key in enumerate(plan.ordered_pairs())}
    scores = plan.scores(values)["summeval"]
    for configuration, got in scores.items():
        instruction = configuration.instruction or instructions["faithfulness"]
        phrases = configuration.prompt or (None,)
        want = [
            np.mean([values[source, f"{p}, {h}" if p else h, None, instruction] for p in phrases])
            for source, h in zip(sources, hypotheses)
        ]
        assert list(got) == pytest.approx(want)


# ---------------------------------------------------------------------------------------------------------------------
# the command


PLANTED = "recall +prompt 'To sum up' @encoder"


def planted_file(folder, reference_model, documents=16):
    """A SummEval-layout file whose coherence judgments are the tiny model's recall scores under the encoder-side
    prompt 'To sum up' (computed by the reference scorer), so that this configuration tracks them on every
    document; the other aspects are random."""
    model, tokenizer = reference_model
    data = copy.deepcopy(summeval_like(documents, systems=4, seed=5))
    for record in data.values():
        (reference,) = record["ref_summs"]
        for output in record["sys_summs"].values():
            hypothesis = output["sys_summ"]
            output["scores"]["coherence"] = reference_score(model, tokenizer, f"{hypothesis} To sum up,", reference)
            output["faithfulness"] = reference_score(model, tokenizer, record["src"], hypothesis)
    path = folder / "summeval.pkl"
    with open(path, "wb") as handle:
        pickle.dump(data, handle)
    return data, str(path)


def select_command(path, checkpoint, prefix, *extra):
    return [
        "meta-eval", "-b", "summeval", "--data", f"summeval={path}", "-m", checkpoint, "--select",
        "-d", "faithfulness,recall", "--prompt-phrases", "In short", "To sum up", "--no-detokenize",
        "-o", str(prefix), "-q", *extra,
    ]  # fmt: skip


@pytest.mark.slow
def test_the_command_chooses_the_planted_configuration_and_reports_held_out_documents(
    in_process, tmp_path, tiny_checkpoint, reference_model
):
    data, path = planted_file(tmp_path, reference_model)
    args = select_command(path, tiny_checkpoint, tmp_path / "out" / "select")
    code, stdout, stderr = in_process(*args)
    assert code == 0, stderr
    name = tiny_checkpoint.rstrip("/").split("/")[-1]
    # 64 records, each scored under no prompt and two phrases, for faithfulness and for recall (one reference).
    assert "the grid: 8 configurations on summeval; scoring them needs 384 distinct pairs" in stderr
    assert "pairs/s on the first 64" in stderr
    report = json.loads((tmp_path / "out" / "select.json").read_text(encoding="utf-8"))
    column = next(c for c in report["columns"] if c["aspect"] == "coherence")
    assert column["best"]["name"] == f"{name} {PLANTED}"
    assert column["best"]["development"] == pytest.approx(1.0) and column["best"]["held_out"] == pytest.approx(1.0)
    assert f"chosen   {name} {PLANTED}" in stdout

    # The default's held-out value, by a plain loop over the held-out documents with the reference's scores.
    held_out = set(report["split"]["summeval"]["held_out"])
    assert held_out == {doc for doc in data if reference_part(doc, 0, 0.5) == "held-out"}
    per_part = {True: [], False: []}
    for doc, record in data.items():
        human = [output["scores"]["coherence"] for output in record["sys_summs"].values()]
        metric = [output["faithfulness"] for output in record["sys_summs"].values()]
        per_part[doc in held_out].append(spearmanr(human, metric)[0])
    assert column["default"]["name"] == f"{name} faithfulness"
    assert column["default"]["held_out"] == pytest.approx(np.mean(per_part[True]), abs=1e-9)
    assert column["default"]["development"] == pytest.approx(np.mean(per_part[False]), abs=1e-9)
    assert abs(np.mean(per_part[True]) - np.mean(per_part[False])) > 1e-3  # the parts' values are told apart
    low, high = column["default"]["interval"]
    assert low <= column["default"]["held_out"] <= high
    assert len(column["configurations"]) == 8  # faithfulness and recall, each with no prompt, both, and each alone

    lines = (tmp_path / "out" / "select.csv").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 + 4 * 8  # a header, then one line per aspect and configuration

    # Run again: every pair comes from the score cache, and the table is the same.
    code, again, stderr = in_process(*args)
    assert code == 0 and again == stdout
    assert "0 pair(s) scored, 384 taken from" in stderr


@pytest.mark.slow
def test_several_checkpoints_are_candidates_each_scored_in_its_own_call(
    in_process, tmp_path, tiny_checkpoint, copying_checkpoint, copier_reference_model
):
    # Coherence judgments planted as the copying model's faithfulness scores: its configuration is to be chosen.
    model, tokenizer = copier_reference_model
    data = summeval_like(16, systems=4, seed=6)
    for record in data.values():
        for output in record["sys_summs"].values():
            output["scores"]["coherence"] = reference_score(model, tokenizer, record["src"], output["sys_summ"])
    path = write_file(tmp_path, data)
    code, stdout, stderr = in_process(
        "meta-eval", "-b", "summeval", "--data", f"summeval={path}", "--select", "-m", tiny_checkpoint,
        "-m", copying_checkpoint, "--aspects", "coherence", "--no-detokenize", "-o", str(tmp_path / "s"), "-q",
    )  # fmt: skip
    assert code == 0, stderr
    tiny, copying = (folder.rstrip("/").split("/")[-1] for folder in (tiny_checkpoint, copying_checkpoint))
    assert f"needs 128 distinct pairs (64 for {tiny}, 64 for {copying})" in stderr
    report = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    (column,) = report["columns"]
    assert column["best"]["name"] == f"{copying} faithfulness" and column["default"]["name"] == f"{tiny} faithfulness"
    assert column["best"]["held_out"] == pytest.approx(1.0)
    assert f"chosen   {copying} faithfulness" in stdout


@pytest.mark.parametrize(
    "extra, message",
    [
        ([], "the grid has one configuration for summeval"),
        (["-d", "faithfulness"], "nothing to select; plain meta-eval (without --select) gives its value"),
        (["-b", "rank19", "-d", "recall", "--aspects", "coherence"], "rank19 (Rank19) has no human judgments of "),
        (["-d", "recall", "--dev-fraction", "1"], "--dev-fraction must be between 0 and 1"),
        (["-d", "recall", "--instructions", "Say {condition}"], "--instructions is for chat scoring; add --chat"),
        (["-d", "recall", "--metrics-csv", "m.csv"], "--metrics-csv is for plain meta-eval"),
        (["-d", "recall", "-m", "other"], "-m {model} is given more than once"),
    ],
)
def test_select_refuses_a_grid_it_cannot_choose_in(tmp_path, capsys, extra, message):
    model = str(tmp_path / "none")
    argv = ["meta-eval", "-b", "summeval", "--select", "-m", model, "-o", str(tmp_path / "t")]
    argv += [arg.replace("other", model) for arg in extra]
    assert main(argv) == 2
    assert message.format(model=model) in capsys.readouterr().err


def test_two_checkpoints_of_one_name_are_refused(tmp_path, capsys):
    first, second = tmp_path / "a" / "ckpt", tmp_path / "b" / "ckpt"
    first.mkdir(parents=True)
    second.mkdir(parents=True)
    argv = ["meta-eval", "-b", "summeval", "--select", "-m", str(first), "-m", str(second), "-o", str(tmp_path / "t")]
    assert main(argv) == 2
    assert "are both named 'ckpt' in the table" in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--seed", "3"], "--seed is for --select"),
        (["--both-sides", "--max-pairs", "9"], "--max-pairs and --both-sides are for --select"),
        (["-m", "a", "-m", "b"], "several checkpoints are for --select"),
    ],
)
def test_select_options_without_select_are_refused(tmp_path, capsys, extra, message):
    assert main(["meta-eval", "-b", "summeval", *extra, "-o", str(tmp_path / "t")]) == 2
    assert message in capsys.readouterr().err


def write_file(folder, data):
    path = folder / "summeval.pkl"
    with open(path, "wb") as handle:
        pickle.dump(data, handle)
    return str(path)


@pytest.mark.slow
@pytest.mark.xdist_group("evaluate")  # loads the benchmark file with datasets
def test_a_development_part_under_five_documents_is_refused_with_the_count(tmp_path, capsys):
    path = write_file(tmp_path, summeval_like(6))
    development = sum(reference_part(f"doc-{doc:03d}", 0, 0.5) == "development" for doc in range(6))
    argv = ["meta-eval", "-b", "summeval", "--data", f"summeval={path}", "--select", "-d", "recall"]
    assert main([*argv, "-m", str(tmp_path / "none"), "-o", str(tmp_path / "t"), "-q"]) == 2
    assert f"the development part has {development} documents of 6" in capsys.readouterr().err


@pytest.mark.xdist_group("evaluate")
def test_a_grid_over_the_pair_limit_is_refused_with_its_count_before_any_model_loads(tmp_path, capsys):
    path = write_file(tmp_path, summeval_like(16))
    argv = ["meta-eval", "-b", "summeval", "--data", f"summeval={path}", "--select", "-d", "faithfulness,recall"]
    argv += ["--prompt-phrases", "In short", "To sum up", "--max-pairs", "287", "--no-detokenize"]
    # The checkpoint does not exist: the refusal comes before it would be loaded.
    assert main([*argv, "-m", str(tmp_path / "none"), "-o", str(tmp_path / "t"), "-q"]) == 2
    err = capsys.readouterr().err
    assert "the grid needs 288 pairs, more than --max-pairs 287" in err


@pytest.mark.xdist_group("evaluate")
@pytest.mark.parametrize(
    "flags, said",
    [
        (
            ["--seed", "-1"],
            "--seed must be a whole number from 0 to 18446744073709551615 (numpy's generators take none",
        ),
        (["--dev-fraction", "1.5"], "--dev-fraction must be between 0 and 1 (exclusive), got 1.5"),
        (["--dev-fraction", "0"], "--dev-fraction must be between 0 and 1 (exclusive), got 0.0"),
    ],
)
def test_the_splits_settings_are_refused_before_any_model_loads(flags, said, tmp_path, capsys, no_model_load):
    """--seed -1 failed in numpy with a ValueError after every pair was scored."""
    path = write_file(tmp_path, summeval_like(16))
    argv = ["meta-eval", "-b", "summeval", "--data", f"summeval={path}", "--select", "-d", "recall,precision"]
    assert main([*argv, *flags, "-m", str(tmp_path / "none"), "-o", str(tmp_path / "t"), "-q"]) == 2
    error = capsys.readouterr().err
    assert f"error: {said}" in error and len(error.strip().splitlines()) == 1, error


@pytest.mark.parametrize(
    "flag, value, expected",
    [
        ("--dev-fraction", "٠.٥", "a number in ASCII digits (0-9), such as 0.05"),  # float() took it as 0.5
        ("--dev-fraction", "0.٥", "a number in ASCII digits (0-9), such as 0.05"),
        ("--seed", "٣", "a whole number of at most 18 ASCII digits (0-9)"),
    ],
)
def test_the_splits_settings_in_other_digits_are_refused_before_any_model_loads(
    flag, value, expected, tmp_path, capsys, no_model_load
):
    """--dev-fraction ٠.٥ (Arabic-Indic digits) was taken as 0.5."""
    path = write_file(tmp_path, summeval_like(16))
    argv = ["meta-eval", "-b", "summeval", "--data", f"summeval={path}", "--select", "-d", "recall,precision"]
    with pytest.raises(SystemExit) as exited:  # argparse's usage error
        main([*argv, flag, value, "-m", str(tmp_path / "none"), "-o", str(tmp_path / "t"), "-q"])
    assert exited.value.code == 2
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert said == f"bartscore meta-eval: error: argument {flag}: expected {expected}, got {value!r}"
    assert not list(tmp_path.glob("t*"))


@pytest.mark.xdist_group("evaluate")
@pytest.mark.parametrize("human", [float("nan"), float("inf"), "-inf", "1e999"])
@pytest.mark.parametrize("select", [False, True])
def test_human_scores_that_are_not_finite_are_refused_as_the_file_is_read(
    human, select, tmp_path, capsys, no_model_load
):
    """They were refused by the correlations, with an uncaught InputError, once every pair was scored."""
    data = summeval_like(16)
    data["doc-003"]["sys_summs"]["M1"]["scores"]["consistency"] = human
    path = write_file(tmp_path, data)
    argv = ["meta-eval", "-b", "summeval", "--data", f"summeval={path}", "-d", "recall", "--no-detokenize"]
    argv += ["--select", "-p", "summary"] if select else []
    assert main([*argv, "-m", str(tmp_path / "none"), "-o", str(tmp_path / "t"), "-q"]) == 1
    error = capsys.readouterr().err
    assert f"document 'doc-003' has a 'consistency' that is not a finite number: {human!r}" in error
    assert len(error.strip().splitlines()) == 1 and not list(tmp_path.glob("t*"))


@pytest.mark.xdist_group("evaluate")
def test_a_benchmark_file_without_the_judgments_of_an_aspect_is_named(tmp_path, capsys):
    require_extra("meta-eval")  # the SummEval texts are Moses-detokenized first
    data = summeval_like(16)
    for record in data.values():
        for output in record["sys_summs"].values():
            del output["scores"]["fluency"]
    path = write_file(tmp_path, data)
    argv = ["meta-eval", "-b", "summeval", "--data", f"summeval={path}", "--select", "-d", "recall"]
    assert main([*argv, "-m", str(tmp_path / "none"), "-o", str(tmp_path / "t"), "-q"]) == 1
    err = capsys.readouterr().err
    assert "summeval:" in err and "has no 'fluency'" in err
