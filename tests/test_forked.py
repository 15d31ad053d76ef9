"""volfix.run.forked: forked workers for the scan, the project's facts and a check's analysis."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from volfix.run import forked

pytestmark = pytest.mark.skipif(not forked.available(), reason="forked workers are Linux-only")


def square_or_fail(x):
    if x == 7:
        os._exit(3)  # a crash in C code, as far as the parent can tell
    if x == 9:
        raise ValueError("nine")
    return x * x


def children_of_this_process():
    """Live or unreaped children, from /proc."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == os.getpid():
                found.append(int(name))
    return sorted(found)


def test_every_item_once_a_death_and_an_error_are_that_items_results():
    forked.reap(block=True)  # workers of earlier runs in this process
    before = children_of_this_process()
    results = dict(forked.imap_unordered(square_or_fail, list(range(30)), 3, on_death=lambda x: "died",
                                         on_error=lambda x, text: f"error: {text}"))
    assert results == {i: ("died" if i == 7 else "error: ValueError: nine" if i == 9 else i * i)
                       for i in range(30)}
    forked.reap(block=True)  # the workers exit on their own after the last result
    assert forked._open_fds == [] and children_of_this_process() == before


def test_an_error_without_on_error_is_raised_here_and_the_workers_are_gone():
    forked.reap(block=True)
    before = children_of_this_process()
    with pytest.raises(ValueError, match="nine"):
        list(forked.imap_unordered(square_or_fail, list(range(8, 30)), 2, on_death=lambda x: None))
    forked.reap(block=True)
    assert forked._open_fds == [] and children_of_this_process() == before


def test_items_go_out_in_order_one_at_a_time():
    # One worker takes the items in the order given (the runner puts the largest first).
    order = [index for index, _ in forked.imap_unordered(lambda x: x, ["c", "a", "b"], 1, on_death=None)]
    assert order == [0, 1, 2]
    # Two workers, one at a time: the first, long task does not hold the second worker's
    # next one back (it was not sent ahead to the busy worker).
    tasks = [0.6, 0.05, 0.05, 0.05]
    finished = [index for index, _ in forked.imap_unordered(time.sleep, tasks, 2, on_death=None)]
    assert finished == [1, 2, 3, 0]


def test_results_larger_than_a_pipe_arrive_whole():
    big = [b"x" * 300_000, b"y" * 2_000_000]
    results = dict(forked.imap_unordered(lambda data: data * 2, big, 2, on_death=lambda x: None, ahead=2))
    assert results == {0: big[0] * 2, 1: big[1] * 2}


