"""Tests for grader.sandbox.confine: each confinement runs in a fresh child interpreter.

A child runs ``PRELUDE + code``; the code records outcomes in ``results`` with
``attempt(fn)`` (the exception class name, or "ok") and the test asserts on
the JSON it prints. Confinement is never applied to the pytest process.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import signal
import site
import socket
import struct
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest
from bystander import Bystander

from grader.sandbox.confine import landlock, seccomp
from grader.sandbox.confine.syscalls import ARCHES

REPO = Path(__file__).resolve().parents[1]
PRELUDE = f"""\
import json, os, sys
sys.path.insert(0, {str(REPO)!r})
from grader.sandbox.confine import landlock, privileges, seccomp
results = {{}}
def attempt(fn):
    try:
        fn()
    except BaseException as exc:
        return type(exc).__name__
    return "ok"
"""
CHILD_ENV = {
    "PATH": "/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}

ABI = landlock.abi_version()
needs_landlock = pytest.mark.skipif(ABI == 0, reason="Landlock is not available on this kernel")
needs_seccomp = pytest.mark.skipif(not seccomp.available(), reason="seccomp filters are not available here")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs to run as root (uid 0)")


def run_child(code: str, timeout: float = 20) -> dict:
    """Run ``code`` in ``python -I``; return the JSON dict it printed last."""
    source = PRELUDE + textwrap.dedent(code) + "\nprint(json.dumps(results))\n"
    proc = subprocess.run(
        [sys.executable, "-I", "-c", source], capture_output=True, text=True, timeout=timeout, env=CHILD_ENV, cwd="/"
    )
    assert proc.returncode == 0, f"child exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_abi_version_returns_non_negative_int():
    assert isinstance(ABI, int) and ABI >= 0


def test_python_read_paths_excludes_site_packages_and_grader():
    paths = landlock.python_read_paths()
    numpy_dir = os.path.dirname(importlib.util.find_spec("numpy").origin)
    sites = {os.path.realpath(p) for p in site.getsitepackages()}
    for read in paths.read_paths:
        real = os.path.realpath(read)
        for site_dir in sites:
            assert not (site_dir + "/").startswith(real.rstrip("/") + "/"), (read, site_dir)
        assert not (str(REPO) + "/").startswith(real.rstrip("/") + "/"), read
    assert numpy_dir in paths.read_paths
    assert sysconfig.get_paths()["stdlib"] in paths.list_paths
    assert "/etc/ld.so.cache" in paths.read_paths


def test_seccomp_build_program_resolves_for_every_arch():
    for machine in ("x86_64", "aarch64"):
        for read_only in (False, True):
            prog = seccomp.build_program(machine, 4242, read_only_fs=read_only)
            assert 0 < len(prog) < 4096
            assert all(len(i) == 4 and all(isinstance(v, int) for v in i) for i in prog)
            assert prog[0] == (0x20, 0, 0, 4)  # load arch first
            assert prog[-1] == (0x06, 0, 0, 0x7FFF0000)  # default: allow
    x86 = seccomp.build_program("x86_64", 1)
    arm = seccomp.build_program("aarch64", 1)
    assert any(code == 0x35 and k == 0x40000000 for code, _, _, k in x86)  # x32: x86_64 only
    assert not any(code == 0x35 for code, *_ in arm)


def _run_filter(program: list[tuple[int, int, int, int]], arch: int, nr: int, *args: int) -> int:
    """What a classic BPF seccomp program returns for one system call (the opcodes ``build_program`` uses)."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, *(a & (1 << 64) - 1 for a in (*args, 0, 0, 0, 0, 0, 0)[:6]))
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = program[pc]
        pc += 1
        if code == 0x20:  # LD W ABS
            acc = struct.unpack_from("<I", data, k)[0]
        elif code == 0x05:  # JA
            pc += k
        elif code in (0x15, 0x35, 0x45):  # JEQ, JGE, JSET
            pc += jt if (acc == k, acc >= k, bool(acc & k))[(0x15, 0x35, 0x45).index(code)] else jf
        else:
            assert code == 0x06, code  # RET
            return k


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_seccomp_program_refuses_descriptor_owners_and_other_processes_by_argument(machine):
    """Decided on the arguments the kernel reads (low 32 bits of an int, pid_t or unsigned int), on both arches."""
    arch, table = ARCHES[machine]
    allow, eperm = 0x7FFF0000, 0x00050001
    me = 4242
    for read_only in (False, True):
        program = seccomp.build_program(machine, me, read_only_fs=read_only)

        def verdict(name, *args, program=program):
            return _run_filter(program, arch, table[name], *args)

        for cmd in (8, 10, 15, 1024, (1 << 32) | 8):  # F_SETOWN, F_SETSIG, F_SETOWN_EX, F_SETLEASE; high bits ignored
            assert verdict("fcntl", 3, cmd, me) == eperm, cmd
        for cmd in (1, 3, 4, 9, 1026, 1030, 1031):  # F_GETFD, F_GETFL, F_SETFL, F_GETOWN, F_NOTIFY, F_DUPFD_CLOEXEC...
            assert verdict("fcntl", 3, cmd, 0) == allow, cmd
        assert verdict("fcntl", 3, 4, os.O_NONBLOCK | os.O_APPEND) == allow  # F_SETFL...
        assert verdict("fcntl", 3, 4, 0o20000) == verdict("fcntl", 3, 4, 0o20000 | os.O_NONBLOCK) == eperm  # O_ASYNC
        for cmd in (0x8901, 0x8902, 0x5452, 0x5410, 0x5412, 0x40045436):  # FIOSETOWN, SIOCSPGRP, FIOASYNC, TIOC...
            assert verdict("ioctl", 3, cmd, 0) == eperm, cmd
        for cmd in (0x5401, 0x541B, 0x5421, 0x5451):  # TCGETS, FIONREAD, FIONBIO, FIOCLEX
            assert verdict("ioctl", 3, cmd, 0) == allow, cmd
        for name in seccomp.SELF_ONLY:
            assert verdict(name, 0) == verdict(name, me) == verdict(name, 1 << 32) == allow, name
            assert verdict(name, me + 1) == verdict(name, 1) == verdict(name, -me) == eperm, name
        assert verdict("setpriority", 0, 0, 19) == verdict("setpriority", 0, me, 19) == allow
        assert verdict("setpriority", 0, me + 1, 19) == eperm
        assert verdict("setpriority", 1, 0, 19) == verdict("setpriority", 2, 0, 19) == eperm  # PRIO_PGRP, PRIO_USER
        assert verdict("ioprio_set", 1, 0, 0) == verdict("ioprio_set", 1, me, 0) == allow
        assert verdict("ioprio_set", 1, 7, 0) == eperm
        assert verdict("ioprio_set", 2, 0, 0) == verdict("ioprio_set", 3, 0, 0) == eperm  # a group, a user
        assert verdict("kill", me, 9) == verdict("tgkill", me, me, 9) == allow
        assert verdict("kill", 0, 9) == verdict("kill", -1, 9) == verdict("kill", me + 1, 9) == eperm
        assert verdict("kcmp", me, me, 0) == verdict("process_mrelease", 3, 0) == eperm
        assert _run_filter(program, arch, 39 if machine == "x86_64" else 172) == allow  # getpid


