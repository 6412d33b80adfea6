"""The property vocabulary an author names in a spec: each property a record class with ``plan`` and ``judge``.

``base`` holds the ``Check`` contract (plan calls for a case, judge their
outcomes into a ``Finding``), ``cases`` the deterministic input generators,
``display`` how values and calls are written, ``numbers`` closeness; the
properties themselves are ``properties``, ``general``, ``identity`` (with its
relation language, ``expressions``), ``float_errors``, ``guard``, ``bridge``,
``calculus``, ``form``, ``witness``, ``statistics`` and ``experiment``.
``registry`` gathers every property into the tagged union that specs are
validated against. Nothing here runs a plan or talks to a learner process:
that is the engine's. It may import the sandbox's call and outcome types,
the cache and the foundation; never spec, the engine or anything above.
"""
