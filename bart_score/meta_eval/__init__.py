"""The paper's meta-evaluation (Yuan, Neubig & Liu, NeurIPS 2021, Tables 3-6) reproduced: BARTScore's correlations
with the human judgments of the BARTScore release, by the release's protocol, beside the published numbers. Its
modules, in the order a run uses them:

    benchmarks  the release's human judgments (REALSumm, SummEval, NeR18, Rank19, QAGS, BAGEL, SFRES, SFHOT, WMT19) as
                datasets, checked against the release's checksums
    scoring     BARTScore for every record of the benchmarks, the way the release's scripts compute it
    protocol    the release's correlation measures and significance test, on scipy.stats
    table       metric rows x benchmark columns beside the paper's numbers; printed, and written as CSV and JSON
    published   the paper's numbers, as data, each with its source

``bartscore meta-eval`` (bart_score/cli/meta_eval.py) runs them; ``bart_score.score_cache.ResumableScorer`` makes
its scoring resumable. Nothing is imported here, so that the command line's help does not load the modules."""
