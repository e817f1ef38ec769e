"""The evaluate metric's module, as the tests load it: ``evaluate.load(MODULE, checkpoint, ...)``."""

import os

MODULE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "bartscore.py")
