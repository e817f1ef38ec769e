"""Baseline files: a model's reference points (see bart_score.rescale), measured once on a corpus and kept in a
documented JSON file, with the settings they are valid for (model, token policy, prompt setting, max_length) as its key.

``build_baseline`` samples and scores the pairs, ``write_baseline`` writes the file atomically, ``load_baseline``
reads and checks one, and ``baseline_for`` finds the file a scoring call needs and checks that its key matches."""

import hashlib
import importlib.metadata
import json
import math
import os
import re
import shlex
from dataclasses import dataclass

import numpy as np

from .errors import (
    BaselineDirectionsError,
    BaselineError,
    BaselineNotFoundError,
    BaselineSettingsError,
)
from .inputs import text_list
from .outputs import finite_or_null, write_atomically
from .prompts import PROMPT_SETS
from .rescale import (
    DEFAULT_PAIRS,
    DEFAULT_SEED,
    POINT_DIRECTIONS,
    ROLES,
    ReferencePoints,
    corpus_documents,
    document_ids,
    point_directions,
    sample_reference_pairs,
)
from .version import __version__

BASELINE_FORMAT = "bartscore-baseline"
BASELINE_FORMAT_VERSION = 1
BASELINE_FOLDER_ENV = "BARTSCORE_BASELINES"
SETTING_NAMES = {
    "model": "model",
    "token_policy": "token policy",
    "prompt": "prompt setting",
    "max_length": "max_length",
}
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
# Target-length buckets (words) of a baseline's breakdown: short texts score lower, copies included.
WORD_BUCKETS = ((0, 0), (1, 5), (6, 10), (11, 20), (21, 40), (41, 80), (81, 160), (161, None))
ABOUT = (
    "BARTScore reference points (bart_score.rescale). For each direction, 'unrelated' describes the scores of targets "
    "given unrelated conditions (random pairs from different rows or documents of the corpus) and 'copy' the scores "
    "of targets given themselves: mean, std, quantiles, number of pairs, and means by target length in words. "
    "rescaled = (score - unrelated.mean) / (copy.mean - unrelated.mean); f_score uses the means of precision's and "
    "recall's points. 'settings' must match the scorer and options that use this file; 'id' is a digest of "
    "everything else in the file and names it in signatures (rescale:baseline-<id>)."
)


# How a model's identity starts (bart_score.models.checkpoint_identity); older files hold the checkpoint as typed.
IDENTITY_PREFIXES = ("dir:", "gguf:", "hub:")
BASELINE_REMEDY = "make it from a corpus with rows of different sources and references"


def baseline_settings(scorer, prompt_label):
    """A baseline's key: what must be the same for its reference points to apply. The model is its identity
    (bart_score.models.checkpoint_identity), not the name it was given: the same checkpoint named by another path
    matches, another model at the same path, or the same directory saved again, does not."""
    return {
        "model": scorer.model_identity,
        "token_policy": scorer.token_policy,
        "prompt": prompt_label,
        "max_length": scorer.max_length,
    }


@dataclass(frozen=True)
class Baseline:
    path: str
    document: dict

    @property
    def id(self):
        return self.document["id"]

    @property
    def label(self):
        return f"baseline-{self.id}"

    @property
    def settings(self):
        return self.document["settings"]

    @property
    def points(self):
        return {
            direction: ReferencePoints(stats["unrelated"]["mean"], stats["copy"]["mean"])
            for direction, stats in self.document["directions"].items()
        }

    def mismatches(self, settings):
        """'<setting>: this file has X, this call uses Y' for each of `settings` that differs from the file's."""
        problems = []
        for name, value in settings.items():
            if self.settings[name] != value:
                problem = f"{SETTING_NAMES[name]}: the file has {self.settings[name]!r}, this call uses {value!r}"
                if name == "model" and not self.settings[name].startswith(IDENTITY_PREFIXES):
                    problem += (
                        " (the file names the model as it was typed, as baseline files made before bart_score keyed "
                        "them on the model's identity did)"
                    )
                problems.append(problem)
        return problems


def default_baseline_folder():
    """$BARTSCORE_BASELINES, else bartscore/baselines in the user's cache folder ($XDG_CACHE_HOME or ~/.cache)."""
    if os.environ.get(BASELINE_FOLDER_ENV):
        return os.environ[BASELINE_FOLDER_ENV]
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "bartscore", "baselines")


