"""The engine's values and what its walks cost: collections that stay shallow, values that are one
object while alive, orders and texts that stay stable and short, lookups made once. These tests
know the engine's internals (``linking/``): they follow its modules when those move, where the
behaviour tests (``test_reach.py`` and the rest, through ``run_case``) do not.
"""

from __future__ import annotations

import copy
import gc
import weakref
from collections import Counter
from pathlib import Path

from compile_ad_lint import Config, Location
from compile_ad_lint.api import Analyzer
from compile_ad_lint.core.locations import StatementSite
from compile_ad_lint.knowledge.calls import MATCHED_NAMES
from compile_ad_lint.linking.arguments import argument_data
from compile_ad_lint.linking.contexts import DEFAULT_CONFIG, NO_AUTOCAST
from compile_ad_lint.linking.interpreter import Interpreter
from compile_ad_lint.linking.reach import Reach
from compile_ad_lint.linking.values import (
    MAX_NESTING,
    ClassVal,
    Collection,
    Compiled,
    CompiledOutput,
    ConstVal,
    Data,
    External,
    ExternalNames,
    FunctionVal,
    Instance,
    Wrapper,
    compiled_output,
    derived,
    held_modules,
    in_stable_order,
    normalize,
    stable_text,
)
from compile_ad_lint.rules import Case
from compile_ad_lint.testing import run_case, write_files

from .test_reach import FORWARD_AD, STILL_REPORTED, WRAPPED_STATE, _check


def _depth(value: object) -> int:
    """How many collections deep ``value`` is, counted here (not from the values' own bookkeeping)."""
    if not isinstance(value, Collection):
        return 0
    return 1 + max((_depth(v) for part in (value.items, *value.positions) for v in part), default=0)


def _inside_at_any_depth(value: object) -> set:
    if not isinstance(value, Collection):
        return {value}
    return set().union(*(_inside_at_any_depth(v) for part in (value.items, *value.positions) for v in part))


def _per_outermost(monkeypatch, cls: type, outer: str, inner: str, counted) -> list[int]:
    """For each outermost call of ``cls.outer``, how many calls of ``cls.inner`` it made whose
    arguments ``counted`` accepts."""
    counts: list[int] = []
    depth = [0]
    original_outer, original_inner = getattr(cls, outer), getattr(cls, inner)

    def counting_outer(self, *arguments):
        if depth[0] == 0:
            counts.append(0)
        depth[0] += 1
        try:
            return original_outer(self, *arguments)
        finally:
            depth[0] -= 1

    def counting_inner(self, *arguments):
        if depth[0] and counted(*arguments):
            counts[-1] += 1
        return original_inner(self, *arguments)

    monkeypatch.setattr(cls, outer, counting_outer)
    monkeypatch.setattr(cls, inner, counting_inner)
    return counts


def test_collections_nest_at_most_the_limit_and_keep_what_they_hold():
    first, second = Compiled(None, "inductor", Location.point("a.py", 1), "torch.compile"), ConstVal("x")
    shallow = Collection(frozenset([Collection(frozenset([first]))]))
    assert _depth(shallow) == 2 and shallow == Collection(frozenset([Collection(frozenset([first]))]))
    value = Collection(frozenset([first]))
    for level in range(12):
        value = Collection(frozenset([value, second] if level % 2 else [value]), positions=(frozenset([value]),))
        assert _depth(value) <= MAX_NESTING
        assert {first, second} <= _inside_at_any_depth(value) or level == 0
    # Going down any number of levels still reaches what was put in at the bottom.
    reached, level_values = set(), frozenset([value])
    for _ in range(40):
        level_values = frozenset().union(*(v.elements() for v in level_values if isinstance(v, Collection)))
        reached |= level_values
    assert first in reached


