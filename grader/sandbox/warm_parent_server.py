"""The warm parent of learner processes.

Started once per grading process as a fresh interpreter
(``python -I -B -u warm_parent_server.py ROOT FD``) with a minimal environment, it
imports numpy and the child code, then forks one learner process per
request. Forking a warm parent costs milliseconds where a new interpreter
costs a numpy import, and the warm parent holds nothing secret: no specs, no
references, no answer keys, no environment of the grader's.

A ``preload`` request (carrying a memfd with a ``call_many`` request) has it
decode that request once, so learner processes forked afterwards get the
calls' arguments by copying them instead of receiving and decoding them
(``arguments.preload``): ``grader batch`` sends every learner the same plan. It
holds arguments only, which every learner process receives anyway; requests
carrying the exercise's given functions are refused.

Control messages are JSON datagrams on a SOCK_SEQPACKET socket; a spawn
request carries the child's three pipe ends as SCM_RIGHTS file descriptors.
Standard library and numpy only.

Given an early self-test request (a third argument: JSON with the grader's
pid, temporary folder, limits and layers), the warm parent runs the start-up
self-test itself right after saying hello, while the grader is still
importing, and holds the outcome until the grader asks for it (``selftest``).
It runs in every fresh warm parent; nothing of it is kept anywhere else.

A ``clone`` request (carrying a new control socket) forks a second warm
parent from this one: ``grader batch`` gives each of its grading processes
a clone, which costs a fork instead of an interpreter start and a numpy
import per process. A clone is a warm parent like any other; this one kills
it, with its learner processes, when it shuts down.
"""

from __future__ import annotations

import gc
import json
import os
import select
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

_MAX_DATAGRAM = 1 << 20
_MAX_PRELOAD = 64 * 1024 * 1024
_RULESETS_KEPT = 16


