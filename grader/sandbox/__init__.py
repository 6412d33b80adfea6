"""The learner process: how it is started, confined and talked to.

Learner code never runs in the grader's process. A warm parent (a fresh
interpreter with a minimal environment that has imported numpy and nothing
of the grader's checks) forks one child per exercise; the
child confines itself, imports the submission and answers calls. Only
numbers come back, as ``.npy`` payloads decoded without pickle. It reports
facts (``outcomes``); the engine phrases them.

It is the bottom layer: importable with the standard library and numpy
alone, and it imports nothing of the grader but the foundation (``errors``,
``results``, ``memo``).
"""