def test_an_attribute_wrapped_again_by_each_construction_stays_shallow(tmp_path, monkeypatch):
    """diffusers' quantizers: ``self.skip = config.skip or []`` then ``self.skip = [self.skip]``.
    Instance attributes accumulate what every construction stored, and each configuration walks the
    constructor again, wrapping all of it once more: collections 31 deep, 23 GB before the run died."""
    configs = [f"class Config{i}:\n    skip = ['layer{i}']\n\n\n" for i in range(6)]
    code = (
        FORWARD_AD + "class Quantizer:\n    def __init__(self, config):\n        self.skip = config.skip or []\n"
        "        if not isinstance(self.skip, list):\n            self.skip = [self.skip]\n\n\n"
        + "".join(configs)
        + "def build(config):\n    return Quantizer(config)\n\n\n"
        + "quantizers = ["
        + ", ".join(f"build(Config{i}())" for i in range(6))
        + "]\n"
        + STILL_REPORTED
    )
    stored: list[frozenset] = []
    original = Interpreter.store_attribute

    def recording(self, cls, name, values):
        stored.append(values)
        return original(self, cls, name, values)

    monkeypatch.setattr(Interpreter, "store_attribute", recording)
    expected, reported = run_case(Case(code), tmp_path)
    assert reported == expected
    assert stored and max(_depth(v) for values in stored for v in values) <= MAX_NESTING


def test_a_compiled_module_nested_deeper_than_the_limit_is_still_reached(tmp_path):
    depth = MAX_NESTING + 2
    loops = "".join("    " * (i + 1) + f"for v{i} in {f'v{i - 1}' if i else 'nested'}:\n" for i in range(depth))
    code = (
        "import torch\nfrom torch.autograd import forward_ad as fwAD\n\n"
        "model = torch.compile(torch.nn.Linear(4, 4))\n"
        f"nested = {'[' * depth}model{']' * depth}\n"
        "with fwAD.dual_level():\n    x = fwAD.make_dual(torch.randn(4), torch.randn(4))\n"
        + loops
        + "    " * (depth + 1)
        + f"v{depth - 1}(x)  # expect: CAL001\n"
    )
    _check(Case(code), tmp_path)


def test_a_wrapping_applied_again_inside_itself_adds_nothing():
    """trl's trainers froze the FSDP module ``prepare`` made of the frozen model, once per
    configuration walked: FSDP around a frozen wrapper around FSDP, 32 deep and growing."""
    model = Compiled(None, "inductor", Location.point("a.py", 1), "torch.compile")
    fsdp_site, freeze_site = Location.point("utils.py", 296), Location.point("trainer.py", 547)
    value: object = model
    for _ in range(20):
        value = Wrapper(frozenset([value]), "FullyShardedDataParallel", fsdp_site)
        value = Wrapper(frozenset([value]), "requires_grad_(False)", freeze_site, frozen=True)
    assert value == Wrapper(
        frozenset([Wrapper(frozenset([model]), "FullyShardedDataParallel", fsdp_site)]),
        "requires_grad_(False)",
        freeze_site,
        frozen=True,
    )


def test_attribute_chains_of_external_values_stay_short(tmp_path, monkeypatch):
    """composer's trainer state stored attributes of what its attributes held; each walk run again
    named one more segment (``GradScaler._computed.batch_size.epoch.value``...): 10,945 names 19
    segments deep here before."""
    code = (
        FORWARD_AD + "class Clock:\n    def __init__(self):\n        self.now = torch.__version__\n\n"
        "    def tick(self):\n        self.now = self.now.batch\n\n"
        "    def tock(self):\n        self.now = self.now.epoch\n\n\n"
        "clock = Clock()\n" + "clock.tick()\nclock.tock()\n" * 8 + STILL_REPORTED
    )
    names: set[str] = set()
    original = Interpreter.store_attribute

    def recording(self, cls, name, values):
        names.update(v.name for v in values if isinstance(v, External))
        return original(self, cls, name, values)

    monkeypatch.setattr(Interpreter, "store_attribute", recording)
    _check(Case(code), tmp_path)
    assert names == {"torch.__version__", "torch.__version__.batch", "torch.__version__.epoch"}


