"""The engine: abstract interpretation of module summaries, whose events (``events.py``) the facts read.

Values and where the engine stands
    ``values``, ``contexts`` (autocast, config, grad mode, dual level), ``hashing``, ``constants``,
    ``arguments`` (a call's arguments and binding helpers), ``frames`` (context, frame, pending calls).
Reading the project: ``index`` (files to summaries, dotted names to files).
The engine, a stack of classes, each over the one below (``Interpreter`` is the top)
    ``state`` (what one analysis knows; methods called up the stack declared), ``heap`` (versioned
    cells, object model: MRO, members, instance attributes, harvests), ``names`` (name resolution),
    ``incremental/memo`` (walk memo, summaries and replay), ``effects/torch_calls``, ``calls``
    (call dispatch, function walks), ``statements`` (statements and expressions), ``interpreter``.
What library calls do: ``effects/`` (``torch_calls``: compile, forward AD, autocast and config,
    autograd; ``containers``: containers, registries, attributes, import side effects;
    ``frameworks``: the training frameworks' rows), with ``reach`` (module wrappers and moves,
    grad and freezing, receiver methods) built on the last two and ``stores`` shared by them.
Analyses the engine calls, holding it through ``engine_context.EngineContext`` (never importing it):
    ``reach``, ``islands`` (fp32 islands, CAL002), ``results`` (compiled outputs, CAL005),
    ``switches`` (run-time switches), ``dual_params`` (dual parameters).
Across analyses: ``walks`` (walk summaries a long-lived front end keeps; ``incremental/memo`` replays).
After the walk: ``call_order`` (plain calls before dual ones), ``suppressions`` (CAL901),
    ``cancellation`` (stopping an analysis without importing the engine).
"""
