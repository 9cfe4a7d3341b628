"""Closing an app-server whose killed process is not reaped in time.

On a machine under heavy I/O load a SIGKILLed Codex can stay unreaped past
any short wait; the sweep met it as `internal error: TimeoutExpired` at the
end of an import that had read every answer.  A process that ignores SIGKILL
cannot be made here, so the process object is a stand-in whose waits time out.
"""

from __future__ import annotations

import subprocess

from promptspec.oracle.appserver import AppServer


class _Unreaped:
    """A Popen-like child that never exits: every wait times out."""

    def __init__(self) -> None:
        self.killed = False
        self.stdin = open("/dev/null", "wb")  # noqa: SIM115 - closed by close() under test
        self.waits: list[float] = []

    def poll(self):
        return None

    def kill(self) -> None:
        self.killed = True

    def wait(self, timeout=None):
        self.waits.append(timeout)
        raise subprocess.TimeoutExpired(["codex", "app-server"], timeout)


def test_close_kills_and_goes_on_when_the_child_is_not_reaped() -> None:
    srv = object.__new__(AppServer)
    srv.proc = _Unreaped()  # type: ignore[assignment]
    srv.close()  # no TimeoutExpired escapes
    assert srv.proc.killed and len(srv.proc.waits) == 2 and all(t is not None for t in srv.proc.waits)
