"""Batch grading: a whole class, in parallel, resumable, with a gradebook and a class picture.

``run_batch(directory, *, assignment, out, ...)`` is the API; ``grader batch``
is a thin layer over it. It may import grading, the engine's session memo,
report, submission, spec, the sandbox and the foundation; never cli,
authoring or export. Modules::

    learners.py   who is in the class, and a safe file name for each learner
    fingerprint.py  what of a learner's files a result key covers
    cache.py      result keys, the commit marker, atomic writes
    outdir.py     the output folder: never the class folder's or a learner's, and writable
    worker.py     grading one learner inside a worker process, until its files held still
    executors.py  the local process pool and the Dask executor (one small interface)
    affinity.py   a core for each grading process
    progress.py   a bar on a terminal, plain lines in a log
    gradebook.py  gradebook.csv, with status.py the status of each exercise
    summary.py    class statistics, summary.md and the terminal summary
    items.py      quiz item statistics: facility, discrimination, options, quiz-items.csv
    html.py       report.html: roster, charts that fit the window, the checks that matter first
    roster.py     a row per learner for report.html: score, statuses, feedback link
    mistakes.py   shared uncatalogued mistakes: learners failing a check with the same output
    mistake_stub.py  grader batch-mistake: a group's example written out as a known-wrong stub
    overrides.py  the instructor's overrides file, applied to results as graded
    code_tokens.py  learner code as a normalised token stream (names, literals, layout, order set aside)
    similarity.py   pairs of learners alike: winnowed fingerprints and wrong outputs, weighed by rarity
    similarity_inputs.py  each learner's code and wrong outputs, as the similarity page reads them
    similarity_html.py    similarity.html (``--similarity`` only; the instructor's, never a learner's)
    run.py        run_batch, tying them together
"""

from __future__ import annotations

from grader.batch.run import BatchSummary, run_batch

__all__ = ["BatchSummary", "run_batch"]