def default_baseline_path(settings):
    """Where the baseline of these settings is written and looked for: a readable name plus a digest of the key."""

    def readable(value):
        return re.sub(r"[^A-Za-z0-9.-]+", "_", str(value)).strip("_")[-60:]

    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode("utf-8")).hexdigest()[:8]
    name = (
        f"{readable(settings['model'])}.{readable(settings['token_policy'])}.prompt-{readable(settings['prompt'])}."
        f"maxlen-{settings['max_length']}.{digest}.json"
    )
    return os.path.join(default_baseline_folder(), name)


def baseline_command(scorer, prompt, prompt_side, path):
    """The `bartscore baseline` command line that makes a baseline for this scorer and prompt setting at `path`.

    prompt: the call's prompt argument (None, a set name, a phrase or a list of phrases)."""
    model, _, weights = scorer.model_label.partition("+")
    words = ["bartscore", "baseline", "-m", model, "--corpus", "TEXTS.txt"]
    environment = ""
    if weights:  # paraphrase-tuned weights loaded over the checkpoint: the cnn-para variant
        words[3] = "cnn-para"
        environment = f"BARTSCORE_PARA_WEIGHTS=/path/to/{weights} "
    if isinstance(prompt, str) and prompt in PROMPT_SETS:
        words += ["-p", prompt, "--prompt-side", prompt_side]
    elif prompt is not None:
        words += ["--prompt-phrases", *([prompt] if isinstance(prompt, str) else prompt), "--prompt-side", prompt_side]
    if scorer.max_length != 1024:
        words += ["--max-length", str(scorer.max_length)]
    words += ["-o", path]
    return environment + " ".join(shlex.quote(word) for word in words)


def load_baseline(path):
    """Reads and checks a baseline file; BaselineError says what is wrong with it."""
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except FileNotFoundError:
        raise BaselineNotFoundError(f"no baseline file at {path}") from None
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or error
        raise BaselineError(f"cannot read the baseline file {path}: {reason}") from None
    except json.JSONDecodeError as error:
        raise BaselineError(f"{path} is not a baseline file (not valid JSON: {error.msg})") from None
    if not isinstance(document, dict) or document.get("format") != BASELINE_FORMAT:
        raise BaselineError(f"{path} is not a baseline file (made by `bartscore baseline`)")
    if document.get("format_version") != BASELINE_FORMAT_VERSION:
        raise BaselineError(
            f"{path} is a version {document.get('format_version')!r} baseline file; this bart_score reads version "
            f"{BASELINE_FORMAT_VERSION}: make it again with `bartscore baseline`"
        )
    _check_structure(document, path)
    if document.get("id") != baseline_id(document):
        raise BaselineError(
            f"{path} does not match its id {document.get('id')!r}: it was changed after `bartscore baseline` wrote it. "
            f"Make it again rather than editing it, so that its id in signatures names its numbers"
        )
    return Baseline(os.fspath(path), document)


# The type each setting must have: the key compares them with the scorer's, and messages and file names print them.
_SETTING_TYPES = {"model": str, "token_policy": str, "prompt": str, "max_length": int}


def _check_structure(document, path):
    """Every field load_baseline and its users read, with its type; BaselineError names the first that is wrong."""

    def wrong(field, problem):
        return BaselineError(f"{path} is not a complete baseline file: {field} {problem}")

    def mapping(value, field):
        if not isinstance(value, dict):
            raise wrong(field, f"must be a mapping (a JSON object), got {_json_kind(value)}")
        return value

    def member(parent, key, field):
        if key not in parent:
            raise wrong(field, "is missing")
        return parent[key]

    if not isinstance(document.get("id"), str):
        raise wrong("id", f"must be a string, got {_json_kind(document.get('id'))}")
    settings = mapping(member(document, "settings", "settings"), "settings")
    for name, kind in _SETTING_TYPES.items():
        value = member(settings, name, f"settings.{name}")
        if not isinstance(value, kind) or isinstance(value, bool) or (kind is str and not value):
            wanted = "a non-empty string" if kind is str else "an integer"
            raise wrong(f"settings.{name}", f"must be {wanted}, got {_json_kind(value)}")
    directions = mapping(member(document, "directions", "directions"), "directions")
    if not directions:
        raise wrong("directions", "has no directions")
    for direction, stats in directions.items():
        if direction not in POINT_DIRECTIONS:
            raise wrong(f"directions.{direction}", f"is not a direction with reference points ({POINT_DIRECTIONS})")
        mapping(stats, f"directions.{direction}")
        for point in ("unrelated", "copy"):
            field = f"directions.{direction}.{point}"
            figures = mapping(member(stats, point, field), field)
            mean = member(figures, "mean", f"{field}.mean")
            if isinstance(mean, bool) or not isinstance(mean, (int, float)) or not math.isfinite(mean):
                raise wrong(f"{field}.mean", f"must be a finite number, got {_json_kind(mean)}")


