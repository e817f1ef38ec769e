"""Faithfulness to sources longer than a model reads (LongDocFACTScore), on any model family.

    windows     source windows around the sentences most like each prediction sentence; sentence splitting
    retrievers  the source sentences most like a prediction sentence: sentence embeddings or BM25

The package imports none of them, so that importing one does not load the others."""
