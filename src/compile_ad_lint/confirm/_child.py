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
to tell whether the entry reached the site.

Processes: on Linux this process is a child subreaper, so whatever the user's code starts stays in
its tree even after its parent exits (daemons that called ``setsid`` included); before exiting it
kills what is left of that tree, also processes that dropped the runner's environment marker.
"""

import json
import os
import signal
import sys
import traceback

MAX_ELEMENTS = 1 << 20  # per recorded tensor; larger tensors are subsampled with a fixed stride
MAX_RECORDS = 2000
PR_SET_CHILD_SUBREAPER = 36
ORIGINS = []  # (folder of the run's copy, original folder), resolved: set from the spec


def origin(filename):
    """The real path of ``filename`` as the linter knows it: inside the run's copy, the original's."""
    real = os.path.realpath(filename)
    for copy, original in ORIGINS:
        if real == copy or real.startswith(copy + os.sep):
            return original + real[len(copy):]
    return real


def _write(out, result):
    with open(os.path.join(out, "result.json"), "w", encoding="utf-8") as handle:
        json.dump(result, handle)


def env_mode(spec):
    result = {"torch": None, "cuda": False, "gpus": []}
    try:
        import torch
    except Exception as error:  # noqa: BLE001
        result["error"] = f"{type(error).__name__}: {error}"
        _write(spec["out"], result)
        return
    result["torch"] = torch.__version__
    try:
        result["cuda"] = bool(torch.cuda.is_available())
        if result["cuda"]:
            result["gpus"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    except Exception as error:  # noqa: BLE001
        result["cuda_error"] = f"{type(error).__name__}: {error}"
    _write(spec["out"], result)


class Recorder:
    def __init__(self, torch, out, watched, focus):
        self.torch = torch
        self.records = []
        self.blob = open(os.path.join(out, "tensors.bin"), "wb")
        self.offset = 0
        self.busy = False
        self.watched = {os.path.realpath(p) for p in watched}
        self.focus = {os.path.realpath(p) for p in focus}
        self.torch_dir = os.path.dirname(os.path.realpath(torch.__file__))
        self.here = os.path.realpath(__file__)
        self.real = {}
        self.handles = 0
        self.compiling = False
        self.module_handles = {}  # id(OptimizedModule) -> (handle, module kept alive)
        self.forced_hits = []
        self.running = []  # handles of the compiled callables executing now, innermost last
        self.handle_calls = set()  # (handle, caller frames): which call sites reach which compiled callable
        self.in_functional = False  # inside a recorded torch.autograd.functional call

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
            self.handle_calls.add((handle, tuple(tuple(frame) for frame in self.user_stack(3)[:8])))

    # -- where a call came from -------------------------------------------------------------
    def user_stack(self, depth=2):
        frames = []
        frame = sys._getframe(depth)
        while frame is not None and len(frames) < 40:
            filename = self.real_path(frame.f_code.co_filename)
            if not filename.startswith(self.torch_dir) and filename != self.here and not filename.startswith("<"):
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
        entry = {"offset": self.offset, "count": len(data), "numel": numel, "dtype": str(tensor.dtype).replace("torch.", ""), "shape": list(tensor.shape)}
        self.offset += len(data) * 8
        return entry

    def add(self, record):
        if len(self.records) < MAX_RECORDS:
            self.records.append(record)

    def wanted(self, stack):
        """Only events called from the files with findings are recorded (and only while there is room)."""
        return len(self.records) < MAX_RECORDS and any(frame[0] in self.focus for frame in stack)

    # -- hooks ------------------------------------------------------------------------------
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
                try:
                    parameter._cal_serial = next(serials)
                except Exception:  # noqa: BLE001 - a tensor subclass that refuses attributes keeps value order
                    pass
            return parameter

        torch.nn.Parameter.__new__ = staticmethod(parameter_new)

    def record_grads(self, kind, grads, stack, leaves=(), create_graph=False):
        """``keys``: each leaf's parameter serial (None for other tensors), so runs pair leaves (CAL005)."""
        if len(self.records) < MAX_RECORDS:
            keys = [getattr(leaf, "_cal_serial", None) for leaf in leaves]
            self.add(
                {
                    "kind": kind,
                    "stack": stack,
                    "tensors": [None if grad is None else self.store(grad) for grad in grads],
                    "keys": keys,
                    "create_graph": bool(create_graph),
                }
            )

    def record_error(self, error, stack, create_graph=False):
        """A backward or ``autograd.grad`` that raised (the user's code may catch it): CAL004's evidence."""
        try:
            self.add({"kind": "backward-error", "stack": stack, "raised": _describe(error), "create_graph": bool(create_graph)})
        except Exception:  # noqa: BLE001 - instrumentation never breaks the user's run
            pass

    def install(self):
        torch = self.torch
        recorder = self
        import torch.autograd.forward_ad as fwAD

        original_unpack = fwAD.unpack_dual

        def unpack_dual(tensor, *, level=None):
            result = original_unpack(tensor, level=level)
            if torch.compiler.is_compiling() or recorder.busy:
                return result
            recorder.busy = True
            try:
                stack = recorder.user_stack()
                if recorder.wanted(stack):
                    tangent = result.tangent
                    recorder.add({"kind": "tangent", "stack": stack, "tangent": None if tangent is None else recorder.store(tangent)})
            except Exception:  # noqa: BLE001 - instrumentation never breaks the user's run
                pass
            finally:
                recorder.busy = False
            return result

        unpack_dual.__wrapped__ = original_unpack
        fwAD.unpack_dual = unpack_dual

        original_backward = torch.autograd.backward

        def run_backward(kind, roots, inputs, call, create_graph=False):
            """``call(inputs)`` runs the user's backward; gradients it adds to the leaves are recorded."""
            if torch.compiler.is_compiling() or recorder.busy:
                return call(inputs)
            if inputs is not None and not isinstance(inputs, torch.Tensor):
                inputs = list(inputs)  # a generator can be read once: by us, then by torch
            stack = recorder.user_stack(3)
            if not recorder.wanted(stack):
                return call(inputs)
            recorder.busy = True
            try:
                try:
                    if inputs is not None:
                        leaves = [inputs] if isinstance(inputs, torch.Tensor) else inputs
                    else:
                        leaves = recorder.leaves(roots)
                        leaves.sort(key=recorder.leaf_key)
                    before = [None if leaf.grad is None else leaf.grad.detach().clone() for leaf in leaves]
                except Exception:  # noqa: BLE001
                    leaves, before = [], []
                try:
                    result = call(inputs)
                except BaseException as error:
                    recorder.record_error(error, stack, create_graph)
                    raise
                try:
                    grads = []
                    for leaf, old in zip(leaves, before):
                        grad = leaf.grad
                        grads.append(None if grad is None else (grad.detach() if old is None else grad.detach() - old))
                    recorder.record_grads(kind, grads, stack, leaves, create_graph)
                except Exception:  # noqa: BLE001
                    pass
                return result
            finally:
                recorder.busy = False

        def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
            roots = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors)
            return run_backward(
                "backward",
                roots,
                inputs,
                lambda inputs: original_backward(tensors, grad_tensors, retain_graph, create_graph, grad_variables, inputs=inputs),
                create_graph,
            )

        torch.autograd.backward = backward

        original_tensor_backward = torch.Tensor.backward

        def tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
            return run_backward(
                "backward",
                [self],
                inputs,
                lambda inputs: original_tensor_backward(self, gradient, retain_graph, create_graph, inputs=inputs),
                create_graph,
            )

        torch.Tensor.backward = tensor_backward

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
            recorder.busy = True
            try:
                stack = recorder.user_stack()
                if recorder.wanted(stack):
                    leaves = [inputs] if isinstance(inputs, torch.Tensor) else inputs
                    recorder.record_grads("grad", list(result), stack, leaves, create_graph)
            except Exception:  # noqa: BLE001
                pass
            finally:
                recorder.busy = False
            return result

        torch.autograd.grad = grad
        self.install_functional_probes()
        self.install_compiled_call_probes(original_unpack)
        self.number_parameters()

    def install_functional_probes(self):
        """Record ``torch.autograd.functional`` calls (result tensors or exception): CAL004's evidence
        for ``hessian``'s all-zero result, and where ``hvp``/``jvp`` raise."""
        import functools

        import torch.autograd.functional as functional
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
                    recorder.add({"kind": "functional", "name": name, "stack": stack, "raised": _describe(error), "tensors": []})
                    raise
                finally:
                    recorder.in_functional = False
                recorder.busy = True
                try:
                    found = [t for t in tree_leaves(result) if isinstance(t, torch.Tensor)][:8]
                    recorder.add({"kind": "functional", "name": name, "stack": stack, "raised": None, "tensors": [recorder.store(t) for t in found]})
                except Exception:  # noqa: BLE001 - instrumentation never breaks the user's run
                    pass
                finally:
                    recorder.busy = False
                return result

            return call

        for name in ("jvp", "vjp", "hvp", "vhp", "hessian", "jacobian"):
            setattr(functional, name, probe(name, getattr(functional, name)))

    def install_compiled_call_probes(self, original_unpack):
        """Record each call of a ``torch.compile`` / ``torch._dynamo.optimize`` result that receives dual tensors.

        The record is the flagged call's own evidence for CAL001: tangents of the outputs (or the exception),
        attributed by the caller's stack. In the eager run (dynamo disabled, so the compilers return their
        argument) modules are wrapped in an ``OptimizedModule`` that runs eagerly, so both runs see the same
        objects and call sites.
        """
        import functools

        import torch.autograd.forward_ad as fwAD
        from torch._dynamo import eval_frame
        from torch.utils._pytree import tree_leaves

        torch = self.torch
        recorder = self

        def tangents(values):
            return [original_unpack(t).tangent for t in tree_leaves(values) if isinstance(t, torch.Tensor)]

        def observe(handle, call, args, kwargs):
            if torch.compiler.is_compiling() or recorder.busy:
                return call(*args, **kwargs)
            recorder.note_handle_call(handle)
            recorder.running.append(handle)
            try:
                return observe_dual(call, args, kwargs)
            finally:
                recorder.running.pop()

        def observe_dual(call, args, kwargs):
            if fwAD._current_level < 0:
                return call(*args, **kwargs)
            try:
                dual_input = any(t is not None for t in tangents((args, kwargs)))
            except Exception:  # noqa: BLE001
                dual_input = False
            stack = recorder.user_stack(1)
            if not dual_input or not recorder.wanted(stack):
                return call(*args, **kwargs)
            try:
                result = call(*args, **kwargs)
            except BaseException as error:
                try:
                    recorder.add({"kind": "compiled-call", "stack": stack, "raised": _describe(error), "tangents": []})
                except Exception:  # noqa: BLE001
                    pass
                raise
            recorder.busy = True
            try:
                found = tangents(result)
                recorder.add(
                    {
                        "kind": "compiled-call",
                        "stack": stack,
                        "raised": None,
                        "tangents": [None if t is None else recorder.store(t) for t in found[:8]],
                    }
                )
            except Exception:  # noqa: BLE001 - instrumentation never breaks the user's run
                pass
            finally:
                recorder.busy = False
            return result

        def observed(result, original):
            if isinstance(original, torch.nn.Module) and result is original:
                result = eval_frame.OptimizedModule(original, eval_frame.DisableContext())
            if isinstance(result, eval_frame.OptimizedModule):
                recorder.module_handles[id(result)] = (recorder.new_handle(), result)
                return result
            if not callable(result):
                return result
            handle = recorder.new_handle()

            @functools.wraps(result)
            def compiled_call(*args, **kwargs):
                return observe(handle, result, args, kwargs)

            return compiled_call

        def from_torch():
            """A compile call made by torch itself (or by the compile call being observed) is not the user's;
            ``nn.Module.compile()`` is the user's call made through torch."""
            code = sys._getframe(2).f_code
            caller = recorder.real_path(code.co_filename)
            in_place = code.co_name == "compile" and caller.endswith(os.path.join("nn", "modules", "module.py"))
            return recorder.compiling or (caller.startswith(recorder.torch_dir) and not in_place)

        original_compile = torch.compile

        @functools.wraps(original_compile)
        def compile(model=None, **kwargs):
            if model is None:
                return lambda target: compile(target, **kwargs)
            if from_torch():
                return original_compile(model, **kwargs)
            recorder.compiling = True
            try:
                result = original_compile(model, **kwargs)
            finally:
                recorder.compiling = False
            return result if kwargs.get("disable") else observed(result, model)

        torch.compile = compile

        class ObservedDecorator:
            def __init__(self, context):
                self.context = context

            def __call__(self, fn):
                return observed(self.context(fn), fn)

        original_optimize = torch._dynamo.optimize

        @functools.wraps(original_optimize)
        def optimize(*args, **kwargs):
            context = original_optimize(*args, **kwargs)
            return context if from_torch() or kwargs.get("disable") else ObservedDecorator(context)

        torch._dynamo.optimize = optimize

        original_module_call = eval_frame.OptimizedModule.__call__

        def module_call(self, *args, **kwargs):
            handle = recorder.module_handles.get(id(self), (None,))[0]
            return observe(handle, lambda *a, **k: original_module_call(self, *a, **k), args, kwargs)

        eval_frame.OptimizedModule.__call__ = module_call

    # -- reachability ----------------------------------------------------------------------
    def start_trace(self):
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

        import threading

        sys.settrace(global_trace)
        threading.settrace(global_trace)

    def stop_trace(self):
        sys.settrace(None)


