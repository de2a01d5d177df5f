"""The engine: abstract interpretation of module summaries, whose events (``events.py``) the facts read.

Values and where the engine stands
    ``values``, ``contexts`` (autocast, config, grad mode, dual level), ``hashing``, ``constants``,
    ``arguments`` (a call's arguments and binding helpers), ``frames`` (context, frame, pending calls).
Reading the project: ``index`` (files to summaries, dotted names to files).
The engine, a stack of classes, each over the one below (``Interpreter`` is the top)
    ``state`` (what one analysis knows; lower classes call up via ``engine``), ``heap`` (versioned
    cells, object model: MRO, members, instance attributes, harvests), ``names`` (name resolution),
    ``incremental.memo`` (walk memo, summaries and replay), ``external_calls`` (a called name's
    meanings to their effects' handlers; backwards and config writes recorded), ``calls`` (call
    dispatch, function walks), ``statements`` (statements and expressions), ``interpreter``.
What library calls do: ``effects/``, one handler per ``Effect`` registered by table rows
    (``effects/registry``) in a module per behaviour: ``compile``, ``forward_ad``, ``autocast`` (and
    the functorch config), ``autograd``, ``modules`` (wrappers, collections), ``containers``
    (getattr/setattr, registries: ``Reach`` is built on it), ``frameworks``, ``settings``. Each takes
    the engine as ``engine_context.EngineContext``; ``stores`` holds what they share with ``reach``
    (module moves, receiver methods), ``grad`` (autograd history) and ``module_facts`` (what a value is).
``analyses/``, run beside the walk through ``engine_context.EngineContext`` (never importing it):
    ``islands`` (fp32 islands, CAL002), ``results`` (compiled outputs, CAL005), ``switches`` (run-time
    switches), ``dual_params`` (dual parameters).
Incremental, one entry (``incremental/__init__``): ``cells`` (heap cells, prerequisites), ``records``
    (log entries), ``walks`` (summaries a long-lived front end keeps), ``entries`` (memoized walks).
After the walk: ``call_order`` (plain calls before dual ones), ``suppressions`` (CAL901),
    ``cancellation`` (stopping an analysis without importing the engine).
"""