def test_external_names_stay_whole_while_a_table_may_match_them():
    names = ExternalNames(MATCHED_NAMES | {"mylib.helpers.compile_model"})
    chain = ["torch", "nn", "parallel", "distributed", "DistributedDataParallel"]
    name = chain[0]
    for part in chain[1:]:
        name = names.attribute(name, part)
    assert name == "torch.nn.parallel.distributed.DistributedDataParallel"
    assert names.attribute(names.attribute("mylib", "helpers"), "compile_model") == "mylib.helpers.compile_model"
    # Past the first segment no table knows, only the last one is kept: root, start and last stay.
    deep = names.attribute(names.attribute(names.attribute("torch", "nn"), "LayerNorm"), "weight")
    assert deep == "torch.nn.LayerNorm.weight"
    assert names.attribute(deep, "data") == "torch.nn.LayerNorm.weight.data"
    assert names.attribute("torch.nn.LayerNorm.weight.data", "bfloat16") == "torch.nn.LayerNorm.weight.bfloat16"
    assert names.attribute("numpy", "random") == "numpy.random"
    assert names.attribute("numpy.random", "Generator") == "numpy.Generator"


def test_equal_compiled_outputs_are_one_object_while_alive():
    """Walks of other analyses make equal outputs; kept as one object they compare by identity
    (data's origins are compared and merged all the time); one nothing holds any more is dropped."""
    site, other = Location.point("a.py", 3), Location.point("a.py", 4)
    compiled = Compiled(None, "inductor", site, "torch.compile")
    first = compiled_output(site, compiled, NO_AUTOCAST, DEFAULT_CONFIG, StatementSite((3, 3)))
    again = compiled_output(Location.point("a.py", 3), compiled, NO_AUTOCAST, DEFAULT_CONFIG, StatementSite((3, 3)))
    assert again is first
    elsewhere = compiled_output(other, compiled, NO_AUTOCAST, DEFAULT_CONFIG, StatementSite((4, 4), (1, 5)))
    assert elsewhere is not first and elsewhere != first
    assert elsewhere == CompiledOutput(other, compiled, NO_AUTOCAST, DEFAULT_CONFIG, StatementSite((4, 4), (1, 5)))
    dropped = weakref.ref(elsewhere)
    del elsewhere
    gc.collect()
    assert dropped() is None  # the table does not keep it alive (a long editor session)


def test_a_kept_hash_stays_out_of_pickles():
    """Worker processes send values back pickled, and string hashes differ between processes: a
    value's kept hash is computed again where it arrives."""
    value = ClassVal(Path("m.py"), "Net")
    hash(value)
    assert "_hash" in value.__dict__
    sent = copy.copy(value)  # the protocol pickling uses (``__getstate__``)
    assert "_hash" not in sent.__dict__
    assert sent == value and hash(sent) == hash(value)


def test_derived_data_is_the_same_through_collections_and_arguments():
    site = Location.point("a.py", 3)
    output = CompiledOutput(site, Compiled(None, "inductor", site, "torch.compile"), None, None, site)
    dual, graded = Data(dual=True), Data(frozenset([output]), requires_grad=True, exact=frozenset([site]))
    nested = Collection(frozenset([Collection(frozenset([dual, ConstVal(1)])), graded]))
    flat = Data(frozenset([output]), True, False, True)
    assert derived([nested]) == derived([dual, graded]) == flat
    assert derived([nested]) is derived([nested])  # kept on the collection
    assert derived([graded]) == Data(frozenset([output]), requires_grad=True)  # no longer the exact output
    many = frozenset([dual, nested, *(ConstVal(i) for i in range(10))])
    assert argument_data(((None, many), ("weight", frozenset([graded])))) == derived([*many, graded]) == flat
    assert argument_data(()) == derived([]) == Data()
    # Large sets have their data remembered by identity: the same answer, and an equal set built
    # apart is derived afresh (not compared with the remembered one value by value).
    large = frozenset([dual, nested, *(ConstVal(i) for i in range(30))])
    first = argument_data(((None, large),))
    assert first == derived(large) == flat
    assert argument_data(((None, large),)) is first
    rebuilt = frozenset(list(large))
    assert rebuilt is not large and argument_data(((None, rebuilt),)) == first
    assert argument_data(((None, large), ("weight", frozenset([graded])), ("bias", frozenset()))) == flat


