"""Instrumentation of the user's own run (``compile-ad-lint confirm -- COMMAND``; standard library and
torch only, never imported by the linter).

``bootstrap/sitecustomize.py`` loads this file in every Python process of the command whose
environment names a sites file (``COMPILE_AD_LINT_CONFIRM_SITES``): the command itself and the
interpreters it starts (torchrun's and accelerate's workers). Nothing is imported until the user's
code imports torch; then the probes go in (:class:`Live`):

* every ``torch.compile`` / ``torch._dynamo.optimize`` result and compiled module is observed through
  ``_child.Recorder``'s compile probes (the same handles and caller stacks as ``check --confirm``);
* a call of one from a flagged compiled call (CAL002, CAL004, CAL005) is kept as a
  ``_replay.Region``: its inputs, autocast state, RNG state and traced config, with hooks that keep
  the gradient the user's backward sends into its outputs;
* a call with dual tensors at a flagged CAL001 site is compared there with its eager replay;
* ``Tensor.backward``, ``torch.autograd.backward`` and ``torch.autograd.grad`` at a flagged backward
  run the user's backward, then measure the regions it went through (``_replay``), before returning.

Each site is measured the first time it runs. The measurements go to ``<out>/<pid>.json`` (rewritten
whole at each change). The process stops itself (``os._exit(0)``, after writing) once every site is
measured, or once a measured site runs again while no reached site is waiting for its measurement
(the run has gone round its loop: another step would reach nothing new), unless the sites file says
``until_exit``. It never writes anywhere else.
"""

import contextlib
import importlib.abc
import importlib.util
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REGION_CODES = ("CAL002", "CAL004", "CAL005")
BACKWARD_CODES = ("CAL002", "CAL004", "CAL005")
KEPT_REGIONS = 2  # per site: the newest calls of its compiled region that a backward may go through


def _sibling(name, alias):
    module = sys.modules.get(alias)
    if module is None:
        spec = importlib.util.spec_from_file_location(alias, os.path.join(HERE, name))
        module = importlib.util.module_from_spec(spec)
        sys.modules[alias] = module
        spec.loader.exec_module(module)
    return module


class _AfterLoad(importlib.abc.Loader):
    """A module's own loader, then ``after(module)`` once the module has run."""

    def __init__(self, loader, after):
        self.loader = loader
        self.after = after

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        self.after(module)

    def __getattr__(self, name):
        return getattr(self.loader, name)


class TorchWatcher(importlib.abc.MetaPathFinder):
    """Calls ``callback(torch)`` right after ``import torch`` has finished, in this process."""

    def __init__(self, callback):
        self.callback = callback
        self.looking = False

    def find_spec(self, name, path=None, target=None):
        if name != "torch" or self.looking:
            return None
        self.looking = True
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self.looking = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        spec.loader = _AfterLoad(spec.loader, self.loaded)
        return spec

    def loaded(self, module):
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)
        self.callback(module)


class Site:
    def __init__(self, document):
        self.id = document["id"]
        self.code = document["code"]
        self.file = document["file"]
        self.lines = tuple(document["lines"])
        call = document.get("call") or {}
        self.call_file = call.get("file")
        self.call_lines = tuple(call.get("lines") or ())
        self.backend = document.get("backend") or "inductor"
        self.functional = document.get("functional") or ""

    def at(self, stack):
        return any(f == self.file and self.lines[0] <= line <= self.lines[1] for f, line in stack)

    def at_call(self, stack):
        if not self.call_lines:
            return False
        return any(f == self.call_file and self.call_lines[0] <= line <= self.call_lines[1] for f, line in stack)


