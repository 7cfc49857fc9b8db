"""A pytest-xdist scheduler that survives a crashed worker (tests/ and parity/ use it).

tests/conftest.py and parity/conftest.py import the hook below, so every run
over either folder gets it. test.sh runs the suite on pytest-xdist workers
with `--dist loadfile`. In pytest-xdist 3.8 (the newest release), a worker
that dies mid-file (a segfault, an out-of-memory kill) can leave the whole
run waiting forever: the scheduler puts the dead worker's finished files
back on the queue as empty work, and a replacement worker handed a single
test never starts it (pytest-xdist issues 1323, 1327 and 1378). CI then ends
at its time limit with no summary and no name for the test that crashed.
`CrashTolerantLoadFile` is xdist's own loadfile scheduling with those two
paths mended: the crashed test is reported failed once (xdist's crash report
names it), the rest of its file and every other file still run, and the run
ends. A third path, seen once in CI under load: work sent to a worker that has
just died raises OSError in the controller; it is left for the crash report.
"""

from __future__ import annotations

import contextlib

import pytest

try:
    from xdist.scheduler import LoadFileScheduling
except ImportError:  # pytest-xdist not installed: the suite runs serially
    LoadFileScheduling = None

if LoadFileScheduling is not None:

    class CrashTolerantLoadFile(LoadFileScheduling):
        """`--dist loadfile` that finishes the run after a worker crash."""

        def remove_node(self, node):
            workload = self.assigned_work.pop(node)
            unfinished = {scope: unit for scope, unit in workload.items() if not all(unit.values())}
            if not unfinished:  # a normal shutdown
                return None
            # A worker runs its tests in the order given, so the first unfinished one is
            # the test it died in. xdist reports it failed; running it again on the
            # replacement would likely crash that worker too.
            crashed_scope, crashed = next(
                (scope, nodeid)
                for scope, unit in unfinished.items()
                for nodeid, done in unit.items()
                if not done
            )
            unfinished[crashed_scope][crashed] = True
            # Only files with tests left go back on the queue (xdist 3.8 requeued them all).
            for scope, unit in unfinished.items():
                if not all(unit.values()):
                    self.workqueue[scope] = unit
            for other in self.assigned_work:
                self._reschedule(other)
            return crashed

        def _assign_work_unit(self, node):
            # A worker can die between finishing a test and the controller hearing of its
            # death; the controller then hands it more work down a closed pipe and xdist
            # raises OSError (an INTERNALERROR that ends the run). The unit is already in
            # the node's assigned work, so remove_node, which comes with the crash report,
            # puts it back on the queue.
            with contextlib.suppress(OSError):
                super()._assign_work_unit(node)

        def _reschedule(self, node):
            if node.shutting_down:
                return
            # xdist's rule: one more file for a node down to its last two tests.
            if self.workqueue and self._pending_of(self.assigned_work[node]) <= 2:
                self._assign_work_unit(node)
            # The mend: a worker starts a test only once it holds the next one or has been
            # told no more will come, so a replacement handed a one-test file gets more,
            # or the word to stop.
            while self.workqueue and self._pending_of(self.assigned_work[node]) < 2:
                self._assign_work_unit(node)
            if not self.workqueue:
                node.shutdown()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if LoadFileScheduling is None or config.getvalue("dist") != "loadfile":
        return None  # xdist's own scheduler
    return CrashTolerantLoadFile(config, log)
