"""Analyses the engine runs beside its walk, holding it through ``engine_context.EngineContext``
(never importing it): ``islands`` (fp32 islands in autocast regions, CAL002), ``results`` (compiled
outputs and how they are used, CAL005), ``switches`` (run-time switches and the conditions they put
on findings), ``dual_params`` (parameters given duals in a ``dual_level`` region)."""