def _force_config(torch, forced, recorder):
    """Make reads of ``backward_pass_autocast`` return the matching value while a flagged compiled callable runs.

    ``forced`` maps compiled-callable handles (creation order of ``torch.compile`` results, the same in
    every run of a deterministic entry point) to values. Keying on the callable rather than on the call
    site also covers a region traced at an earlier call: its compiled backward is reused at the flagged one.
    """
    import torch._functorch.config as functorch_config

    device = torch.get_default_device().type

    def decode_entry(key, value):
        if key == "dtype" and isinstance(value, str):
            return getattr(torch, value.replace("torch.", ""))
        if key == "device_type" and value == "?":  # not known statically: the device this run checks
            return device
        return value

    def decode(value):
        if isinstance(value, list):
            return [{k: decode_entry(k, v) for k, v in item.items()} for item in value]
        return value

    rules = {int(handle): decode(value) for handle, value in forced}
    cls = type(functorch_config)
    original = cls.__getattr__
    hits = recorder.forced_hits = []

    def __getattr__(self, name):
        if name == "backward_pass_autocast" and self is functorch_config:
            written = original(self, name)
            for handle in reversed(recorder.running):
                if handle in rules:
                    value = rules[handle]
                    hits.append({"handle": handle, "written": repr(written), "forced": repr(value)})
                    return value
            return written
        return original(self, name)

    cls.__getattr__ = __getattr__


