"""Landlock: an unprivileged allow-list for file access, TCP and IPC scoping.

After :func:`restrict` the calling thread (and everything it later starts)
can only read, execute, list or write beneath the paths it was given; TCP
bind/connect are denied (ABI >= 4); signals and abstract UNIX sockets cannot
reach processes outside the domain (ABI >= 6). Landlock does not hide
``stat()`` metadata, and UDP is not covered before ABI 10 (seccomp's
``socket`` deny covers that).
"""

from __future__ import annotations

import ctypes
import errno
import functools
import glob
import importlib.util
import os
import stat
import sysconfig
from collections.abc import Iterable
from typing import Any, NamedTuple

from ._libc import PR_SET_NO_NEW_PRIVS, fail, libc, prctl, syscall, thread_count

# The numbers are the same on x86_64 and aarch64 (asm-generic table).
SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
CREATE_RULESET_VERSION = 1 << 0
RULE_PATH_BENEATH = 1

# LANDLOCK_ACCESS_FS_* (include/uapi/linux/landlock.h).
EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6

HIGHEST_KNOWN_ABI = 7  # rights beyond this ABI are unknown here, so never handled
# Rights a rule on a non-directory may carry; anything else gives EINVAL.
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
READ_RIGHTS = EXECUTE | READ_FILE | READ_DIR
WRITE_RIGHTS = READ_FILE | READ_DIR | WRITE_FILE | TRUNCATE | IOCTL_DEV | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1  # the kernel struct is packed: 12 bytes
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _probe() -> tuple[int, int]:
    result = syscall(SYS_LANDLOCK_CREATE_RULESET, None, 0, CREATE_RULESET_VERSION)
    if result < 0:
        return 0, ctypes.get_errno()
    return min(int(result), _abi_cap()), 0


def _abi_cap() -> int:
    """The highest ABI to report and use: ``GRADER_LANDLOCK_ABI_CAP``, a test-only switch playing an older kernel.

    With 5, no signal or abstract-socket scoping is applied, as on kernels
    before 6.12, so tests can prove that seccomp alone covers those paths.
    Unset (or not a number): no cap.
    """
    try:
        return max(0, int(os.environ.get("GRADER_LANDLOCK_ABI_CAP", "")))
    except ValueError:
        return 1 << 30


def abi_version() -> int:
    """The kernel's Landlock ABI version, or 0 when Landlock cannot be used.

    0 covers ENOSYS (not built in), EOPNOTSUPP (disabled at boot), EPERM
    (blocked by an outer seccomp profile) and any other error, so callers can
    decide their sandbox tier from a single number.
    """
    try:
        return _probe()[0]
    except Exception:
        return 0


def _fs_rights(abi: int) -> int:
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


def _create_ruleset(abi: int) -> tuple[int, int]:
    """Create a ruleset for ``abi``; on EINVAL retry one ABI lower."""
    while abi >= 1:
        attr = _RulesetAttr(
            _fs_rights(abi),
            NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0,
            SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0,
        )
        size = 24 if abi >= 6 else 16 if abi >= 4 else 8
        fd = syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), size, 0)
        if fd >= 0:
            return int(fd), abi
        err = ctypes.get_errno()
        if err != errno.EINVAL:
            raise fail("landlock_create_ruleset", err)
        abi -= 1
    raise OSError(errno.EINVAL, "landlock_create_ruleset failed: no ABI level accepted")


class Opened(NamedTuple):
    """A path opened ahead of :func:`restrict` (``O_PATH``): a warm parent opens its allow-list once,
    and each process it forks adds its rules from these descriptors instead of opening every path again."""

    path: str
    fd: int
    is_dir: bool


def open_ahead(paths: Iterable[str]) -> list[Opened]:
    """``Opened`` descriptors of the ``paths`` that exist (close them with :func:`close_ahead`)."""
    opened = []
    for path in paths:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue  # missing now: restrict() would skip it too
        opened.append(Opened(path, fd, stat.S_ISDIR(os.fstat(fd).st_mode)))
    return opened


def close_ahead(opened: Iterable[Any]) -> None:
    """Close the descriptors of ``Opened`` items (plain paths among them are ignored).

    Descriptors opened one after another have consecutive numbers: each run
    of them is closed with one ``closerange`` (one system call on Linux 5.9+).
    """
    fds = sorted({item.fd for item in opened if isinstance(item, Opened)})
    start = 0
    for end in range(1, len(fds) + 1):
        if end == len(fds) or fds[end] != fds[end - 1] + 1:  # the run fds[start:end] ends here
            os.closerange(fds[start], fds[end - 1] + 1)
            start = end


