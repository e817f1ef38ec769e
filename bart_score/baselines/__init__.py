"""Rescaling and baselines: a model's reference points, and the linear map between them; made once from a corpus
and kept in a file.

    rescale   reference points (unrelated text, copy) and the linear map; sampling them from a corpus
    files    the baseline file: its key, reading, checking and writing, where it is kept
    build    making a baseline from a corpus: the request checked and planned, the pairs sampled and scored
    _lookup  finding the baseline a call needs, checked against its settings; the command that makes a missing one

The ``bartscore baseline`` subcommand is bart_score.cli.baseline."""
