"""Small benchmark files in the release's pickled layouts for the meta-eval tests: a SummEval-like file (several
references, four aspects), a data-to-text file (references repeated, as the release's are) and a WMT19 DARR file.
Texts are tokenized the way the release's summarization and data-to-text files are (spaces before punctuation)."""

import pickle

_ARTICLES = [
    "The government said the river was high after the rain .",
    "The team won the game and the players were happy .",
    "The company said the market was down this week .",
    "People in the city read the news every day .",
]
_SUMMARIES = [
    ["The river was high .", "The government said the rain was high .", "A river ."],
    ["The team won .", "The players won the game .", "The game was ."],
    ["The market was down .", "The company was down this week .", "A company ."],
    ["People read the news .", "The city read the news every day .", "News ."],
]
_REFERENCES = [
    ["The river was high after the rain .", "Rain made the river high ."],
    ["The team won the game .", "The players were happy ."],
    ["The market was down this week .", "The company said the market was down ."],
    ["People read the news every day .", "The city reads the news ."],
]
_HUMAN = [  # per document, per system: coherence, consistency, fluency, relevance
    [(4.0, 5.0, 4.0, 4.0), (3.0, 4.0, 5.0, 3.0), (1.0, 2.0, 2.0, 1.0)],
    [(3.0, 5.0, 4.0, 3.0), (4.0, 4.0, 4.0, 4.0), (2.0, 3.0, 1.0, 2.0)],
    [(2.0, 4.0, 3.0, 3.0), (2.0, 3.0, 4.0, 2.0), (1.0, 1.0, 2.0, 1.0)],
    [(5.0, 5.0, 5.0, 4.0), (3.0, 3.0, 3.0, 3.0), (3.0, 2.0, 3.0, 3.0)],
]

SUMMEVAL = {
    f"dm-test-{doc}": {
        "src": _ARTICLES[doc],
        "ref_summ": _REFERENCES[doc][0],
        "ref_summs": _REFERENCES[doc],
        "sys_summs": {
            f"M{system}": {
                "sys_summ": _SUMMARIES[doc][system],
                "scores": dict(zip(("coherence", "consistency", "fluency", "relevance"), _HUMAN[doc][system])),
            }
            for system in range(3)
        },
    }
    for doc in range(4)
}

BAGEL = {
    index: {
        "src": source,
        "sys_summ": output,
        "ref_summs": references,
        "scores": {"informativeness": info, "naturalness": nat, "quality": quality},
    }
    for index, (source, output, references, info, nat, quality) in enumerate(
        [
            ("inform(name=X,area=city)", "X is in the city .", ["X is in the city .", "X is in the city ."], 6, 5, 6),
            ("inform(name=X,area=city)", "the city .", ["X is in the city .", "X is in the city ."], 2, 3, 2),
            ("inform(name=Y,near=river)", "Y is by the river .", ["Y is near the river .", "By the river ."], 5, 4, 4),
            ("inform(name=Y,near=river)", "Y the river river .", ["Y is near the river .", "By the river ."], 3, 1, 2),
            ("inform(name=Z,type=house)", "Z is a house .", ["Z is a house .", "Z is a house .", "A house ."], 6, 6, 5),
            ("inform(name=Z,type=house)", "a house is .", ["Z is a house .", "Z is a house .", "A house ."], 3, 2, 3),
        ]
    )
}

KK_EN = {
    index: {
        "src": source,
        "ref": reference,
        "better": {"sys_name": "online-B.0", "sys": better, "scores": {}},
        "worse": {"sys_name": "NEU.6753", "sys": worse, "scores": {}},
    }
    for index, (source, reference, better, worse) in enumerate(
        [
            ("Өзен жоғары.", "The river was high.", "The river was high.", "River high the."),
            ("Команда жеңді.", "The team won the game.", "The team won.", "The team the game."),
            ("Нарық төмен.", "The market was down.", "The market was down this week.", "Market."),
            ("Адамдар оқиды.", "People read the news.", "People read news.", "The people the the."),
            ("Компания айтты.", "The company said it.", "The company said.", "Company company said said."),
            ("Күн.", "The day.", "A day.", "The day."),
        ]
    )
}

FILES = {"summeval": SUMMEVAL, "bagel": BAGEL, "wmt19-kk-en": KK_EN}


def write_fixture_files(folder):
    """Writes the fixture files into `folder`; returns {benchmark name: path}."""
    paths = {}
    for name, data in FILES.items():
        path = folder / f"{name}.pkl"
        with open(path, "wb") as handle:
            pickle.dump(data, handle)
        paths[name] = str(path)
    return paths


_WORDS = ("river", "rain", "team", "game", "market", "week", "city", "news", "company", "players", "day", "house")


def summeval_like(documents, systems=3, seed=0):
    """A SummEval-layout file of `documents` documents with `systems` summaries each, texts drawn from a few words
    (no space before the full stop, so that Moses leaves them as they are) and human scores drawn at random."""
    import random

    draw = random.Random(seed)

    def sentence(length):
        return " ".join(draw.choice(_WORDS) for _ in range(length)).capitalize() + "."

    data = {}
    for doc in range(documents):
        article = " ".join(sentence(8) for _ in range(3))
        data[f"doc-{doc:03d}"] = {
            "src": article,
            "ref_summ": sentence(6),
            "ref_summs": [sentence(6)],
            "sys_summs": {
                f"M{system}": {
                    "sys_summ": sentence(draw.randint(3, 7)),
                    "scores": {
                        a: float(draw.randint(1, 5)) for a in ("coherence", "consistency", "fluency", "relevance")
                    },
                }
                for system in range(systems)
            },
        }
    return data