def prepare_rules(read_paths: Iterable[Opened], list_paths: Iterable[Opened] = ()) -> None:
    """Build now the rules :func:`restrict` will add for these descriptors, in a process about to fork many.

    A warm parent's learner processes all add the same ~280 rules: built
    once here, each fork finds them ready and only makes the system calls.
    """
    abi = abi_version()
    if abi < 1:
        return  # nothing to prepare: restrict() will refuse
    handled = _fs_rights(min(abi, HIGHEST_KNOWN_ABI))
    for rights, opened in ((READ_RIGHTS, read_paths), (READ_DIR, list_paths)):
        for item in opened:
            access = _access(item.is_dir, rights, handled)
            if access:
                _rule(item.fd, access)


def prepared_rules() -> int:
    """How many rule arguments are built and kept, ready for :func:`restrict` (what :func:`prepare_rules` adds)."""
    return _rule.cache_info().currsize


# Kept by (descriptor, rights): what a rule holds is exactly its key, so an entry never goes stale; the least
# recently used gives way when full, so rules prepared later are still kept.
@functools.lru_cache(maxsize=4096)
def _rule(fd: int, access: int) -> Any:
    """The ``landlock_add_rule`` argument allowing ``access`` beneath ``fd``: prepared, or built now."""
    return ctypes.byref(_PathBeneath(access, fd))


def _access(is_dir: bool, wanted: int, handled: int) -> int:
    return (wanted if is_dir else wanted & FILE_RIGHTS) & handled


_ADD_RULE_ARGS = (ctypes.c_long(SYS_LANDLOCK_ADD_RULE), ctypes.c_long(RULE_PATH_BENEATH), ctypes.c_long(0))


def _add_rule(ruleset_fd: int, path: str | Opened, wanted: int, handled: int) -> bool:
    """Allow ``wanted`` beneath ``path``; False when the path does not exist."""
    if isinstance(path, Opened):
        return _add_rule_at(ruleset_fd, path.fd, path.is_dir, wanted, handled, path.path)
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise OSError(exc.errno, f"landlock: cannot open {path!r}: {exc.strerror}") from exc
    try:
        return _add_rule_at(ruleset_fd, fd, stat.S_ISDIR(os.fstat(fd).st_mode), wanted, handled, path)
    finally:
        os.close(fd)


def _add_rule_at(ruleset_fd: int, fd: int, is_dir: bool, wanted: int, handled: int, path: str) -> bool:
    access = _access(is_dir, wanted, handled)
    if not access:
        return True
    number, kind, zero = _ADD_RULE_ARGS  # full machine words, as ``syscall`` would pass them
    if libc.syscall(number, ctypes.c_long(ruleset_fd), kind, _rule(fd, access), zero) < 0:
        raise fail(f"landlock_add_rule({path!r})")
    return True


def restrict(
    read_paths: Iterable[str | Opened],
    write_paths: Iterable[str | Opened] = (),
    *,
    list_paths: Iterable[str | Opened] = (),
) -> int:
    """Confine this process with Landlock; return the ABI level enforced.

    ``read_paths`` get read+execute (directories also READ_DIR), ``write_paths``
    read+write (files: WRITE_FILE|READ_FILE|TRUNCATE|IOCTL_DEV; directories also
    create/remove), ``list_paths`` only READ_DIR. Missing paths are skipped.
    Any path may be given as an ``Opened`` descriptor (see :func:`open_ahead`).
    Everything else on the filesystem, all TCP bind/connect (ABI >= 4) and
    signals/abstract sockets leaving the domain (ABI >= 6) are denied. Sets
    no_new_privs (required by the kernel). Refuses (RuntimeError) when the
    process has several threads: below ABI 8 only the calling thread would be
    confined. Raises OSError when Landlock is unavailable or a call fails.
    """
    ruleset_fd, abi = build_ruleset(read_paths, write_paths, list_paths=list_paths)
    try:
        return restrict_with(ruleset_fd, abi)
    finally:
        os.close(ruleset_fd)


def build_ruleset(
    read_paths: Iterable[str | Opened],
    write_paths: Iterable[str | Opened] = (),
    *,
    list_paths: Iterable[str | Opened] = (),
) -> tuple[int, int]:
    """A ruleset descriptor holding :func:`restrict`'s rules for these paths, and its ABI level.

    A warm parent builds one per scratch folder and keeps it: each learner
    process it forks for that folder then confines itself with
    :func:`restrict_with`, one system call instead of ~280. The ruleset must
    never reach code that is not trusted: a rule added to it would reach
    every later process confined with it (the learner process closes it
    before importing anything, and its seccomp filter refuses Landlock calls).
    """
    kernel_abi, err = _probe()
    if kernel_abi < 1:
        raise OSError(err or errno.ENOSYS, f"Landlock is not available: {os.strerror(err or errno.ENOSYS)}")
    ruleset_fd, abi = _create_ruleset(min(kernel_abi, HIGHEST_KNOWN_ABI))
    try:
        handled = _fs_rights(abi)
        for rights, paths in ((READ_RIGHTS, read_paths), (WRITE_RIGHTS, write_paths), (READ_DIR, list_paths)):
            for path in paths:
                _add_rule(ruleset_fd, path if isinstance(path, Opened) else os.fspath(path), rights, handled)
    except BaseException:
        os.close(ruleset_fd)
        raise
    return ruleset_fd, abi