class _Server:
    def __init__(
        self,
        control: socket.socket,
        early: dict[str, Any] | None = None,
        landlock_paths: dict[str, list[Any]] | None = None,
        rulesets: dict[tuple[int, int], tuple[int, int]] | None = None,
    ) -> None:
        from grader.sandbox.confine import landlock, privileges, seccomp
        from grader.sandbox.reading import Reader

        self.control = control
        self.reader = Reader(_MAX_DATAGRAM)
        self.early = early
        self.early_outcome: dict[str, Any] | None = None
        self._early_probe: Any = None
        self.active: set[int] = set()
        self.clones: set[int] = set()
        self.idle_work: list[Callable[[], None]] = []  # done once no request has come for a moment
        self.exited: dict[int, dict[str, int]] = {}
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        try:
            privileges.set_child_subreaper()
            subreaper = True
        except Exception:
            subreaper = False
        try:  # learner processes inherit it, and only clear the capabilities they hold (this one never execs)
            privileges.empty_bounding_set()
        except Exception:  # they drop the bounding set themselves, as before
            pass
        try:  # learner processes inherit it: their /proc entries are closed to their siblings
            privileges.set_non_dumpable()
            non_dumpable = True
        except Exception:
            non_dumpable = False
        if landlock_paths is None:  # opened once here, so a learner process adds its rules without opening ~300 paths
            read, listed = _landlock_paths(landlock)
            landlock_paths = {"read": landlock.open_ahead(read), "list": landlock.open_ahead(listed)}
            landlock.prepare_rules(landlock_paths["read"], landlock_paths["list"])
            seccomp.prepare_filter()
        self.landlock_paths = landlock_paths
        from grader.sandbox import descriptors

        self._landlock_fds = descriptors.runs(item.fd for items in landlock_paths.values() for item in items)
        # Landlock rulesets built for scratch folders, by the folder's (device, inode): never changed once built
        self._rulesets: dict[tuple[int, int], tuple[int, int]] = dict(rulesets or {})
        self.facts = {
            "landlock_abi": landlock.abi_version(),
            "seccomp": seccomp.available(),
            "root": os.geteuid() == 0,
            "subreaper": subreaper,
            "non_dumpable": non_dumpable,
        }

    def begin_early_self_test(self) -> None:
        """Fork the early self-test's probe process now: it runs while this process goes on importing numpy."""
        if self.early is not None and self._early_probe is None:
            self._early_probe = self._start_probe(self.early)

    def run(self) -> None:
        self._send({"op": "hello", **self.facts})
        if self.early is not None:
            self.begin_early_self_test()
            self.early_outcome = self._finish_probe(self._early_probe)
        self.idle_work = [_import_numpy_random]
        while True:
            quiet = _QUIET_BEFORE_IDLE_WORK if self.idle_work else None
            watched: list[socket.socket | int] = [self.control, self.wake_r]
            ready, _, _ = select.select(watched, [], [], quiet)
            if not ready and self.idle_work:
                self.idle_work.pop()()
                continue
            if self.wake_r in ready:
                os.read(self.wake_r, 4096)
                self._reap()
            if self.control in ready:
                try:
                    data, fds = self.reader.recv_fds(self.control, 8)
                except InterruptedError:  # pragma: no cover - PEP 475 retries
                    continue
                except ConnectionResetError:
                    # The grader closed its end with a reply still unread there (``close(wait=False)``
                    # after ``finish_later``): it is gone as surely as after an empty read.
                    data, fds = b"", []
                if not data:
                    self._shutdown()
                    os._exit(0)  # nothing to flush; interpreter teardown would only delay the grader's exit
                self._handle(json.loads(data), fds)

    def _handle(self, request: dict[str, Any], fds: list[int]) -> None:
        op = request.get("op")
        if op == "spawn":
            pid = self._spawn(request["config"], fds)
            self._send({"op": "spawned", "pid": pid})
        elif op == "finish":
            self._send({"op": "finished", **self._finish(int(request["pid"]), float(request.get("grace", 0)))})
        elif op == "clone" and len(fds) == 1:
            self._send({"op": "cloned", "pid": self._clone(fds[0])})
        elif op == "preload" and len(fds) == 1:
            self._send({"op": "preloaded", "key": request.get("key"), "ok": self._preload(request, fds[0])})
        elif op == "selftest":
            outcome, self.early_outcome = self.early_outcome, None  # handed over once
            self._send({"op": "selftest", **(outcome or {"error": "no early self-test was run"})})
        else:
            for fd in fds:
                os.close(fd)
            self._send({"op": "error", "message": f"unknown op {op!r}"})

    def _spawn(self, config: dict[str, Any], fds: list[int]) -> int:
        request_fd, response_fd, output_fd = fds
        from grader.sandbox import descriptors
        from grader.sandbox.confine import privileges

        ruleset = self._ruleset_for(config)
        if ruleset is not None:
            config = dict(config, landlock_ruleset=list(ruleset))
            keep = descriptors.runs((0, 1, 2, request_fd, response_fd, ruleset[0]))
        else:  # the learner process adds the rules itself, from the paths opened here
            config = dict(config, landlock_paths=self.landlock_paths)
            keep = descriptors.runs((0, 1, 2, request_fd, response_fd), self._landlock_fds)
        me = os.getpid()
        pid = os.fork()
        if pid == 0:  # the learner process
            code = 0
            try:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                os.setsid()
                privileges.die_with_parent(me)
                os.dup2(output_fd, 1)
                os.dup2(output_fd, 2)
                descriptors.close_inherited(keep)  # the ruleset or the Landlock paths are closed once confined
                request_fd, response_fd = descriptors.renumber_low(request_fd), descriptors.renumber_low(response_fd)
                os.chdir(config["scratch"])
                if config.get("selftest"):  # trusted probes, no learner code: the confinement is what is tested
                    from grader.sandbox.selftest import serve_probe

                    serve_probe(config, response_fd)
                else:
                    from grader.sandbox import child

                    child.serve(config, request_fd, response_fd)
            except BaseException:  # noqa: BLE001 - nothing may escape into the warm parent's loop
                code = 70
            os._exit(code)
        for fd in fds:
            os.close(fd)
        self.active.add(pid)
        return pid

    def _ruleset_for(self, config: dict[str, Any]) -> tuple[int, int] | None:
        """The Landlock ruleset (descriptor, ABI) for the learner's scratch folder: built the first time, then kept.

        A grading process hands a scratch folder out again once its process
        is gone (``sandbox/scratch.py``), so most learner processes find their
        ruleset built and confine themselves with one system call instead of
        adding some 280 rules. The key is the folder's inode,
        which the ruleset holds on to: a folder made anew gets a ruleset anew.
        ``None`` when Landlock is not wanted or the ruleset cannot be built
        here: the learner process then builds its own and reports what failed.
        """
        if not config.get("layers", {}).get("landlock", True) or not self.landlock_paths.get("read"):
            return None
        try:
            found = os.stat(config["scratch"])
        except (OSError, KeyError, TypeError, ValueError):
            return None
        key = (found.st_dev, found.st_ino)
        ruleset = self._rulesets.pop(key, None)
        if ruleset is None:
            from grader.sandbox.confine import landlock

            try:
                ruleset = landlock.build_ruleset(
                    self.landlock_paths["read"] + [config["scratch"]],
                    ["/dev/null"],
                    list_paths=self.landlock_paths.get("list", []),
                )
            except (OSError, RuntimeError):
                return None
            while len(self._rulesets) >= _RULESETS_KEPT:
                os.close(self._rulesets.pop(next(iter(self._rulesets)))[0])
        self._rulesets[key] = ruleset  # the most recently used last
        return ruleset

    def _preload(self, request: dict[str, Any], fd: int) -> bool:
        """Decode a request the grader will send to many learner processes, once, before they are forked."""
        try:
            size = int(request.get("size", -1))
            key = request.get("key")
            if not isinstance(key, str) or not 0 <= size <= _MAX_PRELOAD:
                return False
            parts, got = [], 0
            while got < size:
                part = os.pread(fd, size - got, got)
                if not part:
                    return False
                parts.append(part)
                got += len(part)
            from grader.sandbox import arguments

            return arguments.preload(key, b"".join(parts))
        except Exception:  # noqa: BLE001 - a request that cannot be preloaded is sent in full instead
            return False
        finally:
            os.close(fd)

    def _clone(self, control_fd: int) -> int:
        """Fork a warm parent that serves ``control_fd``; it keeps nothing of this one but its imports."""
        from grader.sandbox.confine import privileges

        while self.idle_work:  # done here, once, so that every clone starts with it done
            self.idle_work.pop()()
        me = os.getpid()
        pid = os.fork()
        if pid == 0:  # the clone
            code = 0
            try:
                signal.set_wakeup_fd(-1)
                for fd in (self.control.fileno(), self.wake_r, self.wake_w):
                    os.close(fd)
                privileges.die_with_parent(me)
                _Server(
                    socket.socket(fileno=control_fd), landlock_paths=self.landlock_paths, rulesets=self._rulesets
                ).run()
            except BaseException:  # noqa: BLE001 - nothing may escape into this warm parent's loop
                code = 70
            os._exit(code)
        os.close(control_fd)
        self.clones.add(pid)
        return pid

    def _start_probe(self, early: dict[str, Any]) -> dict[str, Any]:
        """Start the start-up self-test as the grader would (``selftest.run_self_test``), on its behalf.

        The bait (canary, loopback sockets) and the scratch folder carry the
        grader's pid and sit in its temporary folder; the probe process is
        forked and confined exactly like a learner process the grader asks
        for (the probes need no numpy: it may be forked before numpy is
        imported). :meth:`_finish_probe` collects what it found.
        """
        from grader.sandbox.selftest import Bait

        started: dict[str, Any] = {"seconds": float(early.get("seconds", 10.0))}
        try:
            grader_pid, temp_dir = int(early["grader_pid"]), str(early["temp_dir"])
            started["bait"] = Bait(grader_pid, temp_dir)
        except Exception as exc:  # noqa: BLE001 - the grader runs the self-test itself
            return {"error": f"could not lay the bait: {exc!r}"}
        try:
            started["scratch"] = scratch = tempfile.mkdtemp(prefix=f"grader-{grader_pid}-", dir=temp_dir)
            request_r, request_w = os.pipe()
            response_r, response_w = os.pipe()
            output_r, output_w = os.pipe()
            started["fds"] = (request_w, response_r, output_r)
            config = {
                "scratch": scratch,
                "module": os.path.join(scratch, "selftest.py"),
                "entries": [],
                "limits": early["limits"],
                "layers": early["layers"],
                "selftest": started["bait"].spec,
            }
            started["pid"] = self._spawn(config, [request_r, response_w, output_w])
        except Exception as exc:  # noqa: BLE001
            started["error"] = f"{exc!r}"
        return started

    def _finish_probe(self, started: dict[str, Any]) -> dict[str, Any]:
        """The bait's outcome of a probe :meth:`_start_probe` started, for the grader to judge, or an
        ``error`` (the grader then runs the self-test itself); the probe's process and files are gone after."""
        bait, scratch = started.get("bait"), started.get("scratch")
        try:
            if "error" in started:
                return {"error": started["error"]}
            response_r, output_r = started["fds"][1:]
            try:
                report = _read_report(response_r, output_r, time.monotonic() + started["seconds"])
            finally:
                self._finish(started["pid"], 0.0)
            if report is None:
                return {"error": "the self-test process did not report"}
            if bait is None:
                return {"error": "the self-test had no bait"}
            return bait.outcome(report)
        except Exception as exc:  # noqa: BLE001
            return {"error": f"{exc!r}"}
        finally:
            for fd in started.get("fds", ()):
                os.close(fd)
            if bait is not None:
                bait.close()
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)

    def _finish(self, pid: int, grace: float) -> dict[str, Any]:
        """Wait up to ``grace`` seconds for ``pid`` to exit, then kill it; report how it ended."""
        deadline = time.monotonic() + grace
        self._reap()
        while pid not in self.exited and time.monotonic() < deadline:
            time.sleep(0.005)
            self._reap()
        killed = False
        if pid not in self.exited and pid in self.active:
            killed = True
            for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
                try:
                    target()
                except OSError:
                    pass
            try:
                _, status, usage = os.wait4(pid, 0)
                self.exited[pid] = _status(status, usage)
            except ChildProcessError:
                self.exited.setdefault(pid, {"exit": -1})
        self.active.discard(pid)
        self._kill_orphans()
        result = {"pid": pid, "killed": killed, **self.exited.pop(pid, {"exit": -1})}
        return result

    def _reap(self) -> None:
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.clones.discard(pid)
            if pid in self.active:
                self.exited[pid] = _status(status, usage)

    def _kill_orphans(self, timeout: float = 5.0) -> None:
        """Kill every process re-parented to us that is not a live learner process, and its descendants.

        A learner's daemon (``fork``, ``setsid``, ``fork`` again, ignore SIGTERM)
        comes back to us because we are a child subreaper. SIGKILL cannot be
        ignored; we rescan until a scan finds nothing, so processes forked or
        re-parented while we kill are caught too.
        """
        from grader.sandbox import process_tree

        me = os.getpid()
        deadline = time.monotonic() + timeout
        while True:
            children, zombies = process_tree.children_map(me)
            doomed: list[int] = []
            queue = [pid for pid in children.get(me, []) if pid not in self.active and pid not in self.clones]
            while queue:
                pid = queue.pop()
                doomed.append(pid)
                queue.extend(children.get(pid, []))
            for pid in doomed:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            self._reap()
            # Done when nothing is left alive and our dead children are reaped (not left as zombies).
            unreaped = [pid for pid in zombies.get(me, []) if pid not in self.active and pid not in self.clones]
            if (not doomed and not unreaped) or time.monotonic() > deadline:
                return
            time.sleep(0.002)

    def _send(self, message: dict[str, Any]) -> None:
        self.control.send(json.dumps(message).encode())

    def _shutdown(self) -> None:
        for pid in list(self.active | self.clones):
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        self.active.clear()
        self.clones.clear()
        self._kill_orphans()