def test_a_prepared_seccomp_program_with_a_pid_patched_in_is_the_one_built_for_that_pid():
    """The warm parent assembles the filter once; each learner process only sets its own pid in it."""
    for machine in ("x86_64", "aarch64"):
        for read_only in (False, True):
            array, where = seccomp.prepared_program(machine, read_only)
            for pid in (4242, 1 << 22, 7):
                array[where].k = pid
                patched = [(i.code, i.jt, i.jf, i.k) for i in array]
                assert patched == seccomp.build_program(machine, pid, read_only_fs=read_only)


@pytest.mark.slow
@needs_landlock
@pytest.mark.parametrize("ahead", [False, True, "prepared"], ids=["paths", "opened-ahead", "prepared"])
def test_restrict_denies_reads_writes_outside_allow_list(tmp_path, ahead):
    """The same allow-list given as paths, as descriptors a warm parent opened ahead (``landlock.Opened``),
    or as those descriptors with their rules built ahead (``landlock.prepare_rules``)."""
    canary = tmp_path / "answer_key.txt"
    canary.write_text("secret 42")
    target = f"/tmp/confine-test-{os.getpid()}-{tmp_path.name}"
    out = run_child(f"""
        import numpy
        from grader.sandbox.confine import landlock
        paths = landlock.python_read_paths()
        read, listed = paths.read_paths + ["/does/not/exist"], paths.list_paths
        if {ahead!r}:
            read, listed = landlock.open_ahead(read), landlock.open_ahead(listed)
        if {ahead!r} == "prepared":
            landlock.prepare_rules(read, listed)
        prepared = landlock.prepared_rules()
        results["abi"] = landlock.restrict(read, ["/dev/null"], list_paths=listed)
        results["built_during"] = landlock.prepared_rules() - prepared
        results["prepared"] = prepared
        landlock.close_ahead(read + listed)
        results["read_canary"] = attempt(lambda: open({str(canary)!r}).read())
        results["list_tmp"] = attempt(lambda: os.listdir({str(tmp_path)!r}))
        results["write_tmp"] = attempt(lambda: open({target!r}, "w").write("x"))
        results["write_devnull"] = attempt(lambda: open("/dev/null", "w").write("x"))
        results["numpy"] = float(numpy.exp(numpy.zeros(3)).sum())
        results["fresh_stdlib"] = attempt(lambda: __import__("fractions"))
        results["pytest"] = attempt(lambda: __import__("pytest"))
    """)
    assert out["abi"] == min(ABI, 7)
    if ahead == "prepared":  # every read and list rule was ready; only /dev/null's was built
        assert out["prepared"] > 100 and out["built_during"] == 1
    assert out["read_canary"] == "PermissionError"
    assert out["list_tmp"] == "PermissionError"
    assert out["write_tmp"] == "PermissionError"
    assert out["write_devnull"] == "ok"
    assert out["numpy"] == 3.0
    assert out["fresh_stdlib"] == "ok"
    assert out["pytest"] in ("PermissionError", "ModuleNotFoundError")
    assert not os.path.exists(target)