def _json_kind(value):
    """A value as a message names it: its JSON kind, and the value itself when it is short."""
    kinds = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    kind = kinds.get(type(value), "a number")
    shown = repr(value)
    return f"{kind} {shown}" if len(shown) <= 40 and not isinstance(value, (dict, type(None))) else kind


def baseline_id(document):
    """A digest of everything in the file but the id itself."""
    content = {key: value for key, value in document.items() if key != "id"}
    return hashlib.sha256(json.dumps(content, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()[:12]


def baseline_for(scorer, options, prompt, directions, path=None):
    """The baseline a call rescales with, checked against its scorer and options before any scoring.

    options: the call's resolved ScoringOptions; prompt: its prompt argument (for the command in messages);
    directions: the point directions it needs. Without a path, the default location for these settings."""
    settings = baseline_settings(scorer, options.prompt_label)
    target = path or default_baseline_path(settings)
    command = baseline_command(scorer, prompt, options.prompt_side, target)
    try:
        baseline = load_baseline(target)
    except BaselineNotFoundError as missing:
        if path is not None:
            raise BaselineNotFoundError(f"{missing}; make it with:\n    {command}") from None
        raise BaselineNotFoundError(
            f"no BARTScore baseline for {scorer.model_label} with prompt {settings['prompt']!r} and max_length "
            f"{settings['max_length']} at {target}. Make one from a few thousand texts like those you score (a file "
            f"with one text per line, or a CSV/JSONL as `bartscore score` reads):\n    {command}\n"
            f"or take the reference points from the texts being scored: rescale='corpus' (--rescale corpus)"
        ) from None
    problems = baseline.mismatches(settings)
    if problems:
        raise BaselineSettingsError(
            f"the baseline {target} was made with other settings ({'; '.join(problems)}). Make one for these "
            f"settings:\n    {command}"
        )
    lacking = [d for d in directions if d not in baseline.document["directions"]]
    if lacking:
        raise BaselineDirectionsError(
            f"the baseline {target} has no reference points for {', '.join(lacking)} (it has "
            f"{', '.join(baseline.document['directions'])}); make it from a corpus with the texts those need",
            lacking,
        )
    return baseline


def write_baseline(document, path):
    """Writes the file atomically as every output file is (bart_score.outputs.write_atomically): a reader sees the old
    file or the whole new one, never a part; missing folders are made; a link keeps pointing where it did; the file
    gets the umask's permissions or keeps the old one's. Anything but a regular file under `path` (a folder, a device,
    a FIFO) is refused with OSError, and a document holding NaN or infinity with ValueError (JSON has neither)."""
    text = json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    write_atomically(path, lambda handle: handle.write(text), make_folders=True)


def build_baseline(
    scorer,
    texts=None,
    corpus=None,
    *,
    corpus_file,
    pairs=DEFAULT_PAIRS,
    seed=DEFAULT_SEED,
    directions=None,
    prompt=None,
    prompt_side="encoder",
    batch_size=None,
    max_tokens=None,
    show_progress=False,
):
    """A baseline document (see ABOUT) from plain texts (`texts`, one per line of the file: every direction's pairs
    are pairs of these texts) or a Corpus of systems with sources and/or references (each direction from the roles
    its texts play). corpus_file: the file they were read from (its sha256 is recorded). All reference pairs go to
    the engine in one call. None on ranks that get no results."""
    from .directions import resolve_options, score_pair_groups  # directions imports this module

    if (texts is None) == (corpus is None):
        raise ValueError("build_baseline takes texts= (plain texts) or corpus= (a Corpus), one of them")
    if texts is not None:
        texts = text_list(texts, "texts")
        options = resolve_options(
            has_references=True, has_sources=True, directions=directions, prompt=prompt, prompt_side=prompt_side
        )
        rows = {"text": [[text] for text in texts]}
        documents = document_ids(len(texts), sources=texts)  # a text repeated on several lines is one document
        roles = dict.fromkeys(POINT_DIRECTIONS, ("text", "text"))
        described = {"kind": "plain text", "texts": len(texts), "distinct texts": len(set(texts))}
    else:
        names = list(corpus.systems)
        segments = len(corpus.systems[names[0]])
        options = resolve_options(
            has_references=corpus.references is not None,
            has_sources=corpus.sources is not None,
            directions=directions,
            prompt=prompt,
            prompt_side=prompt_side,
        )
        sources = corpus.sources * len(names) if corpus.sources is not None else None
        references = corpus.references * len(names) if corpus.references is not None else None
        rows = {
            "prediction": [[text] for name in names for text in corpus.systems[name]],
            "source": [[text] for text in sources] if sources is not None else None,
            "reference": references,
        }
        corpus_documents(segments, corpus.sources, corpus.references, option="a baseline", remedy=BASELINE_REMEDY)
        documents = document_ids(segments * len(names), sources, references)
        roles = ROLES
        described = {"kind": "table", "rows": segments, "systems": names}
    reference_pairs = sample_reference_pairs(
        rows, documents, point_directions(options.directions), roles=roles, pairs=pairs, seed=seed
    )
    sample_scores = score_pair_groups(
        scorer,
        reference_pairs.samples,
        options,
        batch_size=batch_size,
        max_tokens=max_tokens,
        show_progress=show_progress,
    )
    if sample_scores is None:
        return None
    for direction, point in reference_pairs.points(sample_scores).items():
        if not point.ordered:
            raise ValueError(
                f"no baseline written: for {direction}, a copy scores {point.copy:.4f} on average and an unrelated "
                f"text {point.unrelated:.4f}, so this model does not tell a copy from an unrelated text and a scale "
                f"between the two would mean nothing"
            )
    stats = {
        key: _describe(sample_scores[key], [target for _, target in reference_pairs.samples[key]])
        for key in reference_pairs.samples
    }
    document = {
        "format": BASELINE_FORMAT,
        "format_version": BASELINE_FORMAT_VERSION,
        "about": ABOUT,
        "settings": baseline_settings(scorer, options.prompt_label),
        "made_with": {
            "bart_score": __version__,
            "transformers": importlib.metadata.version("transformers"),
            "engine": scorer.signature_fields(),
        },
        "corpus": {"file": os.path.basename(corpus_file), "sha256": _sha256(corpus_file), **described},
        "sampling": {"pairs": pairs, "seed": seed},
        "directions": {
            direction: {"unrelated": stats[unrelated], "copy": stats[copy]}
            for direction, (unrelated, copy) in reference_pairs.points_of.items()
        },
    }
    document = finite_or_null(document)  # JSON has no NaN (its id is the digest of what is written)
    document["id"] = baseline_id(document)
    return document


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _describe(scores, targets):
    """A sample's figures: mean, std, quantiles, pairs, and means by the target's length in words."""
    scores = np.asarray(scores, dtype=np.float64)
    words = np.array([len(target.split()) for target in targets])
    buckets = []
    for low, high in WORD_BUCKETS:
        inside = (words >= low) & (words <= high if high is not None else True)
        if inside.any():
            label = f"{low}+" if high is None else str(low) if low == high else f"{low}-{high}"
            buckets.append({"words": label, "pairs": int(inside.sum()), "mean": float(scores[inside].mean())})
    return {
        "mean": float(scores.mean()),
        "std": float(scores.std(ddof=1)) if len(scores) > 1 else None,
        "quantiles": {f"{q:g}": float(value) for q, value in zip(QUANTILES, np.quantile(scores, QUANTILES))},
        "pairs": len(scores),
        "by_target_words": buckets,
    }
