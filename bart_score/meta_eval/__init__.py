"""The paper's meta-evaluation (Yuan, Neubig & Liu, NeurIPS 2021, Tables 3-6) reproduced: BARTScore's correlations
with the human judgments of the BARTScore release, by the release's protocol, beside the published numbers. Its
modules, in the order a run uses them (a leading underscore marks a module that is not public API):

    _definitions           what a benchmark, a release and a release file are, as plain data (imports nothing of
                           the package)
    benchmarks             the releases' benchmarks (REALSumm, SummEval, NeR18, Rank19, QAGS, BAGEL, SFRES, SFHOT,
                           WMT19, and LongDocFACTScore's), each with its files by role and its reader; their human
                           judgments as datasets, checked against the releases' checksums
    _layouts               one reader per layout of the release files (the pickled summaries, data-to-text and DARR
                           records, and LongDocFACTScore's CSV and JSON files), which each benchmark holds
    scoring                BARTScore for every record of the benchmarks, the way the release's scripts compute it
    protocol               the release's correlation measures and significance test, on scipy.stats
    _correlation_table     metric rows x benchmark columns beside the paper's numbers; printed, and written as CSV and
                           JSON
    published              the paper's numbers, as data, each with its source
    _split                 --select's split of the documents into development and held-out parts, and its defaults
    _selection_grid        --select's candidates (checkpoints, directions, prompts, instructions) and the plan that
                           scores them all in one engine call per checkpoint
    _selection_statistics  --select's choice on the development part, reported on the held-out part with bootstrap
                           intervals
    _selection_report      --select's table, printed, and written as CSV

``bartscore meta-eval`` (bart_score/cli/meta_eval.py, and cli/meta_eval_select.py for --select) runs them;
``bart_score.scoring.score_cache.ResumableScorer`` makes its scoring resumable. Nothing is imported here, so that the
command line's help does not load the modules."""
