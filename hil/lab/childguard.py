"""Run a command so that it and everything it forks die with the process that started it.

``python -m hil.lab.childguard PARENT_PID -- CMD...``: the guard leads a new process group, asks the kernel
for SIGTERM when its parent dies (``PR_SET_PDEATHSIG``, delivered even when the parent is SIGKILLed), and
on that signal kills its whole group. The suite's pytest-embedded forks helper processes of its own, which
a death signal on pytest alone would orphan with the reference server's listening socket still open.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys

PR_SET_PDEATHSIG = 1


def _kill_group(*_: object) -> None:
    os.killpg(0, signal.SIGKILL)


def main(argv: list[str]) -> int:
    parent, command = int(argv[0]), argv[2:] if argv[1:2] == ["--"] else argv[1:]
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)  # `hil run` already starts the guard as a group leader
    signal.signal(signal.SIGTERM, _kill_group)
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM))
    if os.getppid() != parent:  # the parent died before the death signal was armed
        _kill_group()
    proc = subprocess.Popen(command)
    return proc.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