@pytest.mark.slow
@needs_landlock
def test_restrict_allows_numpy_import_from_allow_list():
    out = run_child("""
        results["preloaded"] = "numpy" in sys.modules
        paths = landlock.python_read_paths()
        landlock.restrict(paths.read_paths, ["/dev/null"], list_paths=paths.list_paths)
        import numpy
        results["sum"] = float(numpy.ones((4, 4)) @ numpy.ones(4) @ numpy.ones(4))
    """)
    assert out == {"preloaded": False, "sum": 16.0}


@pytest.mark.slow
@pytest.mark.skipif(ABI < 4, reason="Landlock TCP rules need ABI >= 4")
def test_restrict_denies_tcp_connect_to_local_listener():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        port = listener.getsockname()[1]
        out = run_child(f"""
            import socket
            paths = landlock.python_read_paths()
            landlock.restrict(paths.read_paths, ["/dev/null"], list_paths=paths.list_paths)
            def connect():
                with socket.create_connection(("127.0.0.1", {port}), timeout=2):
                    pass
            def bind():
                with socket.socket() as s:
                    s.bind(("127.0.0.1", 0))
            results["connect"] = attempt(connect)
            results["bind"] = attempt(bind)
        """)
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()
    assert out == {"connect": "PermissionError", "bind": "PermissionError"}


@pytest.mark.slow
def test_restrict_refuses_multithreaded_process():
    out = run_child("""
        import threading
        stop = threading.Event()
        worker = threading.Thread(target=stop.wait)
        worker.start()
        results["threads"] = privileges.thread_count()
        results["restrict"] = attempt(lambda: landlock.restrict(["/usr/lib"]))
        stop.set()
        worker.join()
    """)
    assert out == {"threads": 2, "restrict": "RuntimeError"}


