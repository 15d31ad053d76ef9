"""Errors the library raises for caller mistakes (the CLI turns them into exit code 2)."""


class VolfixConfigError(Exception):
    """A caller mistake: unknown rule code, malformed [tool.volfix], bad option value."""


class Terminated(KeyboardInterrupt):
    """SIGTERM (`kill`, a CI job's timeout, `docker stop`): stops a run as Ctrl-C does, so
    every `except KeyboardInterrupt` that stops workers and finishes writes handles it too."""


def terminate_as_interrupt() -> None:
    """From now on, SIGTERM raises Terminated in the main thread (not elsewhere, where no
    handler can be set; not where SIGTERM is ignored, as under `nohup`-like launchers)."""
    import signal
    import threading

    if not hasattr(signal, "SIGTERM") or threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        return

    def raise_terminated(signum, frame):  # noqa: ARG001 - signal handler signature
        raise Terminated()

    signal.signal(signal.SIGTERM, raise_terminated)