def start_two_busy_workers(tmp_path, seconds: float, **popen):
    """A Python process running `imap_unordered` with 2 workers, each task sleeping `seconds`;
    returned once both workers are working, with the file their pids are written to."""
    pids = tmp_path / "pids"
    script = textwrap.dedent(f"""
        import os, signal, time
        from volfix.run import forked

        # Ctrl-C in a terminal raises KeyboardInterrupt, however the tests were started (a
        # background job of a shell script inherits SIGINT ignored)
        signal.signal(signal.SIGINT, signal.default_int_handler)

        def slow(x):
            with open({str(pids)!r}, "a") as fh:
                fh.write(f"{{os.getpid()}}\\n")
            time.sleep({seconds})
            return x

        try:
            # a worker the signal kills may be seen to die before this process's own
            # KeyboardInterrupt: its task gets `on_death`, as in the runner
            for _ in forked.imap_unordered(slow, list(range(100)), 2, on_death=lambda item: None):
                pass
        except KeyboardInterrupt:
            print("interrupted", forked._open_fds, flush=True)
            raise
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], **popen)
    for _ in range(200):
        if pids.exists() and len(set(pids.read_text().split())) >= 2:
            break
        time.sleep(0.05)
    return parent, pids


def wait_until(condition) -> bool:
    for _ in range(100):
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_the_workers_do_not_outlive_a_killed_parent(tmp_path):
    """A worker waits for its next task on a pipe only the parent writes: when the parent is
    killed, the pipe ends and the worker exits."""
    parent, pids = start_two_busy_workers(tmp_path, 0.5)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    workers = {int(p) for p in pids.read_text().split()}

    def running(pid: int) -> bool:  # not a zombie
        try:
            with open(f"/proc/{pid}/stat") as fh:
                return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            return False

    def none_alive():  # each finishes its task (0.5 s), then finds the pipe closed
        return not any(running(pid) for pid in workers)

    assert wait_until(none_alive)


def die_on_first_and_fifth(x):
    if x in (0, 5):
        os._exit(3)
    return x


def test_ctrl_c_seen_by_the_workers_first(tmp_path):
    """The kernel may signal the group's workers before this process: their deaths are read
    first (their tasks get `on_death`, a new worker starts for the rest), then this process's
    KeyboardInterrupt kills and reaps every worker, the new one too."""
    parent, pids = start_two_busy_workers(tmp_path, 30, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True, start_new_session=True)
    first = {int(p) for p in pids.read_text().split()}
    for pid in first:
        os.kill(pid, signal.SIGINT)
    assert wait_until(lambda: len(set(pids.read_text().split())) > len(first))  # a new worker works
    os.killpg(parent.pid, signal.SIGINT)
    out, err = parent.communicate(timeout=20)
    assert parent.returncode != 0 and out == "interrupted []\n" and "KeyboardInterrupt" in err, \
        (parent.returncode, out, err)
    workers = {int(p) for p in pids.read_text().split()}
    assert wait_until(lambda: not any(os.path.exists(f"/proc/{pid}") for pid in workers))


def test_a_process_that_ignores_sigint_has_workers_that_ignore_it(tmp_path):
    """A background job of a shell script starts with SIGINT ignored: a SIGINT to its group
    stops nothing, the workers finish their tasks and every result comes in."""
    pids = tmp_path / "pids"
    script = textwrap.dedent(f"""
        import os, signal, time
        from volfix.run import forked

        signal.signal(signal.SIGINT, signal.SIG_IGN)

        def slow(x):
            with open({str(pids)!r}, "a") as fh:
                fh.write(f"{{os.getpid()}}\\n")
            time.sleep(1)
            return x

        results = dict(forked.imap_unordered(slow, list(range(4)), 2, on_death=lambda item: "died"))
        print(sorted(results.values()))
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, start_new_session=True)
    assert wait_until(lambda: pids.exists() and len(set(pids.read_text().split())) >= 2)
    os.killpg(parent.pid, signal.SIGINT)
    out, err = parent.communicate(timeout=20)
    assert (parent.returncode, out) == (0, "[0, 1, 2, 3]\n"), err


def test_tasks_sent_ahead_to_a_dead_worker_are_done_by_another():
    # With `ahead=2` each worker holds two tasks; a worker that dies holding the last ones
    # hands its second to a new worker even when the others have been told there is nothing left.
    for workers in (1, 2, 3):
        results = dict(forked.imap_unordered(die_on_first_and_fifth, list(range(6)), workers,
                                             on_death=lambda x: "died", ahead=2))
        assert results == {0: "died", 1: 1, 2: 2, 3: 3, 4: 4, 5: "died"}


def started_at(item):
    return time.time()


def test_a_generator_of_items_runs_while_the_workers_do():
    """The runner hands out the files of a directory walk while the walk goes on."""
    walked = {}

    def walk():
        for name in ("first", "second", "third"):
            yield name
            time.sleep(0.3)  # listing the next directory
        walked["end"] = time.time()

    results = dict(forked.imap_unordered(started_at, walk(), 2, on_death=lambda x: None))
    assert sorted(results) == [0, 1, 2]
    assert results[0] < walked["end"] - 0.5 and results[1] < walked["end"] - 0.2


def test_ctrl_c_stops_this_process_and_its_workers(tmp_path):
    """SIGINT to the process group (a terminal's Ctrl-C): the workers die of it, the parent
    raises KeyboardInterrupt and reaps them."""
    parent, pids = start_two_busy_workers(tmp_path, 30, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True, start_new_session=True)
    os.killpg(parent.pid, signal.SIGINT)
    out, err = parent.communicate(timeout=20)
    assert parent.returncode != 0 and out == "interrupted []\n" and "KeyboardInterrupt" in err, \
        (parent.returncode, out, err, pids.read_text() if pids.exists() else "no worker started")
    workers = {int(p) for p in pids.read_text().split()}
    # gone: dead and reaped (by the parent, or by init once it exited)
    assert wait_until(lambda: not any(os.path.exists(f"/proc/{pid}") for pid in workers))