def test_the_ordering_text_of_values_that_share_their_parts_stays_short():
    """Values share their parts (a wrapper holds a collection that holds the wrapper's module);
    written out wherever they occur, the texts that order callees doubled with each level: one of
    composer's test files died out of memory (12 GB) building them."""
    site = Location.point("trainer.py", 10)
    value: object = Instance(ClassVal(Path("model.py"), "Net"))
    texts = set()
    for level in range(18):
        value = Wrapper(frozenset([value, Collection(frozenset([value]))]), f"Wrapper{level}", site)
        texts.add(stable_text(value))
    assert len(stable_text(value)) <= 10_000  # 44 MB before
    assert len(texts) == 18  # still one text per value
    rebuilt: object = Instance(ClassVal(Path("model.py"), "Net"))
    for level in range(18):
        rebuilt = Wrapper(frozenset([rebuilt, Collection(frozenset([rebuilt]))]), f"Wrapper{level}", site)
    assert stable_text(rebuilt) == stable_text(value)  # the same text for an equal value built again


def test_an_attribute_through_wrappers_of_wrappers_is_looked_up_once_on_the_model(tmp_path, monkeypatch):
    """Each path through wrappers that hold each other looked the attribute up again: 15 times per
    attribute in composer's tests/models/test_hf_model.py (43 s, now 10 s), 6 here."""
    harvesting = [0]  # the first lookup walks the class's methods, which read ``self.scale`` too
    original_harvest = Interpreter.harvest_instance_attributes

    def harvest(self, klass, instance_cls):
        harvesting[0] += 1
        try:
            return original_harvest(self, klass, instance_cls)
        finally:
            harvesting[0] -= 1

    monkeypatch.setattr(Interpreter, "harvest_instance_attributes", harvest)
    lookups = _per_outermost(
        monkeypatch,
        Interpreter,
        "attribute",
        "attribute_of",
        lambda base, name: name == "scale" and isinstance(base, Instance) and not harvesting[0],
    )
    _check(Case(WRAPPED_STATE), tmp_path)
    assert lookups and max(lookups) == 1


def test_the_children_of_wrappers_of_wrappers_are_read_once_per_module(tmp_path, monkeypatch):
    reads = _per_outermost(monkeypatch, Reach, "submodules", "module_values_of", lambda klass: klass.qualname == "Net")
    _check(Case(WRAPPED_STATE), tmp_path)
    assert reads and max(reads) == 1


def test_what_wrappers_forward_stops_at_what_each_answers_itself():
    site = Location.point("trainer.py", 10)
    model = Instance(ClassVal(Path("model.py"), "Net"))
    ddp = Wrapper(frozenset([model]), "DistributedDataParallel", site)
    frozen = Wrapper(frozenset([ddp, model]), "frozen", site, frozen=True)
    compiled = Compiled(frozen, "inductor", site, "torch.compile")
    outer = Wrapper(frozenset([frozen, ddp, compiled]), "FullyShardedDataParallel", site)
    assert outer.attribute_holders("config") == {model, compiled}  # compiled modules answer themselves
    assert outer.attribute_holders("module") == {outer}  # answered by the wrapper: what it wraps
    assert frozen.attribute_holders("module") == {ddp, model}  # a frozen model's ``module`` is its model's
    assert outer.attribute_holders("forward") == outer.attribute_holders("__call__") == {frozen, model, compiled}
    assert held_modules(outer) == held_modules(compiled) == {model}
    assert held_modules(Compiled(None, "inductor", site, "torch.compile")) == {
        Compiled(None, "inductor", site, "torch.compile")
    }
    assert held_modules(model) == {model}


