"""bart_score inside other libraries.

    evaluate_metric  the evaluate.Metric under bartscore.py's metric (imports evaluate; nothing here imports it)
    rewards          BARTScoreReward: BARTScore as a reward function for TRL's trainers (reward_funcs)
    _shared_engines  one engine per checkpoint and settings in a process, for every holder that asks for them

The package imports none of them, so that importing one does not load the others."""
