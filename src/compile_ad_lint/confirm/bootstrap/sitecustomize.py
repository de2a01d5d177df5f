"""compile-ad-lint confirm: instrument this interpreter for a confirm run, then run the
``sitecustomize`` this one shadows.

``compile-ad-lint confirm -- COMMAND`` puts this folder first on ``PYTHONPATH`` and names its sites
file in ``COMPILE_AD_LINT_CONFIRM_SITES``, so every Python process of the command (and the workers
that torchrun or accelerate start, which inherit both) loads ``_live.py`` from
``COMPILE_AD_LINT_CONFIRM_LIVE``. Without those variables it only hands over to the next
``sitecustomize`` on the path. It never raises: a failure is reported on stderr and the run goes on.
"""

import importlib.machinery
import importlib.util
import os
import sys


def _activate():
    sites = os.environ.get("COMPILE_AD_LINT_CONFIRM_SITES")
    live = os.environ.get("COMPILE_AD_LINT_CONFIRM_LIVE")
    if not sites or not live:
        return
    try:
        spec = importlib.util.spec_from_file_location("_compile_ad_lint_live", live)
        module = importlib.util.module_from_spec(spec)
        sys.modules["_compile_ad_lint_live"] = module
        spec.loader.exec_module(module)
        module.activate(sites)
    except Exception as error:
        print(
            f"compile-ad-lint confirm: instrumentation not installed: {type(error).__name__}: {error}", file=sys.stderr
        )


def _chain():
    """Run the next ``sitecustomize`` on ``sys.path`` (a distribution's or a virtual environment's)."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_activate()
_chain()
