"""The check library: reusable, parametrised properties that specs name and configure.

``base`` holds the ``Check`` contract, ``cases`` the deterministic input
generators, ``properties`` and ``witness`` the properties themselves,
``references`` the trusted implementations they compare against, ``quiz``
the grading of answers. ``registry`` gathers every property into the tagged
union that specs are validated against.
"""