def test_callees_are_called_in_the_order_of_their_stable_text_small_sets_and_large():
    """A call's callees run in one order in every process; a large set's order is remembered by the
    set's identity, so an equal set built apart is ordered on its own, never given another's order."""
    small = frozenset(ClassVal(Path(f"m{i}.py"), "Model") for i in (3, 1, 2))
    assert list(in_stable_order(small)) == sorted(small, key=stable_text)
    large = frozenset(ClassVal(Path(f"m{i}.py"), "Model") for i in range(40, 0, -1))
    ordered = in_stable_order(large)
    assert list(ordered) == sorted(large, key=stable_text)
    assert in_stable_order(large) is ordered  # remembered
    rebuilt = frozenset(set(large))
    assert rebuilt == large and rebuilt is not large
    assert in_stable_order(rebuilt) is not ordered and list(in_stable_order(rebuilt)) == list(ordered)
    single = frozenset([ClassVal(Path("m.py"), "Model")])
    assert in_stable_order(single) is single


def test_normalize_merges_the_data_into_one_and_keeps_every_other_value_as_it_is():
    site = Location.point("train.py", 3)
    output = CompiledOutput(site, Compiled(None, "inductor", site, "torch.compile"), None, None, site)
    model = Instance(ClassVal(Path("model.py"), "Net"))
    dual, exact = Data(dual=True), Data(origins=frozenset([output]), exact=frozenset([site]))
    others = [External("torch.nn"), model, Collection(frozenset([model]))]
    merged = normalize({*others, dual, exact})
    assert merged == {*others, Data(origins=frozenset([output]), dual=True, exact=frozenset([site]))}
    assert {id(v) for v in merged} >= {id(v) for v in others}  # the same objects, not copies
    assert normalize(frozenset([*others, dual])) == {*others, dual}
    assert normalize([]) == frozenset()


def test_an_attribute_of_an_external_value_is_one_value_however_often_it_is_asked():
    names = ExternalNames(MATCHED_NAMES)
    first = names.attribute_value("torch.nn", "Linear")
    assert first == {External(names.attribute("torch.nn", "Linear"))} == {External("torch.nn.Linear")}
    assert names.attribute_value("torch.nn", "Linear") is first
    assert names.attribute_value("torch.nn", "Conv2d") == {External("torch.nn.Conv2d")}


class _Heap:
    """What ``Reach._kept`` asks of the interpreter: the heap cells' versions and their changes."""

    def __init__(self) -> None:
        self.heap_changes = 0
        self.versions: dict[object, int] = {}
        self.compared = 0
        self.depended: list[object] = []

    def change(self, cell: object) -> None:
        self.versions[cell] = self.versions.get(cell, 0) + 1
        self.heap_changes += 1

    def read(self, cell: object, reads: dict[object, int]) -> None:
        reads.setdefault(cell, self.versions.get(cell, 0))

    def still_valid(self, reads: dict[object, int]) -> bool:
        self.compared += 1
        return all(self.versions.get(cell, 0) == version for cell, version in reads.items())

    def depend_on_reads(self, reads) -> None:
        self.depended.extend(cell for cell, _ in reads)


def test_kept_children_are_compared_only_after_a_cell_changed_and_computed_again_when_one_they_read_did():
    heap = _Heap()
    reach = Reach(heap)  # type: ignore[arg-type]
    store: dict = {}
    computed = []

    def compute(reads):
        computed.append(1)
        heap.read(("modules", "Net"), reads)
        return frozenset([len(computed)])

    assert reach._kept(store, "net", compute)[0] == {1}
    assert reach._kept(store, "net", compute)[0] == {1} and heap.compared == 0  # nothing changed since
    assert heap.depended == [("modules", "Net")]  # the walk in progress depends on what it read
    heap.change(("modules", "Other"))
    assert reach._kept(store, "net", compute)[0] == {1} and heap.compared == 1  # compared: still holds
    assert reach._kept(store, "net", compute)[0] == {1} and heap.compared == 1
    heap.change(("modules", "Net"))
    assert reach._kept(store, "net", compute)[0] == {2}  # what it read changed: computed again

    def compute_while_storing(reads):  # a harvest run by the computation stores what it read
        heap.read(("modules", "Net"), reads)
        heap.change(("modules", "Net"))
        return frozenset(["stale"])

    assert reach._kept(store, "model", compute_while_storing)[0] == {"stale"}
    assert reach._kept(store, "model", compute)[0] == {3}  # the cell changed after it was read