def _read_report(response_fd: int, output_fd: int, deadline: float) -> dict[str, Any] | None:
    """The self-test process's one message, or ``None`` when it ends, garbles or runs past ``deadline``.

    What it prints is read and dropped, so a full output pipe cannot stall it.
    """
    from grader.sandbox.frames import MessageParser, ProtocolError

    parser = MessageParser()
    open_fds = [response_fd, output_fd]
    while response_fd in open_fds:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        ready, _, _ = select.select(open_fds, [], [], remaining)
        for fd in ready:
            data = os.read(fd, 1 << 16)
            if not data:
                open_fds.remove(fd)
            elif fd == response_fd:
                try:
                    messages = parser.feed(data)
                except ProtocolError:
                    return None
                if messages:
                    header = messages[0][0]
                    return header if header.get("op") == "selftest" else None
    return None


def _landlock_paths(landlock: Any) -> tuple[list[str], list[str]]:
    paths = landlock.python_read_paths()
    read = getattr(paths, "read", None)
    if read is None:
        read, listed = paths if isinstance(paths, tuple) else (paths, [])
    else:
        listed = getattr(paths, "list", [])
    return [str(p) for p in read], [str(p) for p in listed]


def _status(status: int, usage: Any = None) -> dict[str, Any]:
    cpu = {"cpu": round(usage.ru_utime + usage.ru_stime, 3)} if usage is not None else {}
    if os.WIFSIGNALED(status):
        return {"signal": os.WTERMSIG(status), **cpu}
    return {"exit": os.WEXITSTATUS(status), **cpu}