def run_mode(spec):
    out = spec["out"]
    script_dir = os.path.dirname(os.path.realpath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != script_dir]
    for root in reversed(spec["roots"]):
        sys.path.insert(0, root)
    result = {"status": "ok", "exception": None, "records": [], "executed": {}, "forced_hits": []}
    try:
        import torch
    except Exception as error:  # noqa: BLE001
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
        except Exception as error:  # noqa: BLE001 - a CUDA that cannot start is a result, not a crash
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
    except Exception:  # noqa: BLE001
        pass
    recorder = Recorder(torch, out, spec.get("watch", []), spec.get("focus", []))
    recorder.install()
    if spec.get("force"):
        _force_config(torch, spec["force"], recorder)
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
    except BaseException as error:  # noqa: BLE001 - the user's failure is data
        result["status"] = "exception"
        result["exception"] = _describe(error)
    finally:
        recorder.stop_trace()
    result["records"] = recorder.records
    result["executed"] = {path: sorted(lines) for path, lines in getattr(recorder, "executed", {}).items()}
    result["forced_hits"] = recorder.forced_hits
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


def become_subreaper():
    """Adopt the orphans of the user's code (Linux ``prctl``), so that they stay findable as descendants."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except Exception:  # noqa: BLE001 - without it the runner's environment-marker scan still applies
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


def main():
    become_subreaper()
    with open(sys.argv[1], encoding="utf-8") as handle:
        spec = json.load(handle)
    ORIGINS[:] = [tuple(pair) for pair in spec.get("origins", [])]
    if spec["mode"] == "env":
        env_mode(spec)
    else:
        run_mode(spec)
    sys.stdout.flush()
    sys.stderr.flush()
    end_descendants()


if __name__ == "__main__":
    main()
