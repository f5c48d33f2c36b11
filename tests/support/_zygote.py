"""The process :mod:`tests.support.forkserver` forks CLI and ``serve`` processes from.

It imports the CLI, the service and what they load (most of a process's start-up), then waits on a Unix
socket. Each request carries the arguments, environment and working folder of one ``hms-catalog`` run and
its stdin, stdout and stderr as file descriptors; the process forks, and the child becomes that run: its
own pid, its own files, killed with ``kill -9`` like any process. The parent answers the child's pid and,
once the child has ended, its exit status, on the request's connection.

It runs single-threaded, so a fork copies no thread that holds a lock: no OpenBLAS worker threads and no
jemalloc background thread (both set off before the imports), and no thread of its own (one ``select``
loop serves requests and reaps children). It exits when its parent's end of its stdin closes.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import json
import os
import select
import signal
import socket
import sys
import threading
import traceback
from pathlib import Path

os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["JE_ARROW_MALLOC_CONF"] = "background_thread:false"

_MAX_FDS = 3
_REQUEST_BYTES = 1 << 20


def _preload() -> None:
    importlib.import_module("hms_catalog.cli.main")._commands()  # the serve command's module with the CLI
    importlib.import_module("service.app")  # FastAPI and the routes, which serve loads as it starts
    for deferred in ("pyspark.sql.types", "pyiceberg.types", "pyarrow.fs"):  # what the CLI imports on first use
        importlib.import_module(deferred)


def _run_child(request: dict[str, object], fds: list[int], closing: list[socket.socket]) -> None:
    """In the forked child: become the requested run, then exit with its status (never returns)."""
    code = 1
    try:
        for sock in closing:
            sock.close()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.setsid()  # a session of its own, as Popen's start_new_session
        os.chdir(str(request["cwd"]))
        environment = request["env"]
        assert isinstance(environment, dict)
        os.environ.clear()
        os.environ.update(environment)
        sys.stdout.reconfigure(write_through=True)  # type: ignore[union-attr]
        sys.stderr.reconfigure(write_through=True)  # type: ignore[union-attr]
        arguments = request["argv"]
        assert isinstance(arguments, list)
        sys.argv = ["hms-catalog", *arguments]
        from hms_catalog.cli.main import main

        try:
            code = main(arguments)
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    except BaseException:  # noqa: BLE001 - the child's own error goes to its stderr, as an interpreter's would
        traceback.print_exc()
        code = 1
    finally:
        # What an interpreter does as it exits: wait for the threads that are not daemons (a service whose
        # thread never ends hangs here as it would there), run the exit handlers, flush.
        with contextlib.suppress(BaseException):
            threading._shutdown()  # type: ignore[attr-defined]
        with contextlib.suppress(BaseException):
            atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed pipe: nothing more to say
                stream.flush()
        os._exit(code)


def serve(path: Path) -> None:
    _preload()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(64)
    children: dict[int, socket.socket] = {}
    print("ready", flush=True)
    parent = sys.stdin.fileno()
    while True:
        readable, _, _ = select.select([listener, parent], [], [], 0.05)
        if parent in readable and not os.read(parent, 4096):
            break  # the test session ended (or died): so do the children's parent
        if listener in readable:
            connection, _ = listener.accept()
            message, fds, _, _ = socket.recv_fds(connection, _REQUEST_BYTES, _MAX_FDS)
            request = json.loads(message)
            pid = os.fork()
            if pid == 0:
                _run_child(request, fds, [listener, connection, *children.values()])
            for fd in fds:
                os.close(fd)
            connection.sendall(f"pid {pid}\n".encode())
            children[pid] = connection
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            ended = children.pop(pid, None)
            if ended is not None:
                with contextlib.suppress(OSError):  # the test stopped waiting for it
                    ended.sendall(f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
                ended.close()
    for pid in children:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


if __name__ == "__main__":
    serve(Path(sys.argv[1]))