@pytest.mark.slow
@needs_seccomp
def test_install_filter_blocks_processes_sockets_and_foreign_signals(tmp_path):
    out = run_child(f"""
        import ctypes, resource, socket, subprocess, threading
        seccomp.install_filter()
        results["fork"] = attempt(os.fork)
        results["subprocess"] = attempt(lambda: subprocess.run(["true"]))
        results["socket"] = attempt(socket.socket)
        results["unix_socket"] = attempt(lambda: socket.socket(socket.AF_UNIX))
        results["kill_parent"] = attempt(lambda: os.kill(os.getppid(), 0))
        results["kill_group"] = attempt(lambda: os.kill(0, 0))
        results["kill_self"] = attempt(lambda: os.kill(os.getpid(), 0))
        box = []
        worker = threading.Thread(target=lambda: box.append(sum(range(10))))
        worker.start(); worker.join()
        results["thread"] = box
        results["write_file"] = attempt(lambda: open({str(tmp_path / "ok.txt")!r}, "w").write("x"))
        results["getrlimit"] = attempt(lambda: resource.getrlimit(resource.RLIMIT_NOFILE))
        results["setrlimit"] = attempt(lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, 0)))
        results["setsid"] = attempt(os.setsid)
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        def raw(nr, *args):
            ctypes.set_errno(0)
            rc = libc.syscall(ctypes.c_long(nr), *(ctypes.c_long(a) for a in args))
            return [rc, ctypes.get_errno()]
        results["clone3"] = raw(435, 0, 0)
        if {platform.machine()!r} == "x86_64":
            results["raw_fork"] = raw(57)
            results["x32_getpid"] = raw(0x40000000 | 39)
        results["status"] = [l.split()[1] for l in open("/proc/self/status")
                             if l.startswith(("Seccomp:", "NoNewPrivs:"))]
        results["store_bypass"] = [l.split(":", 1)[1].strip() for l in open("/proc/self/status")
                                   if l.startswith("Speculation_Store_Bypass:")]
    """)
    # The filter does not turn the speculative store bypass mitigation on (it would slow all learner code).
    assert not any("force" in state for state in out["store_bypass"]), out["store_bypass"]
    for call in ("fork", "subprocess", "socket", "unix_socket", "kill_parent", "kill_group", "setsid"):
        assert out[call] == "PermissionError", call
    assert out["setrlimit"] == "ValueError"  # CPython's message for EPERM from setrlimit
    assert out["kill_self"] == "ok"
    assert out["thread"] == [45]
    assert out["write_file"] == "ok"
    assert out["getrlimit"] == "ok"
    assert out["clone3"] == [-1, 38]  # ENOSYS, so glibc falls back to clone for threads
    if platform.machine() == "x86_64":
        assert out["raw_fork"] == [-1, 1]
        assert out["x32_getpid"] == [-1, 1]
    assert out["status"] == ["1", "2"]


