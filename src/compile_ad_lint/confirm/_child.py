"""The process that runs user code for confirm mode (executed as a script, never imported by the linter).

It depends only on the standard library and torch, so that it works whatever else the user's environment
holds. Usage: ``python -B _child.py SPEC.json``; it writes ``result.json`` and ``tensors.bin`` into the
spec's ``out`` directory. The runner starts it on a private copy of the project; every path it reports
is translated back to the original (``origins``), so the copy never shows in a result. Modes:

* ``env``: report the torch version and CUDA devices.
* ``run``: install the instrumentation, run one entry point, record what was observed.

Instrumentation (installed before user code is imported, so ``from ... import unpack_dual`` binds it):
``torch.autograd.forward_ad.unpack_dual`` (tangent ``None`` or its value), every call of a
``torch.compile`` / ``torch._dynamo.optimize`` result that receives dual tensors (its outputs' tangents
or its exception, even one the user's code catches), ``Tensor.backward``, ``torch.autograd.backward``
and ``torch.autograd.grad`` (resulting gradients with their leaves' parameter serials and
``create_graph``, or the exception they raise), the ``torch.autograd.functional`` functions (result
or exception), the entry point's exception, and (when asked) the lines executed in the flagged files,
to tell whether the entry reached the site. Each probe is installed by its own ``Recorder.install_*``
method through ``Recorder.patch``; ``Recorder.uninstall`` puts every original back when the entry point
has returned.

CAL002's extra runs: ``force`` (compiled) answers reads of ``backward_pass_autocast`` with the matching
value while a flagged compiled callable runs (``_child_cal002.force_config``); ``assume`` (eager) runs the
backward of each flagged region under the autocast state its compiled backward would have assumed
(``_child_cal002.assume_backward_autocast``): the eager differential.

Processes: the child adopts and, before exiting, kills what the user's code started (``_child_process``).
"""

import contextlib
import json
import os
import sys
import traceback

MAX_ELEMENTS = 1 << 20  # per recorded tensor; larger tensors are subsampled with a fixed stride
MAX_RECORDS = 2000
ORIGINS: list[tuple[str, str]] = []  # (folder of the run's copy, original folder), resolved: set from the spec