def test_equal_closures_built_by_two_walks_are_one_object(tmp_path, monkeypatch):
    """Closures hold functions with closures of their own; comparing equal ones built apart (a memo
    lookup of a call with a nested function) compared every level once per path: 0.27 s for one
    lookup in Megatron-LM's tests. The enclosing function is walked twice here (outside and inside
    autocast), and its nested function's closure is built once."""
    code = (
        FORWARD_AD + "def make(scale):\n    def inner(y):\n        def innermost(z):\n"
        "            return z * scale\n\n        return innermost(y)\n\n    return inner\n\n\n"
        "plain = make(2.0)\nwith torch.autocast('cpu', dtype=torch.bfloat16):\n    mixed = make(2.0)\n" + STILL_REPORTED
    )
    closures: dict[str, list] = {}
    original = Interpreter.define_function

    def recording(self, statement, frame):
        values = original(self, statement, frame)
        for value in values:
            if isinstance(value, FunctionVal) and value.closure:
                closures.setdefault(value.qualname, []).append(value.closure)
        return values

    monkeypatch.setattr(Interpreter, "define_function", recording)
    _check(Case(code), tmp_path)
    built = closures["make.<locals>.inner"]
    assert len(built) >= 2 and all(closure is built[0] for closure in built)


def _count_module_calls(monkeypatch) -> Counter:
    """Calls of project modules (``Instance`` callees) by class and line, while the test runs."""
    calls: Counter = Counter()
    original = Interpreter.call_one

    def counting(self, callee, args, span, frame, func):
        if isinstance(callee, Instance):
            calls[(callee.cls.qualname, span.line)] += 1
        return original(self, callee, args, span, frame, func)

    monkeypatch.setattr(Interpreter, "call_one", counting)
    return calls


def test_modules_that_share_a_replaced_forward_follow_it_once(tmp_path, monkeypatch):
    """composer: every model class's ``forward`` held the same replacements (wrappers of the trainer
    state's model, which held every test model), so calling one model ran a wrapper that called the
    next model, whose replacement called the next...: every order of the models (95,900 module
    calls for 7 classes before; a test file's check did not finish in 5 minutes)."""
    count = 7
    models = "".join(
        f"class Model{i}(torch.nn.Module):\n    def forward(self, x):\n        return x\n\n\n" for i in range(count)
    )
    pick = "def pick(i):\n" + "".join(f"    if i == {i}:\n        return Model{i}()\n" for i in range(count))
    code = (
        FORWARD_AD
        + models
        + pick
        # An index the analysis cannot know: ``pick`` may return any model (a literal would pick one).
        + "\n\nmodel = pick(torch.randint(7, ()).item())\n"
        "wrapped = torch.nn.parallel.DistributedDataParallel(model)\nmodel.forward = wrapped\n"
        "compiled = torch.compile(torch.nn.Linear(4, 4))\nwith fwAD.dual_level():\n"
        "    x = fwAD.make_dual(torch.randn(4), torch.randn(4))\n    model(x)\n"
        "    compiled(x)  # expect: CAL001\n"
    )
    calls = _count_module_calls(monkeypatch)
    _check(Case(code), tmp_path)
    # Each model is called at the call site, then once more inside the replacement (its own forward).
    assert set(calls.values()) == {2} and len(calls) == count


