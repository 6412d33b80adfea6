"""What runs an exercise's plan on a submission and turns outcomes into results.

Data flows one way: ``plan`` (an exercise's cases as calls, numbered in a
table), ``call_loop`` (the calls sent to a learner process, with the import,
the time budget and a new process after a crash), ``check_results`` (a
check's result from its answered cases), ``findings`` (each case judged,
remembered per exact output), ``failure_modes`` and ``defaults``
(how a failing case failed), ``diagnosis`` (a known mistake, named only when
shown), ``credit`` (which passing checks earn points), ``reasons`` (the
sentences a learner reads), ``printed`` (what each check's calls printed).
``instructor_runs`` gets the reference's and known-wrong solutions'
answers, ``memory`` is what a grading session remembers, ``disk_cache``
what is kept between runs, and ``quiz`` grades answers files. It may
import spec, checks, the cache, sandbox and the foundation; never grading,
cli, batch, authoring, export or report.
"""
