"""Running a check under the facade ``api.Analyzer``: one module per concern.

- ``run``: one check's analysis of roots (``Run``): the result cache first, then this process or
  the worker processes, round after round of callers.
- ``workspace``: one process's analysis state (``Workspace``: module views, the module index, an
  interpreter per root) and the worker processes' side of it.
- ``workers``: the worker processes (``WorkerPool``), each task sent where it costs least.
- ``callers``: the byte-level prefilter: which files can hold an anchor, which may call a
  requested function.
- ``results``: the result cache's records (``RootResult``, ``ResultReads``, ``CheckRecord``) and
  the keys they are stored under.
- ``tuning``: the garbage collector's thresholds while a root is analyzed.
"""