class Live:
    def __init__(self, document):
        self.sites = [Site(site) for site in document["sites"]]
        self.out = document["out"]
        self.until_exit = bool(document.get("until_exit"))
        self.started = time.monotonic()
        self.files = {site.file for site in self.sites} | {site.call_file for site in self.sites if site.call_file}
        self.state = {
            "pid": os.getpid(),
            "rank": os.environ.get("RANK"),
            "argv": [str(a)[:200] for a in sys.argv[:8]],
            "torch": None,
            "problem": None,
            "stop": None,
            "sites": {},
        }
        self.measured = set()
        self.reached = set()
        self.repeats = set()
        self.recorder = None
        self.regions = {site.id: [] for site in self.sites}
        self.serial = 0
        self.after_create_graph = []  # CAL004 sites whose create_graph=True call ran without error

    @contextlib.contextmanager
    def noting(self, what):
        """An instrumentation failure is reported with the results (once per kind), never raised."""
        try:
            yield
        except Exception as error:
            if self.state["problem"] is None:
                self.state["problem"] = f"instrumentation failed while {what}: {type(error).__name__}: {error}"
                self.write()

    # -- results -----------------------------------------------------------------------------------
    def entry(self, site):
        return self.state["sites"].setdefault(str(site.id), {"hits": 0, "first_seconds": None, "measurement": None})

    def write(self):
        path = os.path.join(self.out, f"{os.getpid()}.json")
        with contextlib.suppress(OSError):
            with open(path + ".tmp", "w", encoding="utf-8") as handle:
                json.dump(self.state, handle)
            os.replace(path + ".tmp", path)

    def hit(self, site):
        entry = self.entry(site)
        entry["hits"] += 1
        if site.id not in self.reached:
            self.reached.add(site.id)
            entry["first_seconds"] = round(time.monotonic() - self.started, 2)
            self.write()
        elif site.id in self.measured:
            self.repeats.add(site.id)
            self.maybe_stop("a measured site ran again and no reached site waits for its measurement")

    def measure(self, site, measurement):
        if site.id in self.measured:
            return
        self.measured.add(site.id)
        self.entry(site)["measurement"] = measurement
        self.regions[site.id] = []
        self.write()
        if len(self.measured) == len(self.sites) and not self.until_exit:
            self.stop("every flagged site has a measurement")

    def maybe_stop(self, reason):
        if self.until_exit or self.reached - self.measured:
            return
        self.stop(reason)

    def stop(self, reason):
        self.state["stop"] = reason
        self.write()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(0)

    def finish(self):
        """At a normal exit: CAL004 sites still waiting for a later backward are measured as they stand."""
        if self.state["torch"] is None:  # a process that never imported torch ran no site
            return
        for site in list(self.after_create_graph):
            self.measure(site, {"kind": "cal004", "device": "?", "outcome": "no-later-backward"})
        self.write()

    # -- installing ----------------------------------------------------------------------------------
    def install(self, torch):
        try:
            self.state["torch"] = torch.__version__
            self.state["cuda"] = bool(torch.cuda.is_available())
            if not self.sites:
                return
            child = _sibling("_child.py", "_compile_ad_lint_child")
            replay = _sibling("_replay.py", "_compile_ad_lint_replay")
            blob = os.path.join(self.out, f"{os.getpid()}-scratch")
            os.makedirs(blob, exist_ok=True)
            self.recorder = recorder_class(child, replay)(torch, blob, (), ())
            self.recorder.live = self
            self.recorder.torch_compile_original = torch.compile
            self.recorder.install_compile_probes()
            self.recorder.install_live_probes()
        except Exception as error:  # instrumentation never breaks the user's run
            self.state["problem"] = f"instrumentation failed: {type(error).__name__}: {error}"
            self.write()


