"""Corpora and the files bart_score reads and writes.

    corpus           Corpus: plain-text corpora read, and every system scored at once (score_corpus)
    table_files      table files (.csv, .jsonl) read under limits into a Corpus
    dataset_scoring  score_dataset: a ``datasets`` corpus scored, one column per direction
    _reading         every file and JSON text bart_score reads, read within bounds
    _outputs         output files: checked first, written atomically, valid JSON, safe in spreadsheets

The package imports none of them, so that importing one does not load the others."""
