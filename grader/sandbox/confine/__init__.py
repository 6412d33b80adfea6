"""Kernel confinement for the learner process (standard library + ctypes only).

Each layer lives in its own module, imported by name: ``privileges``
(capabilities, limits, and the trusted parent's calls), ``landlock``
(:func:`~landlock.restrict`, :func:`~landlock.abi_version`,
:func:`~landlock.python_read_paths`) and ``seccomp``
(:func:`~seccomp.install_filter`, :func:`~seccomp.available`);
``process.apply_layers`` applies them in order. This package imports none
of them: the grading process needs only ``privileges``, and the other two
cost a cold grade their import for layers only the warm parent's children
apply.

The child applies these layers, in this order, after importing numpy and
before importing the submission, while it is still single-threaded
(``OPENBLAS_NUM_THREADS=1``; :func:`thread_count` must be 1):

1. :func:`drop_capabilities` (only matters as root): empties the bounding,
   effective, permitted, inheritable and ambient sets. Stops a root child from
   raising its hard rlimits, ``setuid``, ``chroot``, signalling any process,
   loading modules, chown-ing files.
2. :func:`set_limits`: CPU (SIGXCPU then SIGKILL), address space
   (MemoryError instead of the OOM killer), file size, open files, no core
   files, no message queues or locked memory. Stops busy loops and memory
   bombs; the parent's wall clock stops sleepers.
3. :func:`restrict` (Landlock, unprivileged): reads only beneath an
   allow-list (:func:`python_read_paths`: stdlib entries, numpy, system
   libraries; never site-packages as a whole, the grader or the exercises),
   writes only to ``/dev/null``, no TCP bind/connect (ABI >= 4), no signals or
   abstract sockets leaving the domain (ABI >= 6). Stops reading hidden
   checks, answer keys and other submissions, damaging files, and TCP.
   Metadata (``stat``) still leaks; UDP needs seccomp, and so do signals
   on kernels before 6.12 (ABI < 6).
4. :func:`install_filter` (seccomp-BPF deny list, all threads via TSYNC): no
   fork/vfork/exec or non-thread clone, no sockets, ``kill``/``tgkill`` only to
   itself, no descriptor owners (``F_SETOWN``, ``F_SETSIG``, ``FIOSETOWN``...:
   signals without ``kill``), scheduling, nice, affinity and I/O priority
   changes only for itself, no ptrace/process_vm_*, namespaces, mounts,
   keyrings, IPC objects, io_uring, bpf, no change to a file's mode, owner,
   times or extended attributes (Landlock has no right for those), or
   privileged calls (set*id, setrlimit, reboot, modules...).
   With ``read_only_fs=True`` (when Landlock is missing) also no write-mode
   ``open``, unlink, rename, mkdir, truncate... Stops fork bombs,
   daemons, the network, signalling the grader, slowing other learners down
   and privilege games.

For the trusted parent: :func:`set_non_dumpable` (its ``/proc/<pid>/environ``
and ``mem`` become unreadable to a same-uid child), :func:`set_child_subreaper`
and :func:`kill_descendants` (nothing the child started survives it).

Each layer raises ``OSError`` (or ``RuntimeError`` for a multi-threaded
process) when it cannot be applied; callers decide the sandbox tier from
:func:`landlock.abi_version` and :func:`seccomp.available` and record what held.
"""