def _sibling(name):
    """The module ``name`` beside this file, loaded by its path under a private name: this script runs in
    the user's environment, where an import by name could find the user's module (``_live`` loads this
    file the same way)."""
    import importlib.util

    alias = f"_compile_ad_lint_{name}"
    module = sys.modules.get(alias)
    if module is None:
        path = os.path.join(os.path.dirname(os.path.realpath(__file__)), f"{name}.py")
        spec = importlib.util.spec_from_file_location(alias, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[alias] = module
        spec.loader.exec_module(module)
    return module


cal002 = _sibling("_child_cal002")
process = _sibling("_child_process")


def origin(filename):
    """The real path of ``filename`` as the linter knows it: inside the run's copy, the original's."""
    real = os.path.realpath(filename)
    for copy, original in ORIGINS:
        if real == copy or real.startswith(copy + os.sep):
            return original + real[len(copy) :]
    return real


def _write(out, result):
    with open(os.path.join(out, "result.json"), "w", encoding="utf-8") as handle:
        json.dump(result, handle)


def env_mode(spec):
    result = {"torch": None, "cuda": False, "gpus": []}
    try:
        import torch
    except Exception as error:
        result["error"] = f"{type(error).__name__}: {error}"
        _write(spec["out"], result)
        return
    result["torch"] = torch.__version__
    try:
        result["cuda"] = bool(torch.cuda.is_available())
        if result["cuda"]:
            result["gpus"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    except Exception as error:
        result["cuda_error"] = f"{type(error).__name__}: {error}"
    _write(spec["out"], result)


_MISSING = object()


class Recorder:
    def __init__(self, torch, out, watched, focus):
        self.torch = torch
        self.records = []
        self.blob = open(os.path.join(out, "tensors.bin"), "wb")
        self.offset = 0
        self.busy = False  # instrumentation at work: the probes it triggers pass straight through (see guard)
        self.watched = {os.path.realpath(p) for p in watched}
        self.focus = {os.path.realpath(p) for p in focus}
        self.torch_dir = os.path.dirname(os.path.realpath(torch.__file__))
        #: This script's files: their frames are the instrumentation's, never the user's.
        self.here = {os.path.realpath(path) for path in (__file__, cal002.__file__, process.__file__)}
        self.real = {}
        self.handles = 0
        self.compiling = False
        self.module_handles = {}  # id(OptimizedModule) -> (handle, module kept alive)
        self.forced_hits = []  # reads of backward_pass_autocast answered with the matching value
        self.assumed_hits = []  # calls of a region whose backward the eager differential ran under the assumed autocast
        self.regions = {}  # handle -> wrapper of that compiled callable's calls (the eager differential's)
        self.running = []  # handles of the compiled callables executing now, innermost last
        self.handle_calls = set()  # (handle, caller frames): which call sites reach which compiled callable
        self.in_functional = False  # inside a recorded torch.autograd.functional call
        self.executed = {}  # watched file -> lines run (start_trace)
        self.patches = []  # (owner, name, original) for each attribute a probe replaced, in order
        self.tracers = None  # the trace functions start_trace replaced
        self.original_unpack = None

    def real_path(self, filename):
        real = self.real.get(filename)
        if real is None:
            real = self.real[filename] = origin(filename)
        return real

    def new_handle(self):
        self.handles += 1
        return self.handles - 1

    def note_handle_call(self, handle):
        if handle is not None and len(self.handle_calls) < 5000:
            self.handle_calls.add((handle, tuple(tuple(frame) for frame in self.user_stack()[:8])))

    # -- where a call came from -------------------------------------------------------------
    def user_stack(self):
        """The calling frames outside torch and outside this file, innermost first.

        It starts at the direct caller: the probes calling it, and whatever else of this file is between
        them and the user's call, are left out by the file filter, so no frame depth needs counting.
        """
        frames = []
        frame = sys._getframe(1)
        while frame is not None and len(frames) < 40:
            filename = self.real_path(frame.f_code.co_filename)
            if not filename.startswith(self.torch_dir) and filename not in self.here and not filename.startswith("<"):
                frames.append([filename, frame.f_lineno])
            frame = frame.f_back
        return frames

    # -- tensors ----------------------------------------------------------------------------
    def store(self, tensor):
        from array import array

        torch = self.torch
        flat = tensor.detach().reshape(-1)
        numel = flat.numel()
        if numel > MAX_ELEMENTS:
            flat = flat[:: -(-numel // MAX_ELEMENTS)]
        values = flat.to("cpu", torch.float64)
        data = array("d", values.tolist())
        data.tofile(self.blob)
        entry = {
            "offset": self.offset,
            "count": len(data),
            "numel": numel,
            "dtype": str(tensor.dtype).replace("torch.", ""),
            "shape": list(tensor.shape),
        }
        self.offset += len(data) * 8
        return entry

    def add(self, record):
        if len(self.records) < MAX_RECORDS:
            self.records.append(record)

    def wanted(self, stack):
        """Only events called from the files with findings are recorded (and only while there is room)."""
        return len(self.records) < MAX_RECORDS and any(frame[0] in self.focus for frame in stack)

    # -- installing and removing probes -----------------------------------------------------
    def patch(self, owner, name, value):
        """Replace ``owner.name`` with ``value``; :meth:`uninstall` puts back the original (a class's own
        attribute exactly as stored, a ``staticmethod`` included, or none when it was inherited)."""
        original = vars(owner).get(name, _MISSING) if isinstance(owner, type) else getattr(owner, name)
        self.patches.append((owner, name, original))
        setattr(owner, name, value)

    def uninstall(self):
        """Undo every :meth:`patch`, newest first. Wrappers the user's code still holds (``from torch
        import compile``) pass straight through from now on: the records are final."""
        self.busy = True
        while self.patches:
            owner, name, original = self.patches.pop()
            with contextlib.suppress(Exception):  # the run is over: a restore that fails changes no record
                if original is _MISSING:
                    delattr(owner, name)
                else:
                    setattr(owner, name, original)

    @contextlib.contextmanager
    def guard(self, swallow=True):
        """The one busy-flag block: while instrumentation works, the probes it triggers pass straight
        through; the flag is restored afterwards (guards nest).

        ``swallow``: an exception inside is instrumentation's own and is dropped (instrumentation never
        breaks the user's run). ``swallow=False`` is for a block that runs the user's call, whose
        exception must reach the user's code.
        """
        previous = self.busy
        self.busy = True
        try:
            yield
        except Exception:
            if not swallow:
                raise
        finally:
            self.busy = previous

    def install(self):
        """Install every probe; run before the user's code is imported, so ``from ... import`` binds them."""
        self.install_unpack_dual_probe()
        self.install_backward_probes()
        self.install_grad_probe()
        self.install_functional_probes()
        self.install_compile_probes()
        self.number_parameters()

    # -- gradients ---------------------------------------------------------------------------
    def leaves(self, roots):
        seen, order, stack = set(), [], []
        for root in roots:
            fn = getattr(root, "grad_fn", None)
            if fn is not None:
                stack.append(fn)
            elif getattr(root, "requires_grad", False):
                order.append(root)
        visited = 0
        while stack and visited < 200000:
            node = stack.pop(0)
            visited += 1
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            variable = getattr(node, "variable", None)
            if variable is not None:
                order.append(variable)
                continue
            for child, _ in getattr(node, "next_functions", ()):
                if child is not None:
                    stack.append(child)
        unique, ids = [], set()
        for leaf in order:
            if id(leaf) not in ids:
                ids.add(id(leaf))
                unique.append(leaf)
        return unique

    def leaf_key(self, leaf):
        """Order leaves the same way in every run: parameters by creation order, other tensors by value."""
        torch = self.torch
        serial = getattr(leaf, "_cal_serial", None)
        if serial is not None:
            return (0, serial, (), "", ())
        with torch.no_grad():
            value = leaf.detach().to(torch.float64)
            fingerprint = (round(float(value.sum()), 6), round(float(value.abs().sum()), 6))
        return (1, 0, tuple(leaf.shape), str(leaf.dtype), fingerprint)

    def number_parameters(self):
        """Give each ``nn.Parameter`` the user's code creates a serial number (two all-ones norm weights tie by value)."""
        torch = self.torch
        original_new = torch.nn.Parameter.__new__
        serials = iter(range(1 << 62))

        def parameter_new(cls, data=None, requires_grad=True):
            parameter = original_new(cls, data, requires_grad)
            if not torch.compiler.is_compiling() and "Fake" not in type(data).__name__:
                with contextlib.suppress(Exception):  # a tensor subclass that refuses attributes keeps value order
                    parameter._cal_serial = next(serials)
            return parameter

        self.patch(torch.nn.Parameter, "__new__", staticmethod(parameter_new))

    def record_grads(self, kind, grads, stack, leaves=(), create_graph=False):
        """``keys``: each leaf's parameter serial (None for other tensors), so runs pair leaves (CAL005)."""
        if len(self.records) < MAX_RECORDS:
            self.add(
                {
                    "kind": kind,
                    "stack": stack,
                    "tensors": [None if grad is None else self.store(grad) for grad in grads],
                    "keys": [getattr(leaf, "_cal_serial", None) for leaf in leaves],
                    "create_graph": bool(create_graph),
                }
            )

    def record_error(self, error, stack, create_graph=False):
        """A backward or ``autograd.grad`` that raised (the user's code may catch it): CAL004's evidence."""
        with self.guard():
            self.add(
                {
                    "kind": "backward-error",
                    "stack": stack,
                    "raised": _describe(error),
                    "create_graph": bool(create_graph),
                }
            )

    # -- probes ------------------------------------------------------------------------------
    def install_unpack_dual_probe(self):
        """``forward_ad.unpack_dual``: the tangent it returns (``None`` or its value)."""
        import torch.autograd.forward_ad as fwAD

        torch = self.torch
        recorder = self
        original_unpack = self.original_unpack = fwAD.unpack_dual

        def unpack_dual(tensor, *, level=None):
            result = original_unpack(tensor, level=level)
            if torch.compiler.is_compiling() or recorder.busy:
                return result
            with recorder.guard():
                stack = recorder.user_stack()
                if recorder.wanted(stack):
                    tangent = result.tangent
                    recorder.add(
                        {
                            "kind": "tangent",
                            "stack": stack,
                            "tangent": None if tangent is None else recorder.store(tangent),
                        }
                    )
            return result

        unpack_dual.__wrapped__ = original_unpack
        self.patch(fwAD, "unpack_dual", unpack_dual)

    def install_backward_probes(self):
        """``torch.autograd.backward`` and ``Tensor.backward``: the gradients each adds to the leaves, or
        its exception. The user's backward runs inside the guard, so torch's own nested call (``Tensor.backward``
        calls ``torch.autograd.backward``) is not recorded twice."""
        torch = self.torch
        recorder = self

        def run_backward(kind, roots, inputs, call, create_graph=False):
            """``call(inputs)`` runs the user's backward; gradients it adds to the leaves are recorded."""
            if torch.compiler.is_compiling() or recorder.busy:
                return call(inputs)
            if inputs is not None and not isinstance(inputs, torch.Tensor):
                inputs = list(inputs)  # a generator can be read once: by us, then by torch
            stack = recorder.user_stack()
            if not recorder.wanted(stack):
                return call(inputs)
            with recorder.guard(swallow=False):
                leaves, before = [], []
                with recorder.guard():
                    if inputs is not None:
                        found = [inputs] if isinstance(inputs, torch.Tensor) else inputs
                    else:
                        found = recorder.leaves(roots)
                        found.sort(key=recorder.leaf_key)
                    before = [None if leaf.grad is None else leaf.grad.detach().clone() for leaf in found]
                    leaves = found
                try:
                    result = call(inputs)
                except BaseException as error:
                    recorder.record_error(error, stack, create_graph)
                    raise
                with recorder.guard():
                    grads = []
                    for leaf, old in zip(leaves, before):
                        grad = leaf.grad
                        grads.append(None if grad is None else (grad.detach() if old is None else grad.detach() - old))
                    recorder.record_grads(kind, grads, stack, leaves, create_graph)
                return result

        original_backward = torch.autograd.backward

        def backward(
            tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None
        ):
            roots = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors)
            return run_backward(
                "backward",
                roots,
                inputs,
                lambda inputs: original_backward(
                    tensors, grad_tensors, retain_graph, create_graph, grad_variables, inputs=inputs
                ),
                create_graph,
            )

        original_tensor_backward = torch.Tensor.backward

        def tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
            return run_backward(
                "backward",
                [self],
                inputs,
                lambda inputs: original_tensor_backward(self, gradient, retain_graph, create_graph, inputs=inputs),
                create_graph,
            )

        self.patch(torch.autograd, "backward", backward)
        self.patch(torch.Tensor, "backward", tensor_backward)

    def install_grad_probe(self):
        """``torch.autograd.grad``: its results (by position), or its exception."""
        torch = self.torch
        recorder = self
        original_grad = torch.autograd.grad

        def grad(outputs, inputs, *args, **kwargs):
            if torch.compiler.is_compiling() or recorder.busy:
                return original_grad(outputs, inputs, *args, **kwargs)
            if not isinstance(inputs, torch.Tensor):
                inputs = list(inputs)
            create_graph = kwargs.get("create_graph", args[2] if len(args) > 2 else False)
            try:
                result = original_grad(outputs, inputs, *args, **kwargs)
            except BaseException as error:
                stack = recorder.user_stack()
                if recorder.wanted(stack):
                    recorder.record_error(error, stack, create_graph)
                raise
            with recorder.guard():
                stack = recorder.user_stack()
                if recorder.wanted(stack):
                    leaves = [inputs] if isinstance(inputs, torch.Tensor) else inputs
                    recorder.record_grads("grad", list(result), stack, leaves, create_graph)
            return result

        self.patch(torch.autograd, "grad", grad)

    def install_functional_probes(self):
        """Record ``torch.autograd.functional`` calls (result tensors or exception): CAL004's evidence
        for ``hessian``'s all-zero result, and where ``hvp``/``jvp`` raise."""
        import functools

        from torch.autograd import functional
        from torch.utils._pytree import tree_leaves

        torch = self.torch
        recorder = self

        def probe(name, original):
            @functools.wraps(original)
            def call(*args, **kwargs):
                if torch.compiler.is_compiling() or recorder.busy or recorder.in_functional:
                    return original(*args, **kwargs)  # ``hessian`` calls ``jacobian``: only the outer call is recorded
                stack = recorder.user_stack()
                if not recorder.wanted(stack):
                    return original(*args, **kwargs)
                recorder.in_functional = True
                try:
                    result = original(*args, **kwargs)
                except BaseException as error:
                    recorder.add(
                        {"kind": "functional", "name": name, "stack": stack, "raised": _describe(error), "tensors": []}
                    )
                    raise
                finally:
                    recorder.in_functional = False
                with recorder.guard():
                    found = [t for t in tree_leaves(result) if isinstance(t, torch.Tensor)][:8]
                    recorder.add(
                        {
                            "kind": "functional",
                            "name": name,
                            "stack": stack,
                            "raised": None,
                            "tensors": [recorder.store(t) for t in found],
                        }
                    )
                return result

            return call

        for name in ("jvp", "vjp", "hvp", "vhp", "hessian", "jacobian"):
            self.patch(functional, name, probe(name, getattr(functional, name)))

    # -- compiled callables -------------------------------------------------------------------
    def tangents(self, values):
        from torch.utils._pytree import tree_leaves

        return [self.original_unpack(t).tangent for t in tree_leaves(values) if isinstance(t, self.torch.Tensor)]

    def observe(self, handle, call, args, kwargs):
        """One call of compiled callable ``handle``: which call site reached it, that it is running (for
        the matching config), the eager differential's region wrapper, and its dual-tensor record."""
        if self.torch.compiler.is_compiling() or self.busy:
            return call(*args, **kwargs)
        self.note_handle_call(handle)
        region = self.regions.get(handle)
        if region is not None:
            call = region(handle, call)
        self.running.append(handle)
        try:
            return self.observe_dual(call, args, kwargs)
        finally:
            self.running.pop()

    def observe_dual(self, call, args, kwargs):
        """The record of a call that receives dual tensors: its outputs' tangents, or its exception
        (even one the user's code catches). CAL001's evidence, attributed by the caller's stack."""
        import torch.autograd.forward_ad as fwAD

        if fwAD._current_level < 0:
            return call(*args, **kwargs)
        try:
            dual_input = any(t is not None for t in self.tangents((args, kwargs)))
        except Exception:
            dual_input = False
        stack = self.user_stack()
        if not dual_input or not self.wanted(stack):
            return call(*args, **kwargs)
        try:
            result = call(*args, **kwargs)
        except BaseException as error:
            with self.guard():
                self.add({"kind": "compiled-call", "stack": stack, "raised": _describe(error), "tangents": []})
            raise
        with self.guard():
            found = self.tangents(result)
            self.add(
                {
                    "kind": "compiled-call",
                    "stack": stack,
                    "raised": None,
                    "tangents": [None if t is None else self.store(t) for t in found[:8]],
                }
            )
        return result

    def observed(self, result, original):
        """The user's handle on a compile result: a wrapper that observes each call (modules: the
        ``OptimizedModule`` itself, registered here and observed by its patched ``__call__``).

        In the eager run (dynamo disabled, so the compilers return their argument) a module is wrapped in
        an ``OptimizedModule`` that runs eagerly, so both runs see the same objects and call sites.
        """
        import functools

        from torch._dynamo import eval_frame

        if isinstance(original, self.torch.nn.Module) and result is original:
            result = eval_frame.OptimizedModule(original, eval_frame.DisableContext())
        if isinstance(result, eval_frame.OptimizedModule):
            self.module_handles[id(result)] = (self.new_handle(), result)
            return result
        if not callable(result):
            return result
        handle = self.new_handle()
        recorder = self

        @functools.wraps(result)
        def compiled_call(*args, **kwargs):
            return recorder.observe(handle, result, args, kwargs)

        return compiled_call

    def from_torch(self, caller):
        """Whether the compile call made from frame ``caller`` is torch's own (or made by the compile call
        being observed) rather than the user's; ``nn.Module.compile()`` is the user's call made through torch."""
        code = caller.f_code
        filename = self.real_path(code.co_filename)
        in_place = code.co_name == "compile" and filename.endswith(os.path.join("nn", "modules", "module.py"))
        return self.compiling or (filename.startswith(self.torch_dir) and not in_place)

    def install_compile_probes(self):
        """``torch.compile``, ``torch._dynamo.optimize`` and ``OptimizedModule.__call__``: every compile
        result the user's code makes gets a handle (creation order, the same in every run of a
        deterministic entry point), and each call of it is observed."""
        import functools

        from torch._dynamo import eval_frame

        torch = self.torch
        recorder = self
        original_compile = torch.compile

        @functools.wraps(original_compile)
        def compile(model=None, **kwargs):
            if model is None:
                return lambda target: compile(target, **kwargs)
            # Frame 1 is the caller of this wrapper: who asked for the compile decides whether it is observed.
            if recorder.from_torch(sys._getframe(1)):
                return original_compile(model, **kwargs)
            recorder.compiling = True
            try:
                result = original_compile(model, **kwargs)
            finally:
                recorder.compiling = False
            return result if kwargs.get("disable") else recorder.observed(result, model)

        class ObservedDecorator:
            def __init__(self, context):
                self.context = context

            def __call__(self, fn):
                return recorder.observed(self.context(fn), fn)

        original_optimize = torch._dynamo.optimize

        @functools.wraps(original_optimize)
        def optimize(*args, **kwargs):
            context = original_optimize(*args, **kwargs)
            # Frame 1 is the caller of this wrapper, as in ``compile`` above.
            return (
                context
                if recorder.from_torch(sys._getframe(1)) or kwargs.get("disable")
                else ObservedDecorator(context)
            )

        original_module_call = eval_frame.OptimizedModule.__call__

        def module_call(self, *args, **kwargs):
            handle = recorder.module_handles.get(id(self), (None,))[0]
            return recorder.observe(handle, lambda *a, **k: original_module_call(self, *a, **k), args, kwargs)

        self.patch(torch, "compile", compile)
        self.patch(torch._dynamo, "optimize", optimize)
        self.patch(eval_frame.OptimizedModule, "__call__", module_call)

    # -- reachability ----------------------------------------------------------------------
    def start_trace(self):
        import threading

        watched = self.watched
        executed = self.executed = {path: set() for path in watched}
        cache = {}

        def global_trace(frame, event, arg):
            filename = frame.f_code.co_filename
            real = cache.get(filename)
            if real is None:
                real = cache[filename] = origin(filename)
            if real not in watched:
                return None
            target = executed[real]
            target.add(frame.f_lineno)

            def tracer(frame, event, arg):
                if event == "line":
                    target.add(frame.f_lineno)
                return tracer

            return tracer

        self.tracers = (sys.gettrace(), threading.gettrace())
        sys.settrace(global_trace)
        threading.settrace(global_trace)

    def stop_trace(self):
        """Put back the trace functions :meth:`start_trace` replaced, in this thread and for new threads."""
        import threading

        if self.tracers is None:
            return
        previous, previous_threads = self.tracers
        self.tracers = None
        sys.settrace(previous)
        threading.settrace(previous_threads)


def run_mode(spec):
    out = spec["out"]
    script_dir = os.path.dirname(os.path.realpath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != script_dir]
    for root in reversed(spec["roots"]):
        sys.path.insert(0, root)
    result = {"status": "ok", "exception": None, "records": [], "executed": {}, "forced_hits": [], "assumed_hits": []}
    try:
        import torch
    except Exception as error:
        result["status"] = "no-torch"
        result["exception"] = {"type": type(error).__name__, "message": str(error), "frames": []}
        _write(out, result)
        return
    result["torch"] = torch.__version__
    device = spec["device"]
    if device == "cuda":
        try:
            result["gpu"] = torch.cuda.get_device_name(0)
            torch.set_default_device("cuda")
        except Exception as error:
            result["status"] = "no-device"
            result["exception"] = {"type": type(error).__name__, "message": str(error)[:300], "frames": []}
            _write(out, result)
            return
    if not spec["compiled"]:
        torch._dynamo.config.disable = True
    import random

    random.seed(0)
    torch.manual_seed(0)
    try:
        import numpy

        numpy.random.seed(0)
    except Exception:
        pass
    recorder = Recorder(torch, out, spec.get("watch", []), spec.get("focus", []))
    recorder.install()
    if spec.get("force"):
        cal002.force_config(torch, spec["force"], recorder)
    if spec.get("assume"):
        cal002.assume_backward_autocast(torch, spec["assume"], recorder)
    entry = spec["entry"]
    if spec.get("watch"):
        recorder.start_trace()
    try:
        if entry["kind"] == "main":
            import runpy

            if entry.get("module"):
                runpy.run_module(entry["module"], run_name="__main__", alter_sys=True)
            else:
                runpy.run_path(entry["path"], run_name="__main__")
        elif entry["kind"] == "path-function":
            import importlib.util

            module_spec = importlib.util.spec_from_file_location("_confirm_entry", entry["path"])
            module = importlib.util.module_from_spec(module_spec)
            sys.modules["_confirm_entry"] = module
            module_spec.loader.exec_module(module)
            _call(module, entry["function"])
        else:
            import importlib

            module = importlib.import_module(entry["module"])
            _call(module, entry["function"])
    except SystemExit as stop:
        if stop.code not in (None, 0):
            result["status"] = "exception"
            result["exception"] = _describe(stop)
    except BaseException as error:
        result["status"] = "exception"
        result["exception"] = _describe(error)
    finally:
        recorder.stop_trace()
        recorder.uninstall()
    result["records"] = recorder.records
    result["executed"] = {path: sorted(lines) for path, lines in recorder.executed.items()}
    result["forced_hits"] = recorder.forced_hits
    result["assumed_hits"] = recorder.assumed_hits
    result["handle_calls"] = [[handle, list(map(list, stack))] for handle, stack in sorted(recorder.handle_calls)]
    recorder.blob.close()
    _write(out, result)


def _call(module, dotted):
    """Call ``function`` or ``Class.method`` (the class built with no arguments, unittest style if a TestCase)."""
    if "." not in dotted:
        return getattr(module, dotted)()
    class_name, method = dotted.split(".", 1)
    cls = getattr(module, class_name)
    instance = cls(method) if _is_testcase(cls) else cls()
    setup, teardown = getattr(instance, "setUp", None), getattr(instance, "tearDown", None)
    if callable(setup):
        setup()
    try:
        return getattr(instance, method)()
    finally:
        if callable(teardown):
            teardown()


def _is_testcase(cls):
    import unittest

    return issubclass(cls, unittest.TestCase)


def _describe(error):
    frames = [[origin(f.filename), f.lineno] for f in traceback.extract_tb(error.__traceback__)]
    message = str(error).strip().splitlines()
    return {"type": type(error).__name__, "message": message[0][:300] if message else "", "frames": frames[-60:]}


def main():
    process.become_subreaper()
    with open(sys.argv[1], encoding="utf-8") as handle:
        spec = json.load(handle)
    ORIGINS[:] = [(copy, original) for copy, original in spec.get("origins", [])]
    if spec["mode"] == "env":
        env_mode(spec)
    else:
        run_mode(spec)
    sys.stdout.flush()
    sys.stderr.flush()
    process.end_descendants()


if __name__ == "__main__":
    main()
