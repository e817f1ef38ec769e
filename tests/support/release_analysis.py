"""The measures of the BARTScore release's analysis.py (SUMStat, D2TStat and WMTStat), as plain loops over the
release's pickled dict layouts: the reference that meta-eval's protocol is checked against."""

import numpy as np
from scipy.stats import kendalltau, pearsonr, spearmanr


def reference_summary_level(data, human, metric):
    """SUMStat's summary-level correlations: the mean Spearman, Kendall and Pearson over the documents whose systems'
    human and metric scores both vary, and how many documents those are."""
    spearman, kendall, pearson = [], [], []
    for doc in data:
        truth, predicted = [], []
        for system in data[doc]["sys_summs"]:
            truth.append(data[doc]["sys_summs"][system]["scores"][human])
            predicted.append(data[doc]["sys_summs"][system]["scores"][metric])
        if len(set(predicted)) == 1 or len(set(truth)) == 1:
            continue
        spearman.append(spearmanr(truth, predicted)[0])
        kendall.append(kendalltau(truth, predicted)[0])
        pearson.append(pearsonr(truth, predicted)[0])
    return np.mean(spearman), np.mean(kendall), np.mean(pearson), len(spearman)


def reference_accuracy(data, metric):
    """Rank19's accuracy: the share of documents whose correct summary the metric scores above the incorrect one."""
    correct = 0
    for doc in data:
        if data[doc]["sys_summs"]["correct"]["scores"][metric] > data[doc]["sys_summs"]["incorrect"]["scores"][metric]:
            correct += 1
    return correct / len(data)


def reference_kendall_like(data, metric):
    """WMTStat's Kendall-like tau over DARR pairs: a pair the metric scores equal counts as discordant."""
    concordant, discordant = 0, 0
    for doc in data:
        if float(data[doc]["better"]["scores"][metric]) > float(data[doc]["worse"]["scores"][metric]):
            concordant += 1
        else:
            discordant += 1
    return (concordant - discordant) / (concordant + discordant)