@pytest.mark.slow
@needs_seccomp
def test_install_filter_refuses_signals_through_descriptor_owners_and_rescheduling_others():
    """No signal reaches another process without kill() (F_SETOWN and kin), and no other process can be
    re-scheduled, re-niced, pinned or have its I/O priority changed; this process itself still can."""
    with Bystander() as bystander:
        before = bystander.scheduling()
        out = run_child(f"""
            import ctypes, errno, fcntl, signal, struct, threading
            pid = {bystander.pid}
            libc = ctypes.CDLL(None, use_errno=True)
            libc.syscall.restype = ctypes.c_long
            numbers = {{"x86_64": {{"ioprio_set": 251, "kcmp": 312, "move_pages": 279, "migrate_pages": 256,
                                    "get_robust_list": 274, "sched_setattr": 314}},
                       "aarch64": {{"ioprio_set": 30, "kcmp": 272, "move_pages": 239, "migrate_pages": 238,
                                    "get_robust_list": 100, "sched_setattr": 274}}}}[os.uname().machine]
            def raw(name, *args):
                ctypes.set_errno(0)
                rc = libc.syscall(ctypes.c_long(numbers[name]), *(ctypes.c_long(a) if isinstance(a, int) else a
                                                                   for a in args))
                return "ok" if rc >= 0 else errno.errorcode[ctypes.get_errno()]
            # Without the filter the bystander is within reach (it holds no capabilities this process lacks).
            results["reachable"] = attempt(lambda: os.setpriority(os.PRIO_PROCESS, pid, {before["nice"]}))
            seccomp.install_filter()
            r, w = os.pipe()
            F_SETSIG, F_SETOWN_EX, F_SETLEASE, F_NOTIFY = 10, 15, 1024, 1026
            owner = {{
                "F_SETOWN": lambda: fcntl.fcntl(r, fcntl.F_SETOWN, pid),
                "F_SETOWN_self": lambda: fcntl.fcntl(r, fcntl.F_SETOWN, os.getpid()),
                "F_SETOWN_group": lambda: fcntl.fcntl(r, fcntl.F_SETOWN, -pid),
                "F_SETOWN_EX_tid": lambda: fcntl.fcntl(r, F_SETOWN_EX, struct.pack("ii", 0, pid)),
                "F_SETOWN_EX_pid": lambda: fcntl.fcntl(r, F_SETOWN_EX, struct.pack("ii", 1, pid)),
                "F_SETOWN_EX_pgrp": lambda: fcntl.fcntl(r, F_SETOWN_EX, struct.pack("ii", 2, pid)),
                "F_SETSIG": lambda: fcntl.fcntl(r, F_SETSIG, signal.SIGUSR1),
                "F_SETLEASE": lambda: fcntl.fcntl(r, F_SETLEASE, fcntl.F_RDLCK),
                "FIOSETOWN": lambda: fcntl.ioctl(r, 0x8901, struct.pack("i", pid)),
                "SIOCSPGRP": lambda: fcntl.ioctl(r, 0x8902, struct.pack("i", pid)),
                "TIOCSPGRP": lambda: fcntl.ioctl(r, 0x5410, struct.pack("i", pid)),
                "TIOCSTI": lambda: fcntl.ioctl(r, 0x5412, b"x"),
                "TIOCSIG": lambda: fcntl.ioctl(r, 0x40045436, struct.pack("i", signal.SIGUSR1)),
                # on a terminal, O_ASYNC makes its foreground process group the owner
                "O_ASYNC": lambda: fcntl.fcntl(r, fcntl.F_SETFL, fcntl.fcntl(r, fcntl.F_GETFL) | os.O_ASYNC),
                "FIOASYNC": lambda: fcntl.ioctl(r, 0x5452, struct.pack("i", 1)),
            }}
            results["owner"] = {{name: attempt(way) for name, way in owner.items()}}
            results["still_allowed"] = {{
                "set_blocking": attempt(lambda: os.set_blocking(r, False)),
                "F_GETOWN": attempt(lambda: fcntl.fcntl(r, fcntl.F_GETOWN)),
                "F_NOTIFY": attempt(lambda: fcntl.fcntl(os.open("/", os.O_RDONLY), F_NOTIFY, 0)),
                "FIONREAD": attempt(lambda: fcntl.ioctl(r, 0x541B, b"\\0" * 4)),
            }}
            other = {{
                "sched_setaffinity": lambda: os.sched_setaffinity(pid, [0]),
                "sched_setscheduler": lambda: os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0)),
                "sched_setparam": lambda: os.sched_setparam(pid, os.sched_param(0)),
                "setpriority": lambda: os.setpriority(os.PRIO_PROCESS, pid, 19),
                "setpriority_group": lambda: os.setpriority(os.PRIO_PGRP, os.getpgid(pid), 19),
                "setpriority_user": lambda: os.setpriority(os.PRIO_USER, os.getuid(), 19),
            }}
            results["other"] = {{name: attempt(way) for name, way in other.items()}}
            idle = ctypes.c_char_p(struct.pack("IIQiIQQQ", 48, os.SCHED_IDLE, 0, 19, 0, 0, 0, 0))  # struct sched_attr
            results["other_raw"] = {{
                "sched_setattr": raw("sched_setattr", pid, idle, 0),
                "ioprio_set": raw("ioprio_set", 1, pid, 3 << 13),
                "ioprio_set_group": raw("ioprio_set", 2, os.getpgid(pid), 3 << 13),
                "ioprio_set_user": raw("ioprio_set", 3, 54321, 3 << 13),  # a user with no process: ESRCH if let through
                "kcmp": raw("kcmp", os.getpid(), pid, 0, 0, 0),
                "move_pages": raw("move_pages", pid, 0, 0, 0, 0, 0),
                "migrate_pages": raw("migrate_pages", pid, 0, 0, 0),
                "get_robust_list": raw("get_robust_list", pid, 0, 0),
            }}
            results["unused_user"] = attempt(lambda: os.setpriority(os.PRIO_USER, 54321, 19))  # ESRCH if let through
            mine = os.sched_getaffinity(0)
            head, size = ctypes.c_void_p(), ctypes.c_size_t()
            results["self"] = {{
                "sched_setaffinity_0": attempt(lambda: os.sched_setaffinity(0, mine)),
                "sched_setaffinity_pid": attempt(lambda: os.sched_setaffinity(os.getpid(), mine)),
                "sched_setscheduler_0": attempt(lambda: os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))),
                "sched_setparam_pid": attempt(lambda: os.sched_setparam(os.getpid(), os.sched_param(0))),
                "sched_setattr_0": raw("sched_setattr", 0, ctypes.c_char_p(struct.pack(
                    "IIQiIQQQ", 48, os.SCHED_OTHER, 0, 4, 0, 0, 0, 0)), 0),
                "setpriority_0": attempt(lambda: os.setpriority(os.PRIO_PROCESS, 0, 5)),
                "setpriority_pid": attempt(lambda: os.setpriority(os.PRIO_PROCESS, os.getpid(), 6)),
                "ioprio_set_0": raw("ioprio_set", 1, 0, 3 << 13),
                "move_pages_0": raw("move_pages", 0, 0, 0, 0, 0, 0),
                "get_robust_list_0": raw("get_robust_list", 0, ctypes.byref(head), ctypes.byref(size)),
            }}
            box = []
            worker = threading.Thread(target=lambda: box.append(
                attempt(lambda: os.sched_setaffinity(threading.get_native_id(), mine))))
            worker.start(); worker.join()
            results["own_thread_by_tid"] = box[0]
            results["nice"] = os.getpriority(os.PRIO_PROCESS, 0)
        """)
        after = bystander.scheduling()
        noted, status = bystander.close()
    assert out["reachable"] == "ok"
    assert out["owner"] == dict.fromkeys(out["owner"], "PermissionError") and len(out["owner"]) == 15
    assert out["still_allowed"] == dict.fromkeys(out["still_allowed"], "ok") and len(out["still_allowed"]) == 4
    assert out["other"] == dict.fromkeys(out["other"], "PermissionError") and len(out["other"]) == 6
    assert out["other_raw"] == dict.fromkeys(out["other_raw"], "EPERM") and len(out["other_raw"]) == 8
    assert out["unused_user"] == "PermissionError"  # refused by the filter, not found missing by the kernel
    assert out["self"] == dict.fromkeys(out["self"], "ok") and len(out["self"]) == 10
    assert out["own_thread_by_tid"] == "PermissionError"  # another thread of its own counts as another process
    assert out["nice"] == 6
    assert after == before
    assert (noted, status) == ([], 0)


