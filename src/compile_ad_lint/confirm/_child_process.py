"""The confirm child's process tree (``_child.py`` loads this file beside it; standard library only).

On Linux the child is a child subreaper, so whatever the user's code starts stays in its tree even
after its parent exits (daemons that called ``setsid`` included); before exiting it kills what is
left of that tree, also processes that dropped the runner's environment marker.
"""

import os
import signal
import sys

PR_SET_CHILD_SUBREAPER = 36


def become_subreaper():
    """Adopt the orphans of the user's code (Linux ``prctl``), so that they stay findable as descendants."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except Exception:
        pass


def end_descendants():
    """Kill every process left in this process's tree: as subreaper it adopts the orphans of each one
    killed, so repeating until no child is left reaches daemons however deep they were started."""
    for _ in range(100):
        children = _children()
        if not children:
            return
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for pid in children:
            try:
                os.waitpid(pid, 0)
            except OSError:  # reaped by the user's own code (a ``Popen``) already
                pass


def _children():
    pids = set()
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:  # not Linux: the runner's process group kill is all there is
        return pids
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/children", encoding="ascii") as handle:
                pids.update(int(pid) for pid in handle.read().split())
        except OSError:
            pass
    return pids
