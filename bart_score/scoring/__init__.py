"""The scoring core: the engine and its plan of a call, the directions over it, and what results carry.

    _plan         PlannedScorer: a call planned (distinct texts, identical pairs once, conditions grouped)
    engine        BARTScorer, the local engine: batches, encoder reuse, log-probabilities, out-of-memory retries
    protocols     Scorer, IdentifiedScorer: what the scoring functions call on a scorer (the engine, its cache)
    _pair_groups  groups of pairs scored in one engine call under every prompt phrase
    _directions   faithfulness, precision, recall, f_score; multi-reference aggregation; the signature
    signature     Signature: a result's signature as fields, formatted as results carry it and parsed back
    prompts       the paper's prompt sets
    score_cache   resumable scoring: a scorer wrapper backed by an append-only cache file
    _progress     the progress bar of a long scoring run

The package imports none of them, so that importing one does not load the others."""
