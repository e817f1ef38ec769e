"""Baselines: a model's reference points (bart_score.rescale), made once from a corpus and kept in a file.

    files  the baseline file: its key, reading, checking and writing, where it is kept
    build  making a baseline, and finding the one a call needs

The ``bartscore baseline`` subcommand is bart_score.cli.baseline."""