@pytest.mark.slow
@needs_seccomp
def test_install_filter_read_only_fs_denies_writes(tmp_path):
    existing = tmp_path / "results.json"
    existing.write_text('{"score": 0}')
    out = run_child(f"""
        existing, folder = {str(existing)!r}, {str(tmp_path)!r}
        seccomp.install_filter(read_only_fs=True)
        results["read"] = open(existing).read()
        results["open_w"] = attempt(lambda: open(os.path.join(folder, "new.txt"), "w"))
        results["open_a"] = attempt(lambda: open(existing, "a"))
        results["open_rdwr"] = attempt(lambda: os.open(existing, os.O_RDWR))
        results["unlink"] = attempt(lambda: os.unlink(existing))
        results["rename"] = attempt(lambda: os.rename(existing, existing + ".bak"))
        results["mkdir"] = attempt(lambda: os.mkdir(os.path.join(folder, "d")))
        results["chmod"] = attempt(lambda: os.chmod(existing, 0o777))
        results["symlink"] = attempt(lambda: os.symlink(existing, existing + ".lnk"))
        results["truncate"] = attempt(lambda: os.truncate(existing, 0))
    """)
    assert out.pop("read") == '{"score": 0}'
    assert out == dict.fromkeys(out, "PermissionError") and len(out) == 9
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]
    assert existing.read_text() == '{"score": 0}'


@pytest.mark.slow
@needs_root
def test_drop_capabilities_blocks_root_privileges():
    out = run_child("""
        import resource
        resource.setrlimit(resource.RLIMIT_CPU, (10, 20))
        results["dropped"] = privileges.drop_capabilities()
        results["caps"] = [l.split()[1] for l in open("/proc/self/status")
                           if l.startswith(("CapEff:", "CapPrm:", "CapBnd:"))]
        results["raise_cpu"] = attempt(
            lambda: resource.setrlimit(resource.RLIMIT_CPU, (10, 30)))
        results["setuid"] = attempt(lambda: os.setuid(12345))
        results["chroot"] = attempt(lambda: os.chroot("/"))
        results["again"] = privileges.drop_capabilities()
    """)
    assert out["dropped"] is True
    assert out["caps"] == ["0000000000000000"] * 3
    assert out["raise_cpu"] == "ValueError"
    assert out["setuid"] == "PermissionError"
    assert out["chroot"] == "PermissionError"
    assert out["again"] is False


