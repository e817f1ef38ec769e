"""The BARTScore Space apart from its layout (app.py, beside this package), one concern a module:

    settings    the operator's settings (app.py's docstring lists them); the menu's models, checked, loaded and kept
    menu        the menu's models as the page describes them (their kind, a saved baseline), without loading weights
    form        what the user typed or chose, read and checked before any model loads
    examples    the Compare tab's examples
    candidates  the Compare tab: candidates scored with their reference points, the tables and the chart's rows
    verdict     the Compare tab's verdict: which candidate comes first, and where the directions disagree
    heatmap     the Compare tab's token heatmap (HTML and CSS)
    batch       the Batch tab: uploads read under the Space's limits, every system scored and compared, the CSV, the
                tables' column widths and a phone's cards
    plots       the Compare tab's bar chart and the Batch tab's means with confidence intervals (SVG and CSS)
    guards      unloadable models, special tokens in a user's text, formulas in downloads, memory after a job
    routes      every route Gradio serves, bounded (its body, each client's requests) or turned off (an ASGI middleware)
    uploads     uploads kept on the server's disk within limits per client and overall (an ASGI middleware)
    clients     who sent a request, as the per-client limits count it, named by the operator's trusted proxies
    jobs        one scoring computation at a time, stopped when its job is cancelled
    wiring      the order of each event's inputs and outputs, one dataclass field per Gradio component, from which a
                handler's signature (the API's parameters) comes
    feedback    what a scoring request ends with: the status line, the fields' marks, API errors and warnings
    naming      the page's words for what the library's messages name: each field by its label, files without folders
    fields      the page's input fields, which refuse values of the wrong type before any handler sees them
    handlers    the page's event handlers, which app.py wires: each tab's API and page entries, the other events
    events      each tab's scoring events wired to its handlers, on the queue's one scoring slot, without estimates

Gradio is imported by feedback, fields, handlers and events only: the other modules work without it.

A Hugging Face Space runs from the repository root, where this package is importable; the bartscore wheel leaves it
out (it is not part of the library)."""
