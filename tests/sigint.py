"""For tests that stop a child process with SIGINT, as Ctrl-C would."""

from __future__ import annotations

import signal


def default_sigint() -> None:
    """Popen's preexec_fn: the child starts with SIGINT's default action. A shell that
    starts the test run in the background (`pytest &`, nohup) ignores SIGINT, children
    inherit that, and a Python started with SIGINT ignored never raises KeyboardInterrupt:
    the child would run on and the test would time out for a reason that is not its own."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