@pytest.mark.slow
@needs_root
def test_bounding_set_emptied_by_the_parent_leaves_its_children_only_their_held_caps():
    """``empty_bounding_set`` (the warm parent's) keeps the caps it holds; a child it forks inherits the
    empty bounding set, and ``drop_capabilities`` there ends as bare as it would have on its own."""
    out = run_child("""
        from grader.sandbox.confine import privileges
        def caps():
            return {l.split(":")[0]: l.split()[1] for l in open("/proc/self/status") if l.startswith("Cap")}
        results["emptied"] = privileges.empty_bounding_set()
        results["parent"] = caps()
        pid = os.fork()
        if pid == 0:
            dropped = privileges.drop_capabilities()
            child = caps()
            ok = dropped and child["CapBnd"] == child["CapEff"] == child["CapPrm"] == "0" * 16
            os._exit(0 if ok and attempt(lambda: os.chroot("/")) == "PermissionError" else 1)
        results["child_status"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        results["parent_chroot"] = attempt(lambda: os.chroot("/"))
    """)
    assert out["emptied"] is True
    assert out["parent"]["CapBnd"] == "0" * 16
    assert out["parent"]["CapEff"] != "0" * 16  # the parent still holds what it held
    assert out["parent_chroot"] == "ok"
    assert out["child_status"] == 0


@pytest.mark.slow
def test_set_limits_caps_memory_cpu_and_file_size(tmp_path):
    big = tmp_path / "big.bin"
    out = run_child(f"""
        import resource
        privileges.set_limits(cpu_seconds=1.5, memory_bytes=256 << 20, file_bytes=4096,
                           open_files=32)
        results["limits"] = {{name: list(resource.getrlimit(getattr(resource, name)))
                             for name in ("RLIMIT_CPU", "RLIMIT_AS", "RLIMIT_FSIZE",
                                          "RLIMIT_NOFILE", "RLIMIT_CORE", "RLIMIT_MSGQUEUE",
                                          "RLIMIT_MEMLOCK")}}
        results["alloc_big"] = attempt(lambda: bytearray(512 << 20))
        results["alloc_small"] = attempt(lambda: bytearray(1 << 20))
        def write():
            with open({str(big)!r}, "wb") as fh:
                fh.write(b"x" * 8192)
        try:
            write()
            results["write"] = "ok"
        except OSError as exc:
            results["write"] = exc.errno
    """)
    assert out["limits"] == {
        "RLIMIT_CPU": [2, 3],
        "RLIMIT_AS": [256 << 20] * 2,
        "RLIMIT_FSIZE": [4096, 4096],
        "RLIMIT_NOFILE": [32, 32],
        "RLIMIT_CORE": [0, 0],
        "RLIMIT_MSGQUEUE": [0, 0],
        "RLIMIT_MEMLOCK": [0, 0],
    }
    assert out["alloc_big"] == "MemoryError"
    assert out["alloc_small"] == "ok"
    assert out["write"] == 27  # EFBIG (CPython ignores SIGXFSZ)
    assert big.stat().st_size <= 4096


@pytest.mark.slow
def test_set_limits_keeps_a_lower_existing_hard_limit():
    out = run_child("""
        import resource
        resource.setrlimit(resource.RLIMIT_NOFILE, (16, 16))
        privileges.set_limits(cpu_seconds=5, memory_bytes=1 << 30, file_bytes=1 << 20,
                           open_files=64)
        results["nofile"] = list(resource.getrlimit(resource.RLIMIT_NOFILE))
    """)
    assert out == {"nofile": [16, 16]}


@pytest.mark.slow
def test_kill_descendants_kills_setsid_grandchild():
    out = run_child("""
        import time
        privileges.set_child_subreaper()
        r, w = os.pipe()
        middle = os.fork()
        if middle == 0:
            os.close(r)
            if os.fork() == 0:
                os.setsid()
                null = os.open("/dev/null", os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(null, fd)  # do not hold the test's pipes open
                os.write(w, str(os.getpid()).encode())
                os.close(w)
                time.sleep(30)
            os._exit(0)
        os.close(w)
        os.waitpid(middle, 0)
        daemon = int(os.read(r, 32))
        stat = open(f"/proc/{daemon}/stat").read()
        results["daemon"] = daemon
        results["reparented"] = int(stat[stat.rfind(")") + 2:].split()[1]) == os.getpid()
        results["killed"] = privileges.kill_descendants()
        results["gone"] = not os.path.exists(f"/proc/{daemon}")
        results["again"] = privileges.kill_descendants()
    """)
    daemon = out.pop("daemon")
    try:
        assert out == {"reparented": True, "killed": 1, "gone": True, "again": 0}
        assert not os.path.exists(f"/proc/{daemon}")
    finally:
        if os.path.exists(f"/proc/{daemon}"):
            os.kill(daemon, signal.SIGKILL)