def restrict_with(ruleset_fd: int, abi: int) -> int:
    """Confine this process with a ruleset :func:`build_ruleset` made; return ``abi``. The caller closes it."""
    _single_threaded()
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    if syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset_fd, 0) < 0:
        raise fail("landlock_restrict_self")
    return abi


def _single_threaded() -> None:
    if thread_count() > 1:
        raise RuntimeError("landlock.restrict: the process has several threads; confine it while it is single-threaded")


class PythonPaths(NamedTuple):
    """What a confined Python child needs: ``restrict(p.read_paths, list_paths=p.list_paths)``."""

    read_paths: list[str]
    list_paths: list[str]


def _is_within(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def _package_paths(name: str) -> tuple[list[str], list[str]]:
    """Files/dirs of top-level package ``name`` (+ ``name.libs``) and their parents."""
    top = name.partition(".")[0]  # find_spec of a dotted name would import the parent
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return [], []
    if spec is None:
        return [], []
    locations = list(spec.submodule_search_locations or [])
    if not locations and spec.origin and os.path.isabs(spec.origin):
        locations = [spec.origin]
    reads, parents = [], []
    for location in locations:
        parent = os.path.dirname(os.path.abspath(location))
        reads.append(location)
        libs = os.path.join(parent, top + ".libs")
        if os.path.isdir(libs):
            reads.append(libs)
        parents.append(parent)
    return reads, parents


def python_read_paths(extra_packages: Iterable[str] = ("numpy",)) -> PythonPaths:
    """The allow-lists a confined Python child needs, as ``PythonPaths``.

    ``read_paths``: every entry of the stdlib directory except
    site-packages/dist-packages (on pyenv and system Pythons site-packages
    sits inside the stdlib, so granting the directory would grant every
    installed package, the grader included), lib-dynload, libpython, the
    ``extra_packages`` directories with their ``<name>.libs`` siblings,
    ``/usr/lib`` entries except ``python*``, ``/lib``/``/lib64`` (skipped when
    they are symlinks to ``/usr/lib``), ``/etc/ld.so.cache`` and
    ``/dev/urandom``. Any path that would contain a site-packages directory is
    dropped. ``list_paths`` (READ_DIR only): the stdlib directory and the
    directories holding ``extra_packages``, so the import system can list them
    to import those packages after confinement.
    """
    paths = sysconfig.get_paths()
    stdlib_dirs = [p for p in dict.fromkeys((paths.get("stdlib"), paths.get("platstdlib"))) if p]
    reads: list[str] = []
    lists: list[str] = list(stdlib_dirs)
    for stdlib in stdlib_dirs:
        try:
            entries = sorted(os.listdir(stdlib))
        except OSError:
            continue
        reads += [os.path.join(stdlib, e) for e in entries if e not in ("site-packages", "dist-packages")]
    dynload = sysconfig.get_config_var("DESTSHARED")
    if dynload:
        reads.append(dynload)
    libdir = sysconfig.get_config_var("LIBDIR")
    if libdir:
        reads += sorted(glob.glob(os.path.join(libdir, "libpython*.so*")))
    for name in extra_packages:
        pkg_reads, pkg_parents = _package_paths(name)
        reads += pkg_reads
        lists += pkg_parents
    usr_lib = os.path.realpath("/usr/lib")
    try:
        reads += [os.path.join("/usr/lib", e) for e in sorted(os.listdir("/usr/lib")) if not e.startswith("python")]
    except OSError:
        pass
    reads += [p for p in ("/lib", "/lib64") if os.path.realpath(p) != usr_lib]
    reads += ["/etc/ld.so.cache", "/dev/urandom"]

    site_dirs = {os.path.realpath(p) for p in (paths.get("purelib"), paths.get("platlib")) if p}
    for stdlib in stdlib_dirs:
        site_dirs |= {os.path.realpath(os.path.join(stdlib, d)) for d in ("site-packages", "dist-packages")}
    resolved = Resolver()
    safe = [p for p in reads if not any(_is_within(s, resolved(p)) for s in site_dirs)]
    return PythonPaths(list(dict.fromkeys(safe)), list(dict.fromkeys(lists)))


class Resolver:
    """``os.path.realpath`` for many entries of few folders: each folder resolved once, each entry one ``lstat``.

    A warm parent resolves ~270 paths before it can answer; resolving every
    component of each of them took it about 15 ms.
    """

    def __init__(self) -> None:
        self.folders: dict[str, str] = {}

    def __call__(self, path: str) -> str:
        folder, name = os.path.split(path)
        if not name or name in (".", "..") or os.path.islink(path):
            return os.path.realpath(path)
        if folder not in self.folders:
            self.folders[folder] = os.path.realpath(folder)
        return os.path.join(self.folders[folder], name)
