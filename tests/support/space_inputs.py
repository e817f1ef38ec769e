"""What the Space's tests type into it and upload: an article (SOURCE) with its REFERENCES and three CANDIDATES, and
the Batch tab's CSV files: OUTPUT_ROWS (three systems' outputs per row, some empty) by write_outputs_csv, and
DOCUMENTS (a close and a far output of each source) by write_documents_csv."""

import csv

SOURCE = (
    "The city council voted on Tuesday to build a new library on the site of the old bus depot. "
    "Work starts next spring and most of the cost is paid by a state grant."
)
REFERENCES = ["The council approved a new library on the old depot site.", "A library will replace the bus depot."]
CANDIDATES = [
    "The council voted to build a new library on the old bus depot site.",
    "The council rejected a new stadium and closed the library.",
    "A new library, paid by a state grant, will be built where the bus depot was.",
]

OUTPUT_ROWS = [
    [
        f"doc{i}",
        f"{SOURCE} Item {i}.",
        REFERENCES[0],
        REFERENCES[1] if i % 2 else "",
        CANDIDATES[0] + f" ({i})",
        CANDIDATES[1],
        CANDIDATES[2] if i % 3 else "",
    ]  # an empty output is scored as the empty text
    for i in range(6)
]

DOCUMENTS = [
    ("The council voted to build a library.", "A library will be built.", "A new library.", "The vote failed."),
    ("Heavy rain closed the main road on Monday.", "Rain closed the road.", "The road closed.", "It was sunny."),
    ("The team won the final after extra time.", "The team won the final.", "They won.", "The team lost."),
    ("Prices at the market rose for a third week.", "Market prices rose again.", "Prices rose.", "Prices fell."),
    ("A new bridge opened across the river today.", "The bridge opened.", "A bridge opened.", "No bridge."),
]


def write_outputs_csv(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "source", "reference_1", "reference_2", "good", "bad", "odd"])
        writer.writerows(rows)
    return str(path)


def write_documents_csv(path):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["source", "reference", "close", "far"])
        writer.writerows(DOCUMENTS)
    return str(path)