def _find_numpy(site_dirs: list[str]) -> bool:
    """Put the site-packages folders the grader named on the path (this interpreter runs with ``-S``);
    whether numpy is found there (else the usual site setup must run: see :func:`_import_numpy`).

    Reading them without their ``.pth`` files keeps this process's start short.
    """
    import importlib.util
    import site

    site.setquit()  # exit() and quit() in learner code behave as in any Python
    sys.path.extend(path for path in site_dirs if path not in sys.path)
    return importlib.util.find_spec("numpy") is not None


def _import_numpy(found: bool) -> None:
    """Import numpy: from the named folders when :func:`_find_numpy` found it, else after the usual site setup
    (numpy installed through a ``.pth`` file)."""
    if not found:
        import site

        site.main()
    import numpy  # noqa: F401


# How long no request must come before the warm parent does idle work: a grader waiting on it (a cold
# ``grader grade`` asks for a learner process within a millisecond of the self-test) is served first.
_QUIET_BEFORE_IDLE_WORK = 0.02


def _import_numpy_random() -> None:
    """Import ``numpy.random`` (most exercises draw random numbers) once no request has come for a moment.

    Learner processes forked from then on find it imported; one forked before
    (a cold ``grader grade`` asks as soon as the self-test is done) imports it
    itself if it needs it. Either way the grader does not wait for it.
    """
    import numpy.random  # noqa: F401

    gc.freeze()  # as after the first imports: what the children share stays out of their collector's way