def recorder_class(child, replay):
    """``_child.Recorder`` with the live probes: it keeps regions and measures sites in this process."""

    class LiveRecorder(child.Recorder):
        live = None
        in_backward = False  # a user's backward is running: torch's nested backward calls pass through

        def install_live_probes(self):
            import torch._functorch.config as functorch_config

            self.replay = replay
            self.real_compile = self.torch_compile_original
            self.targets = {}
            self.traced = {}
            recorder = self
            cls = type(functorch_config)
            original_getattr = cls.__getattr__

            def __getattr__(config, name):
                value = original_getattr(config, name)
                if name == "backward_pass_autocast" and config is functorch_config and recorder.running:
                    # Read while tracing that region: the config it assumed and the autocast around it.
                    recorder.traced[recorder.running[-1]] = (value, replay.autocast_state(recorder.torch))
                return value

            self.patch(cls, "__getattr__", __getattr__)
            self.install_live_backward_probes()

        # -- compiled callables --------------------------------------------------------------------
        def observed(self, result, original):
            wrapped = super().observed(result, original)
            from torch._dynamo import eval_frame

            caller = sys._getframe(1).f_locals
            options = dict(caller.get("kwargs") or {}) if isinstance(caller.get("kwargs"), dict) else {}
            options.pop("disable", None)
            if isinstance(wrapped, eval_frame.OptimizedModule):
                handle = self.module_handles[id(wrapped)][0]
                module = wrapped._orig_mod
                target = replay.Target(module, module, self.real_compile, options)
            elif wrapped is not result:
                handle = self.handles - 1
                module = getattr(original, "__self__", None)
                module = module if isinstance(module, self.torch.nn.Module) else None
                target = replay.Target(original, module, self.real_compile, options)
            else:
                return wrapped
            self.targets[handle] = target
            return wrapped

        def observe(self, handle, call, args, kwargs):
            torch = self.torch
            live = self.live
            if torch.compiler.is_compiling() or self.busy or live is None or handle is None:
                return super().observe(handle, call, args, kwargs)
            stack = self.user_stack()
            if not any(frame[0] in live.files for frame in stack):
                return super().observe(handle, call, args, kwargs)
            import torch.autograd.forward_ad as fwAD

            if fwAD._current_level >= 0:
                for site in live.sites:
                    if site.code == "CAL001" and site.id not in live.measured and site.at(stack):
                        return self.measure_dual(handle, call, args, kwargs, site)
            regions = [
                site
                for site in live.sites
                if site.code in REGION_CODES and site.id not in live.measured and site.at_call(stack)
            ]
            if not regions or not torch.is_grad_enabled() or handle not in self.targets:
                return super().observe(handle, call, args, kwargs)
            before = replay.Region.before_call(torch, args, kwargs)
            self.running.append(handle)
            try:
                result = call(*args, **kwargs)
            finally:
                self.running.pop()
            with self.guard(swallow=False), live.noting("keeping the compiled call for its replay"):
                import torch._functorch.config as functorch_config

                region = replay.Region(torch, handle, self.targets[handle], call, args, kwargs, before)
                region.traced(*self.traced.get(handle, (functorch_config.backward_pass_autocast, None)))
                region.attach(result, lambda: self.live.serial)
                for site in regions:
                    kept = live.regions[site.id]
                    kept.append(region)
                    del kept[:-KEPT_REGIONS]
            return result

        def measure_dual(self, handle, call, args, kwargs, site):
            torch = self.torch
            self.live.hit(site)
            before = replay.rng_state(torch)
            self.running.append(handle)
            try:
                result, raised = call(*args, **kwargs), None
            except Exception as error:
                result, raised = None, error
            finally:
                self.running.pop()
            with self.guard():
                try:
                    measurement = replay.cal001(torch, call, args, kwargs, result, raised, before)
                except Exception as error:
                    measurement = {"kind": "error", "device": "?", "reason": f"{type(error).__name__}: {error}"}
                self.live.measure(site, measurement)
            if raised is not None:
                raise raised
            return result

        # -- backward ------------------------------------------------------------------------------
        def install_live_backward_probes(self):
            torch = self.torch
            recorder = self
            original_backward = torch.autograd.backward
            original_tensor_backward = torch.Tensor.backward
            original_grad = torch.autograd.grad

            def backward(
                tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None
            ):
                return recorder.on_backward(
                    lambda: original_backward(
                        tensors, grad_tensors, retain_graph, create_graph, grad_variables, inputs=inputs
                    ),
                    create_graph,
                )

            def tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
                return recorder.on_backward(
                    lambda: original_tensor_backward(self, gradient, retain_graph, create_graph, inputs=inputs),
                    create_graph,
                )

            def grad(outputs, inputs, *args, **kwargs):
                create_graph = kwargs.get("create_graph", args[2] if len(args) > 2 else False)
                return recorder.on_backward(lambda: original_grad(outputs, inputs, *args, **kwargs), create_graph)

            self.patch(torch.autograd, "backward", backward)
            self.patch(torch.Tensor, "backward", tensor_backward)
            self.patch(torch.autograd, "grad", grad)

        def on_backward(self, call, create_graph):
            torch = self.torch
            live = self.live
            if torch.compiler.is_compiling() or self.busy or live is None or self.in_backward:
                return call()  # torch's own nested call (Tensor.backward calls torch.autograd.backward)
            stack = self.user_stack()
            sites = [s for s in live.sites if s.code in BACKWARD_CODES and s.at(stack)]
            waiting = [s for s in live.after_create_graph if s not in sites]
            if not sites and not waiting:
                return call()
            for site in sites:
                live.hit(site)
            pending = [s for s in sites if s.id not in live.measured]
            live.serial += 1
            serial = live.serial
            backward = replay.autocast_state(torch)
            real_before = {}
            with self.guard():
                for site in pending:
                    if site.code == "CAL005":
                        for region in live.regions[site.id]:
                            for leaf in region.leaves()[1]:
                                if leaf.is_leaf:
                                    real_before[id(leaf)] = leaf.grad is None
            self.in_backward = True
            try:
                result = call()
            except Exception as error:
                self.in_backward = False
                with self.guard():
                    for site in waiting:
                        live.after_create_graph.remove(site)
                        self.measure_cal004_later(site, error, stack)
                    for site in pending:
                        if site.code == "CAL004":
                            self.measure_cal004(site, serial, backward, error, create_graph)
                raise
            self.in_backward = False
            with self.guard():
                for site in waiting:
                    live.after_create_graph.remove(site)
                    self.measure_cal004_later(site, None, stack)
                for site in pending:
                    self.measure_site(site, serial, backward, real_before, create_graph)
            return result

        def measure_site(self, site, serial, backward, real_before, create_graph):
            live = self.live
            try:
                if site.code == "CAL004":
                    self.measure_cal004(site, serial, backward, None, create_graph)
                    return
                regions = [r for r in live.regions[site.id] if r.fed_by(serial)]
                if not regions:
                    live.measure(site, {"kind": site.code.lower(), "device": "?", "outcome": "no-region"})
                    return
                region = regions[-1]
                if site.code == "CAL002":
                    measurement = replay.cal002(region, serial, backward, site.backend)
                else:
                    measurement = replay.cal005(region, serial, backward, real_before)
            except Exception as error:
                measurement = {"kind": "error", "device": "?", "reason": f"{type(error).__name__}: {error}"}
            live.measure(site, measurement)

        def measure_cal004(self, site, serial, backward, error, create_graph):
            live = self.live
            regions = live.regions[site.id]
            witness = None
            if regions:
                try:
                    witness = replay.double_backward(regions[-1], serial, backward)
                except Exception as failure:
                    witness = {"ok": False, "error": replay.describe_error(failure)}
            device = regions[-1].device if regions else "?"
            if error is None and create_graph:
                self.cal004_witness = getattr(self, "cal004_witness", {})
                self.cal004_witness[site.id] = (witness, device)
                live.after_create_graph.append(site)
                return
            live.measure(
                site,
                {
                    "kind": "cal004",
                    "device": device,
                    "outcome": "raised" if error is not None else "no-create-graph",
                    "raised": replay.describe_error(error),
                    "eager": witness,
                },
            )

        def measure_cal004_later(self, site, error, stack):
            witness, device = getattr(self, "cal004_witness", {}).get(site.id, (None, "?"))
            self.live.measure(
                site,
                {
                    "kind": "cal004",
                    "device": device,
                    "outcome": "later-raised" if error is not None else "later-ran",
                    "raised": replay.describe_error(error),
                    "later": stack[0] if stack else None,
                    "eager": witness,
                },
            )

    return LiveRecorder


def _worker_process():
    """Processes of torch's own that run no user code (inductor's compile workers)."""
    main = sys.argv[0] if sys.argv else ""
    return "compile_worker" in main or "_inductor" in main


def activate(sites_path):
    """Called by the bootstrap ``sitecustomize``: install the import watcher that instruments torch."""
    if _worker_process():
        return
    with open(sites_path, encoding="utf-8") as handle:
        document = json.load(handle)
    live = Live(document)
    sys.meta_path.insert(0, TorchWatcher(live.install))
    import atexit

    atexit.register(live.finish)
    return live
