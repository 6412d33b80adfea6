"""The kinds of file a submission is graded from: their suffixes, and the most each may hold.

Apart from the readers (``answers``, ``notebook``), so that whatever only
checks a name or a size (reading a folder, telling standard input apart,
a batch's fingerprints) imports no reader of a kind it is not handed: a
grade of one ``.py`` file never loads the notebook or answers-file parser.
"""

from __future__ import annotations

__all__ = [
    "ANSWER_SUFFIXES",
    "GRADED_SUFFIXES",
    "MAX_ANSWERS_BYTES",
    "MAX_CODE_BYTES",
    "MAX_NOTEBOOK_BYTES",
    "NOTEBOOK_SUFFIX",
    "PYTHON_SUFFIX",
]

PYTHON_SUFFIX = ".py"
NOTEBOOK_SUFFIX = ".ipynb"
ANSWER_SUFFIXES = (".yaml", ".yml", ".json")
# The suffixes of the files a submission is graded from (Python, notebooks, quiz answers files).
GRADED_SUFFIXES = (PYTHON_SUFFIX, NOTEBOOK_SUFFIX, *ANSWER_SUFFIXES)

MAX_CODE_BYTES = 1 << 20  # what a .py file, or a notebook's code cells, may hold: the code is what gets graded
MAX_NOTEBOOK_BYTES = 16 << 20  # outputs (plots) make notebooks large; their code is small
# The handout's answers template (every question, its options as comments) is a few KiB: this leaves
# room for more quizzes and a learner's own notes, and keeps a hostile file cheap to read or refuse.
MAX_ANSWERS_BYTES = 32 * 1024