def _keep_freed_memory() -> None:
    """Let malloc serve blocks up to 4 MiB from its heap and keep up to 32 MiB of freed heap (learners inherit it).

    By default a block over 128 KiB (an array of 16,000 numbers) is mapped
    afresh and unmapped when freed, so each of a learner's calls on a large
    input pays a page fault per 4 KiB it writes, again and again: a fifth of
    all page faults of a learner process on the bundled exercises. Kept, the
    memory of one call serves the next. A learner process is short-lived and
    its memory limit counts what it maps, so nothing is held for long.
    """
    from grader.sandbox.confine._libc import libc

    try:
        libc.mallopt(_M_MMAP_THRESHOLD, 4 << 20)
        libc.mallopt(_M_TRIM_THRESHOLD, 32 << 20)
    except AttributeError:  # a C library without mallopt: its own defaults
        pass


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's <malloc.h>


def main(argv: list[str]) -> None:
    """Entry point: ``warm_parent_server.py ROOT CONTROL_FD SITE_DIRS_JSON [EARLY_SELF_TEST_JSON]``."""
    sys.path.insert(0, argv[1])
    from grader.sandbox.confine import privileges

    privileges.die_with_parent(os.getppid())  # the grader: this warm parent, and so its learners, end with it
    found = _find_numpy(json.loads(argv[3]))
    control = socket.socket(fileno=int(argv[2]))
    early = json.loads(argv[4]) if len(argv) > 4 else None
    server = None
    if found:  # the allow-list is the same before numpy is imported: the self-test's probe can start now
        from grader.sandbox import descriptors, frames, process_tree, selftest  # noqa: F401 - nothing of ours is readable once confined
        from grader.sandbox.confine import process  # noqa: F401

        server = _Server(control, early)
        server.begin_early_self_test()  # it confines itself and probes on the other core meanwhile
    _import_numpy(found)  # the whole point: import once, fork many times
    _keep_freed_memory()

    from grader.sandbox import arguments, child, descriptors, process_tree, protocol, selftest  # noqa: F401, F811 - nothing of ours is readable once confined
    from grader.sandbox.confine import landlock, privileges, seccomp  # noqa: F401

    server = server or _Server(control, early)
    # Everything imported so far is shared with every learner process, copy-on-write: keep the garbage
    # collector from walking (and so copying) those pages in each child.
    gc.freeze()
    server.run()


if __name__ == "__main__":
    main(sys.argv)
