"""How an analysis in progress is stopped, apart from the interpreter that raises it: front ends
catch it (the language server, ``api``) without importing the interpreter, which a check served
from the cache never needs."""


class AnalysisCancelled(Exception):
    """The analysis was asked to stop (its ``cancelled`` callback said so): its result is discarded."""