def test_a_call_reaches_each_callee_once_through_nested_wrappers(tmp_path, monkeypatch):
    """A model that may be wrapped by DDP, then FSDP, then frozen is each of those and the wrappers
    hold each other: calling it reached the module once per path through the wrappers (8 here;
    composer's trainer called one tokenizer 65,000 times from one line)."""
    code = (
        "import sys\n\nimport torch\nfrom torch.autograd import forward_ad as fwAD\n"
        "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"
        "from torch.nn.parallel import DistributedDataParallel as DDP\n\n\n"
        "class Net(torch.nn.Module):\n    def forward(self, x):\n        return x\n\n\n"
        "def prepare(model, ddp, fsdp, frozen):\n    if ddp:\n        model = DDP(model)\n"
        "    if fsdp:\n        model = FSDP(model)\n    if frozen:\n        model = model.requires_grad_(False)\n"
        "    return model\n\n\n"
        "def step(model, x):\n    return model(x)\n\n\n"
        "flag = len(sys.argv) > 1\nmodel = prepare(Net(), flag, flag, flag)\n"
        "compiled = torch.compile(torch.nn.Linear(4, 4))\nwith fwAD.dual_level():\n"
        "    x = fwAD.make_dual(torch.randn(4), torch.randn(4))\n    step(model, x)\n"
        "    compiled(x)  # expect: CAL001\n"
    )
    calls = _count_module_calls(monkeypatch)
    _check(Case(code), tmp_path)
    assert dict(calls) == {("Net", code.splitlines().index("    return model(x)") + 1): 1}


DEVICE_LIST = """\
import torch


def available_devices():
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices.append("cuda")
    return devices


DEVICE = available_devices(){index}


def train(model, x):
    model = torch.compile(model)
    with torch.autocast(DEVICE, dtype=torch.bfloat16):
        loss = model(x).sum()
    loss.backward()  # expect: CAL002
"""


def test_a_string_appended_to_a_list_display_is_one_of_its_elements(tmp_path):
    """pytorch/ao's ``get_available_devices()[-1]``: ``["cpu"]`` with ``"cuda"`` appended on one
    path is "cpu" or "cuda", so no device is named; without the append it is "cpu"."""
    write_files(tmp_path, {"train.py": DEVICE_LIST.format(index="[-1]")})
    (finding,) = Analyzer(Config(), use_cache=False, jobs=1).check([str(tmp_path)]).findings
    assert "autocast on (bfloat16)" in finding.message, finding.message
    write_files(tmp_path, {"train.py": DEVICE_LIST.format(index="[-1]").replace('devices.append("cuda")', "pass")})
    (finding,) = Analyzer(Config(), use_cache=False, jobs=1).check([str(tmp_path)]).findings
    assert "autocast on (cpu, bfloat16)" in finding.message, finding.message


CLASS_AND_STATIC_METHODS = """\
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 2)
        self.fn = torch.compile(self.lin)

    @classmethod
    def from_config(cls, config):
        return cls()

    @staticmethod
    def default_config():
        return {}

    def forward(self, x):
        return self.fn(x)


net = Net()
with torch.autocast("cpu"):
    y = net(torch.randn(2, 2))
y.sum().backward()  # expect: CAL002
"""


def test_the_harvest_of_instance_attributes_walks_no_class_or_static_method(tmp_path, monkeypatch):
    """A class or static method gets no instance, so it stores nothing on ``self``: the harvest
    skips them (peft's ``PeftModel.from_pretrained`` was walked with ``cls`` an instance, for six
    model classes, in every test file that builds one)."""
    harvested: list[str] = []
    walk = Interpreter.walk_function

    def recorded(self, function, summary, bound, frame):
        if frame.ctx.harvest:
            harvested.append(function.qualname)
        return walk(self, function, summary, bound, frame)

    monkeypatch.setattr(Interpreter, "walk_function", recorded)
    _check(Case(CLASS_AND_STATIC_METHODS), tmp_path)
    assert "Net.forward" in harvested  # the harvest ran: the comparison proves something
    assert "Net.from_config" not in harvested and "Net.default_config" not in harvested
