"""What a learner hands in, read as bounded, untrusted input.

It owns reading a submission (a ``.py`` file, a notebook, an answers file or
a folder of them: ``files``), a notebook's code cells as Python
(``notebook``, leaving out the grader's own calls: ``grader_cells``),
answers files (``answers``), the suffixes and size caps of each kind of file
(``formats``, shared by the readers and the command line), which names a
file binds and which file is graded for an entry (``bindings``,
``entry_files``), and the bounded excerpts of learner text quoted back
(``excerpts``). Nothing here runs learner code: every parser is linear and
capped. It may import only the foundation modules (``errors``,
``safeyaml``) and the package root's ``__all__`` (the names
``from grader import *`` binds).
"""
