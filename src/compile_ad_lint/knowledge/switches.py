"""Run-time switches: where training code reads values the user sets when launching it.

A branch on such a value may go either way on the user's run, whatever the code writes as its
default: ``if args.compile:`` with an argparse flag, ``if cfg.compile:`` with a dataclass or
pydantic config field, ``if os.environ.get("COMPILE"):``, ``if compile:`` with a module global
that ``exec(open("configurator.py").read())`` can rebind. A branch on a value nothing can rebind
(a module constant in a script without such an override) is decided by the code. The interpreter
(``linking/analyses/switches.py``) follows both arms of a switch and names the condition in the findings
that hold on one arm only.

Each row names where the library defines the behaviour (read from its documentation or source);
``tests/knowledge/test_switches.py`` has a case per row.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SettingsCall:
    """A call whose result holds settings from the command line, a config file or the environment:
    attributes, items and method results of it are settings too."""

    kind: str
    names: frozenset[str]
    source: str
    #: The argument (keyword, position) naming the config class the call fills (or the object it
    #: fills, argparse's ``namespace=``): its result is that instance (a config class's fields'
    #: defaults known, each a switch); None: plain settings.
    builds: tuple[str, int] | None = None


SETTINGS_CALLS: tuple[SettingsCall, ...] = (
    SettingsCall(
        "argparse",
        frozenset(
            {
                "argparse.ArgumentParser.parse_args",
                "argparse.ArgumentParser.parse_known_args",
                "argparse.ArgumentParser.parse_intermixed_args",
            }
        ),
        "Python Lib/argparse.py: `ArgumentParser.parse_args(args=None, namespace=None)` parses "
        "`sys.argv[1:]` when `args` is None into `namespace` (a new `Namespace` when None) and returns it; "
        "`parse_known_args` returns `(namespace, extras)`",
        builds=("namespace", 1),
    ),
    SettingsCall(
        "omegaconf",
        frozenset(
            {
                "omegaconf.OmegaConf.load",
                "omegaconf.OmegaConf.create",
                "omegaconf.OmegaConf.merge",
                "omegaconf.OmegaConf.from_cli",
                "omegaconf.OmegaConf.from_dotlist",
            }
        ),
        "omegaconf/omegaconf.py: `OmegaConf.load(file_)` reads a YAML file, `from_cli(args_list=None)` "
        "reads `sys.argv`, `merge(*configs)` overrides the first config with the others",
    ),
    SettingsCall(
        "omegaconf",
        frozenset({"omegaconf.OmegaConf.structured"}),
        "omegaconf/omegaconf.py: `OmegaConf.structured(obj)` is a config typed by the dataclass `obj`, "
        "its defaults overridable by later merges",
        builds=("obj", 0),
    ),
    SettingsCall(
        "hydra",
        frozenset({"hydra.compose"}),
        "hydra/compose.py: `compose(config_name=None, overrides=[])` builds the config Hydra would give "
        "`@hydra.main`, with the command-line style overrides",
    ),
    SettingsCall(
        "yaml",
        frozenset({"yaml.safe_load", "yaml.load", "yaml.full_load", "yaml.unsafe_load"}),
        "PyYAML lib/yaml/__init__.py: `load(stream, Loader)`, `safe_load(stream)` return the document's "
        "data (a config file the user edits)",
    ),
    SettingsCall(
        "json",
        frozenset({"json.load", "json.loads"}),
        "Python Lib/json/__init__.py: `load(fp)`, `loads(s)` return the document's data",
    ),
    SettingsCall(
        "toml",
        frozenset({"tomllib.load", "tomllib.loads", "tomli.load", "tomli.loads", "toml.load", "toml.loads"}),
        "Python Lib/tomllib/_parser.py: `load(fp)`, `loads(s)` return the document's data (tomli and "
        "toml have the same functions)",
    ),
    SettingsCall(
        "environment",
        frozenset({"os.getenv", "os.environ.get", "os.environ.setdefault", "os.environ.pop"}),
        "Python Lib/os.py: `getenv(key, default=None)` is `environ.get(key, default)`; `os.environ` is "
        "the process environment, set when the run is launched",
    ),
    SettingsCall(
        "tyro",
        frozenset({"tyro.cli"}),
        "tyro src/tyro/_cli.py: `cli(f, *, args=None, ...)` builds `f` (a dataclass or function) from `sys.argv[1:]`",
        builds=("f", 0),
    ),
    SettingsCall(
        "simple_parsing",
        frozenset({"simple_parsing.parse"}),
        "simple_parsing simple_parsing/parsing.py: `parse(config_class, config_path=None, args=None, ...)`: an "
        "instance of the dataclass filled from the command line",
        builds=("config_class", 0),
    ),
    SettingsCall(
        "simple_parsing",
        frozenset({"simple_parsing.ArgumentParser.parse_args"}),
        "simple_parsing simple_parsing/parsing.py: `ArgumentParser.parse_args(args=None, namespace=None)` with the "
        "dataclasses added by `add_arguments`",
    ),
    SettingsCall(
        "transformers",
        frozenset(
            {
                "transformers.HfArgumentParser.parse_args_into_dataclasses",
                "transformers.HfArgumentParser.parse_dict",
                "transformers.HfArgumentParser.parse_json_file",
                "transformers.HfArgumentParser.parse_yaml_file",
            }
        ),
        "transformers src/transformers/hf_argparser.py: `HfArgumentParser.parse_args_into_dataclasses` "
        "fills the dataclasses from `sys.argv`; the `parse_*_file` methods from a file",
    ),
    SettingsCall(
        "draccus",
        frozenset({"draccus.parse", "pyrallis.parse"}),
        "draccus draccus/argparsing.py: `parse(config_class, config_path=None, args=None)` fills a "
        "dataclass from a config file and `sys.argv` (pyrallis, its origin, has the same function)",
        builds=("config_class", 0),
    ),
    SettingsCall(
        "jsonargparse",
        frozenset({"jsonargparse.ArgumentParser.parse_args", "jsonargparse.CLI", "jsonargparse.auto_cli"}),
        "jsonargparse jsonargparse/_core.py: `ArgumentParser.parse_args(args=None)`; _cli.py `CLI(components)` "
        "runs a function with arguments from the command line and config files",
    ),
)

#: Base classes whose instances get their attributes from the command line: an attribute the class
#: does not define is a setting (``class TrainArgs(argparse.Namespace)`` passed as ``namespace=``).
SETTINGS_BASES: dict[str, tuple[str, str]] = {
    "argparse.Namespace": (
        "argparse",
        "Python Lib/argparse.py: `parse_args` sets each parsed option as an attribute of the namespace",
    ),
}

#: Objects that are settings themselves (read as ``os.environ["X"]``, ``"X" in os.environ``).
SETTINGS_OBJECTS: dict[str, tuple[str, str]] = {
    "os.environ": ("environment", "Python Lib/os.py: `environ`, the mapping of the process environment"),
}


@dataclass(frozen=True)
class SettingsDecorator:
    """A decorator whose function receives its parameters from the command line or a config file:
    a parameter no analyzed caller binds holds settings."""

    kind: str
    names: frozenset[str]
    source: str


SETTINGS_DECORATORS: tuple[SettingsDecorator, ...] = (
    SettingsDecorator(
        "hydra",
        frozenset({"hydra.main"}),
        "hydra/main.py: `main(config_path, config_name, version_base)` calls the task function with the "
        "config composed from the files and the command-line overrides",
    ),
    SettingsDecorator(
        "click",
        frozenset({"click.command", "click.option", "click.argument", "click.group"}),
        "click src/click/decorators.py: `command()` makes a `Command` whose callback receives the parsed "
        "options and arguments as keyword arguments",
    ),
    SettingsDecorator(
        "typer",
        frozenset({"typer.Typer.command", "typer.Typer.callback"}),
        "typer typer/main.py: `Typer.command()` registers a function whose parameters become the "
        "command's options and arguments",
    ),
    SettingsDecorator(
        "draccus",
        frozenset({"draccus.wrap", "pyrallis.wrap"}),
        "draccus draccus/wrappers/... `wrap(config_path=None)`: the decorated function is called with the "
        "dataclass `parse` fills from a config file and `sys.argv`",
    ),
)


@dataclass(frozen=True)
class ConfigClass:
    """Classes whose fields are configuration (filled from the command line or a file by the
    parsers above, or by the user's own code): a field with a literal default is a switch."""

    kind: str
    #: Decorators that make such a class.
    decorators: frozenset[str]
    #: Base classes that make such a class.
    bases: frozenset[str]
    source: str


CONFIG_CLASSES: tuple[ConfigClass, ...] = (
    ConfigClass(
        "dataclass",
        frozenset({"dataclasses.dataclass", "pydantic.dataclasses.dataclass"}),
        frozenset(),
        "Python Lib/dataclasses.py: `@dataclass` fields are constructor parameters with defaults; argument "
        "parsers (HfArgumentParser, tyro, simple_parsing, draccus) fill them from the command line",
    ),
    ConfigClass(
        "attrs",
        frozenset({"attr.s", "attr.attrs", "attr.define", "attr.frozen", "attrs.define", "attrs.frozen"}),
        frozenset(),
        "attrs src/attr/_make.py: `@define` fields are constructor parameters with defaults",
    ),
    ConfigClass(
        "pydantic",
        frozenset(),
        frozenset({"pydantic.BaseModel", "pydantic_settings.BaseSettings", "pydantic.BaseSettings"}),
        "pydantic pydantic/main.py: `BaseModel` fields are constructor keyword arguments validated from "
        "data; pydantic_settings `BaseSettings` fills them from the environment and CLI too",
    ),
    ConfigClass(
        "typed-argument-parser",
        frozenset(),
        frozenset({"tap.Tap", "tap.tap.Tap"}),
        "typed-argument-parser src/tap/tap.py: `class Tap(ArgumentParser)`: each annotated class variable is a "
        "command-line argument, its value the class variable's default unless given",
    ),
)


@dataclass(frozen=True)
class SelfReturningMethod:
    """A method a settings base class gives its subclasses that returns the instance itself, filled
    (``Args().parse_args()`` is the ``Args`` instance, its fields set from the command line)."""

    base: str
    method: str
    source: str


SELF_RETURNING_METHODS: tuple[SelfReturningMethod, ...] = (
    SelfReturningMethod(
        "tap.Tap",
        "parse_args",
        "typed-argument-parser src/tap/tap.py: `def parse_args(self, args=None, known_only=False, ...)`: "
        "sets each argument on `self`, then `return self`",
    ),
)


@dataclass(frozen=True)
class GlobalRebinder:
    """A module-level call that can rebind the module's globals from outside the code:
    ``exec(open("configurator.py").read())`` (the configurator reads ``sys.argv``),
    ``globals().update(overrides)``. Globals given a literal before it are switches."""

    function: str
    #: The method called on the function's result (``update`` of ``globals()``); None: the call itself.
    method: str | None
    source: str


GLOBAL_REBINDERS: tuple[GlobalRebinder, ...] = (
    GlobalRebinder(
        "builtins.exec",
        None,
        "Python docs library/functions.html#exec: at module level `exec(code)` runs `code` in the module's "
        "globals, so it may assign any of them (nanoGPT's `exec(open('configurator.py').read())` sets them "
        "from `--key=value` arguments and config files)",
    ),
    GlobalRebinder(
        "builtins.globals",
        "update",
        "Python docs library/functions.html#globals: `globals()` is the module's namespace dictionary; "
        "`update` rebinds its names",
    ),
    GlobalRebinder(
        "builtins.vars",
        "update",
        "Python docs library/functions.html#vars: without an argument `vars()` is `locals()`, the module's "
        "namespace at module level",
    ),
)


@dataclass(frozen=True)
class FieldDefault:
    """A field specifier in a config class body: the field's default is ``default=`` or what calling
    the factory argument returns (a nested config: ``model: ModelConfig = field(default_factory=ModelConfig)``)."""

    names: frozenset[str]
    default: str
    factory: str
    source: str


FIELD_DEFAULTS: tuple[FieldDefault, ...] = (
    FieldDefault(
        frozenset({"dataclasses.field"}),
        "default",
        "default_factory",
        "Python Lib/dataclasses.py: `field(*, default=MISSING, default_factory=MISSING, ...)`",
    ),
    FieldDefault(
        frozenset({"attr.ib", "attr.attrib", "attrs.field", "attr.field"}),
        "default",
        "factory",
        "attrs src/attr/_make.py: `attrib(default=NOTHING, ..., factory=None)`; `attrs.field` likewise",
    ),
    FieldDefault(
        frozenset({"pydantic.Field"}),
        "default",
        "default_factory",
        "pydantic pydantic/fields.py: `Field(default=PydanticUndefined, *, default_factory=None, ...)`",
    ),
)

SETTINGS_CALL_BY_NAME: dict[str, SettingsCall] = {name: row for row in SETTINGS_CALLS for name in row.names}
SETTINGS_DECORATOR_BY_NAME: dict[str, SettingsDecorator] = {
    name: row for row in SETTINGS_DECORATORS for name in row.names
}
CONFIG_CLASS_DECORATORS: dict[str, ConfigClass] = {name: row for row in CONFIG_CLASSES for name in row.decorators}
CONFIG_CLASS_BASES: dict[str, ConfigClass] = {name: row for row in CONFIG_CLASSES for name in row.bases}
REBINDER_BY_NAME: dict[str, GlobalRebinder] = {row.function: row for row in GLOBAL_REBINDERS}
FIELD_DEFAULT_BY_NAME: dict[str, FieldDefault] = {name: row for row in FIELD_DEFAULTS for name in row.names}

#: Method name -> the settings bases whose method of that name returns the instance.
SELF_RETURNING_BY_NAME: dict[str, frozenset[str]] = {
    name: frozenset(row.base for row in SELF_RETURNING_METHODS if row.method == name)
    for name in {row.method for row in SELF_RETURNING_METHODS}
}

#: Every qualified name these tables compare what the code reaches with (kept whole by attribute access).
SWITCH_NAMES: frozenset[str] = frozenset(
    [
        *(row.base for row in SELF_RETURNING_METHODS),
        *SETTINGS_CALL_BY_NAME,
        *SETTINGS_OBJECTS,
        *SETTINGS_BASES,
        *SETTINGS_DECORATOR_BY_NAME,
        *CONFIG_CLASS_DECORATORS,
        *CONFIG_CLASS_BASES,
        *REBINDER_BY_NAME,
        *FIELD_DEFAULT_BY_NAME,
    ]
)