@pytest.mark.slow
def test_set_non_dumpable_and_no_new_privs_take_effect():
    out = run_child("""
        import ctypes
        privileges.set_no_new_privs()
        privileges.set_non_dumpable()
        libc = ctypes.CDLL(None, use_errno=True)
        results["dumpable"] = libc.prctl(3, 0, 0, 0, 0)  # PR_GET_DUMPABLE
        results["nnp"] = [l.split()[1] for l in open("/proc/self/status")
                          if l.startswith("NoNewPrivs:")]
    """)
    assert out == {"dumpable": 0, "nnp": ["1"]}


@pytest.mark.slow
@needs_landlock
@needs_seccomp
def test_all_layers_together_still_run_a_softmax(tmp_path):
    canary = tmp_path / "hidden_checks.yaml"
    canary.write_text("expected: [0.1, 0.9]")
    out = run_child(f"""
        import numpy as np
        results["caps"] = privileges.drop_capabilities()
        privileges.set_limits(cpu_seconds=5, memory_bytes=1 << 30, file_bytes=1 << 20,
                           open_files=64)
        paths = landlock.python_read_paths()
        results["abi"] = landlock.restrict(paths.read_paths, ["/dev/null"],
                                          list_paths=paths.list_paths)
        seccomp.install_filter()
        source = "import numpy as np\\ndef softmax(z):\\n    e = np.exp(z - z.max())\\n" \\
                 "    return e / e.sum()\\n"
        namespace = {{}}
        exec(compile(source, "submission.py", "exec"), namespace)
        results["softmax"] = namespace["softmax"](np.array([0.0, 0.0])).tolist()
        results["canary"] = attempt(lambda: open({str(canary)!r}).read())
        results["fork"] = attempt(os.fork)
        results["kill_parent"] = attempt(lambda: os.kill(os.getppid(), 0))
    """)
    assert out["caps"] is (os.geteuid() == 0)
    assert out["abi"] == min(ABI, 7)
    assert out["softmax"] == [0.5, 0.5]
    assert out["canary"] == "PermissionError"
    assert out["fork"] == "PermissionError"
    assert out["kill_parent"] == "PermissionError"


def test_path_resolver_agrees_with_realpath(tmp_path):
    """The warm parent resolves its allow-list folder by folder; every answer must be realpath's."""
    from grader.sandbox.confine.landlock import Resolver

    (tmp_path / "site-packages" / "grader").mkdir(parents=True)
    (tmp_path / "stdlib").mkdir()
    (tmp_path / "stdlib" / "json").mkdir()
    (tmp_path / "stdlib" / "sneaky").symlink_to(tmp_path / "site-packages" / "grader")
    (tmp_path / "linked-stdlib").symlink_to(tmp_path / "stdlib")
    resolve = Resolver()
    for path in [
        "stdlib/json",
        "stdlib/sneaky",
        "linked-stdlib/json",
        "linked-stdlib/sneaky",
        "stdlib/missing",
        "stdlib/json/.",
        "linked-stdlib/..",
        "stdlib",
    ]:
        full = str(tmp_path / path)
        assert resolve(full) == os.path.realpath(full), path


def test_close_ahead_closes_every_opened_descriptor_and_nothing_between_them(tmp_path):
    from grader.sandbox.confine import landlock

    files = []
    for index in range(8):
        (tmp_path / f"f{index}").write_text("x")
        files.append(str(tmp_path / f"f{index}"))
    first = landlock.open_ahead(files[:5])
    between = os.pipe()  # numbered inside the span of the opened descriptors
    second = landlock.open_ahead(files[5:])
    os.close(first[1].fd)  # already closed: no error
    landlock.close_ahead([*first, "/not/opened", *second])
    for item in first + second:
        with pytest.raises(OSError):
            os.fstat(item.fd)
    for fd in between:
        os.fstat(fd)
        os.close(fd)
