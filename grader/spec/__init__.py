"""Exercise specs: their records, their validation with pydantic, and the YAML loader that reports file and line.

It owns what a spec may say (``models``), reading every spec into a
``Catalog`` or one error with file:line and "did you mean" (``loader``,
``errorpick``), the names a spec's parts give one another (``crossrefs``),
the one list of files a spec reads (``files``), where the specs are
(``folder``) and ``grader list``'s rows (``listing``). It may import checks
(the properties a spec names), the cache and the foundation; never the
engine, grading or anything above.
"""
