"""The check library: reusable, parametrised properties that specs name and configure.

``base`` holds the ``Check`` contract, ``cases`` the deterministic input
generators, ``properties`` and ``witness`` the properties themselves,
``instructor_runs`` the exercise's own solutions run like learners' (the
reference gives every expected value; no answer is implemented here), ``quiz``
the grading of answers. ``registry`` gathers every property into the tagged
union that specs are validated against.
"""
