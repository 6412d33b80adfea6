"""Checking work from inside a Jupyter notebook: ``grader.check("stable-softmax")``.

It owns reading what a running kernel holds (``kernel``: the code cells it
ran, from IPython's input history, and the notebook's path where the front
end says it), finding the handout's public checks and grading that code
against them (``check``), and the object a notebook shows for the result
(``display``: HTML in Jupyter, text elsewhere, both written by
``grader.report``). The learner's code still runs in the sandbox, never in
the kernel. It may import grading, report, submission, spec, the sandbox
and the foundation; never cli, batch, authoring or export.
"""
