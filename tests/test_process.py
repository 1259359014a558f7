from __future__ import annotations

import multiprocessing
import os

from rankaug._process import current_pid, forked


def _report(queue: multiprocessing.Queue[tuple[int, int]]) -> None:
    queue.put((current_pid(), os.getpid()))


def _report_forked(queue: multiprocessing.Queue[bool]) -> None:
    queue.put(forked())


class TestCurrentPid:
    def test_is_this_process(self) -> None:
        assert current_pid() == os.getpid()

    def test_is_the_child_in_a_multiprocessing_child(self) -> None:
        context = multiprocessing.get_context("fork")  # as DataLoader workers start on Linux
        queue = context.Queue()
        child = context.Process(target=_report, args=(queue,))
        child.start()
        reported, actual = queue.get(timeout=60)
        child.join(timeout=60)
        assert child.exitcode == 0
        assert reported == actual
        assert actual != os.getpid()

    def test_is_the_child_after_os_fork(self) -> None:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: report and leave at once
            os.write(write, f"{current_pid()} {os.getpid()}".encode())
            os._exit(0)
        os.close(write)
        reported, actual = (int(v) for v in os.read(read, 64).split())
        os.close(read)
        os.waitpid(pid, 0)
        assert (reported, actual) == (pid, pid)


class TestForked:
    def test_is_false_here_and_true_in_a_forked_child(self) -> None:
        assert not forked()
        context = multiprocessing.get_context("fork")
        queue = context.Queue()
        child = context.Process(target=_report_forked, args=(queue,))
        child.start()
        in_child = queue.get(timeout=60)
        child.join(timeout=60)
        assert child.exitcode == 0
        assert in_child is True
