#!/usr/bin/env python
"""Time and peak memory of checkpoints whose metadata asks for far more than their files hold (issue 28), for this
checkout and, with --before, another one side by side.

Cases, built here from the tests' tiny Llama (tests/support/gguf.py, tests/support/header_probes.py): a 32 MB GGUF
file holding an unused array of 4 million empty strings; a 39 MB GGUF file whose vocabulary is 2 million tokens; a
270 KB GGUF file whose llama.block_count says 20,000 with the tensors of 2 layers; a folder whose config.json says
num_hidden_layers 20,000 with the weights of 2; and the probes of the bounds in all, each item within its own bound:
GGUF files of 65,536 metadata keys, of merges padded with empty strings to a million array elements, and of 17 MiB of
strings, and a folder of 2 layers whose config says 20,000 beside 20,000 tensors named pad.0 to pad.19999. Each runs
twice in a fresh interpreter whose resident memory is watched (killed past --cap-gib or --timeout): as
`bartscore score -m CASE -q` (wall time, peak memory, exit status), and as `BARTScorer(checkpoint=CASE)` timed from
after the imports to its refusal (what the refusal itself costs, without the interpreter's start and torch's and
transformers' imports, 10 to 20 s on a busy 2-core machine). The cases are built in an interpreter of their own, so
that this one stays small: a process forked from a large one reports the parent's peak memory as its own.

    python bench/bench_checkpoint_bombs.py [--before /path/to/an/older/checkout] [--cap-gib 3] [--timeout 120]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

from _setup import REPO
from bench_hostile_inputs import measure

# Run in the measured interpreter: the seconds from after the imports to the refusal, and how it ended.
REFUSAL = """
import sys, time
import bart_score.scoring.engine, transformers.modeling_utils, transformers.modeling_gguf_pytorch_utils
started = time.perf_counter()
try:
    bart_score.BARTScorer(checkpoint=sys.argv[1], device="cpu")
    ended = "loaded"
except Exception as error:
    ended = type(error).__name__
print(f"{time.perf_counter() - started:.2f} {ended}")
"""


def build(folder):
    """Writes the cases into `folder`; returns {name: checkpoint path}."""
    from support.gguf import block_count_probe, build_tiny_causal, save_folder, unused_strings_probe, vocabulary_probe
    from support.header_probes import (
        metadata_keys_probe,
        padded_layers_probe,
        padded_merges_probe,
        string_bytes_probe,
    )

    model, tokenizer = build_tiny_causal("llama")
    layers = save_folder(model, tokenizer, os.path.join(folder, "layers"))
    with open(os.path.join(layers, "config.json"), encoding="utf-8") as handle:
        config = json.load(handle)
    with open(os.path.join(layers, "config.json"), "w", encoding="utf-8") as handle:
        json.dump({**config, "num_hidden_layers": 20_000}, handle)
    return {
        "GGUF, 4 million unused strings (32 MB)": unused_strings_probe(model, tokenizer, f"{folder}/strings.gguf"),
        "GGUF, 2 million tokens (39 MB)": vocabulary_probe(model, tokenizer, f"{folder}/vocabulary.gguf"),
        "GGUF, block_count 20,000 (270 KB)": block_count_probe(model, tokenizer, f"{folder}/blocks.gguf"),
        "folder, num_hidden_layers 20,000": layers,
        "GGUF, 65,536 keys": metadata_keys_probe(model, tokenizer, f"{folder}/keys.gguf"),
        "GGUF, merges padded to a million elements": padded_merges_probe(model, tokenizer, f"{folder}/merges.gguf"),
        "GGUF, 17 MiB of strings": string_bytes_probe(model, tokenizer, f"{folder}/strings-17mib.gguf"),
        "folder, 20,000 pad.N tensors and 20,000 layers": padded_layers_probe(
            save_folder(model, tokenizer, os.path.join(folder, "plain")), os.path.join(folder, "padded")
        ),
    }


ONE_THREAD = {"OMP_NUM_THREADS": "1"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="CHECKOUT", help="an older checkout to measure beside this one")
    parser.add_argument("--cap-gib", type=float, default=3.0, help="kill a run past this resident memory (GiB)")
    parser.add_argument("--timeout", type=float, default=120.0, help="kill a run past this many seconds")
    parser.add_argument("--build", metavar="FOLDER", help=argparse.SUPPRESS)  # the cases' own interpreter
    args = parser.parse_args()
    if args.build:
        print(json.dumps(build(args.build)))
        return
    checkouts = [("before", args.before)] if args.before else []
    checkouts.append(("after", REPO))
    cap = args.cap_gib * 2**30
    with tempfile.TemporaryDirectory() as folder:
        texts = os.path.join(folder, "texts.txt")
        with open(texts, "w", encoding="utf-8") as handle:
            handle.write("The cat sat on the mat.\n")
        built = subprocess.run(
            [sys.executable, __file__, "--build", folder], capture_output=True, text=True, check=True
        ).stdout
        for name, checkpoint in json.loads(built.splitlines()[-1]).items():
            print(f"== {name}")
            for label, checkout in checkouts:
                cli = ["-m", "bart_score", "score", "-m", checkpoint, "-s", texts, "-t", texts, "-q"]
                seconds, peak, _, ended = measure(checkout, cli, cap, args.timeout, env=ONE_THREAD)
                print(f"  {label:<6} cli      {seconds:7.2f} s  peak {peak / 2**20:6.0f} MiB  {ended}")
                refusal = ["-c", REFUSAL, checkpoint]
                seconds, peak, output, ended = measure(checkout, refusal, cap, args.timeout, env=ONE_THREAD)
                refused = f"refused in {output}" if output else ended
                print(f"  {label:<6} refusal  {seconds:7.2f} s  peak {peak / 2**20:6.0f} MiB  {refused}")


if __name__ == "__main__":
    main()
