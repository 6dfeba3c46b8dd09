"""The import rules of docs/architecture.md, checked on the source (every import, also those inside
functions): a package imports only the layers below it, and nobody outside a package with a door
(its ``__init__``) imports the modules behind that door. A new upward import fails here."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIRST_PARTY = ("thrift_idl", "hudi_format", "client", "store", "adapter", "pipeline", "bench", "tools", "tests")

#: package -> the first-party packages it may import (besides itself); the most specific key wins.
#: Keep in step with the table in docs/architecture.md.
RULES: dict[str, tuple[str, ...]] = {
    "hudi_format": ("thrift_idl",),
    "client": ("thrift_idl", "hudi_format"),
    "store.errors": (),
    "store.metrics": (),
    "store.db": ("store.errors", "store.metrics"),
    # a migration that fills location keys normalizes them as the running server does; one that
    # edits Hudi table configs names their keys through the registry
    "store.db.migrations": ("store.db", "store.errors", "store.metrics", "store.storage.ownership",
                            "hudi_format.config_keys", "store.hms.partitions"),
    "store.storage": ("store.db", "store.errors", "store.metrics", "hudi_format"),
    "store.hms": ("store.db", "store.storage", "store.errors", "store.metrics", "thrift_idl",
                  "hudi_format.writable"),  # Hadoop's Writable encodings: delegation tokens
    "store.hudi": ("store.hms", "store.db", "store.errors", "store.metrics", "hudi_format", "thrift_idl"),
    "store.services": ("store",),
    "store": ("store",),  # store/__init__.py
    "adapter": ("adapter", "store", "client", "hudi_format", "thrift_idl"),
    "adapter.commands": ("adapter.commands", "adapter.config", "adapter.preflight", "adapter.security",
                         "adapter.log_format", "client", "hudi_format", "thrift_idl", "pipeline"),
    "adapter.console": ("adapter.console", "adapter.metrics_http", "adapter.readiness", "store.services",
                        "store.errors", "store.metrics", "hudi_format", "thrift_idl"),
    "pipeline": ("client", "hudi_format"),
    # the benchmarks, tools and tests may use everything (but still only through doors)
    "bench": FIRST_PARTY,
    "tools": FIRST_PARTY,
    "tests": FIRST_PARTY,
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.cache
def _imports(path: Path) -> list[tuple[int, str, list[str]]]:
    return _imports_of(path.read_text(), _module_name(path), path.name == "__init__.py")


def _imports_of(source: str, name: str, is_package: bool) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) of every first-party import in `source`, the text of module `name`
    (relative imports resolved; `from pkg import mod` of a module `mod` counts as `pkg.mod`)."""
    package = name.split(".") if is_package else name.split(".")[:-1]
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names = [a.name for a in node.names]
            modules = [n for n in names if _is_module(f"{module}.{n}")]
            out += [(node.lineno, f"{module}.{n}", []) for n in modules]
            if len(modules) < len(names) or not names:
                out.append((node.lineno, module, [n for n in names if n not in modules]))
    return [(line, m, names) for line, m, names in out if m.split(".")[0] in FIRST_PARTY]


def _is_module(dotted: str) -> bool:
    path = ROOT / Path(*dotted.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _upward(me: str, module: str) -> bool:
    key, allowed = _rule_of(me)
    return not (_within(module, key) or any(_within(module, a) for a in allowed))


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _rule_of(module: str) -> tuple[str, tuple[str, ...]]:
    key = max((k for k in RULES if _within(module, k)), key=len)
    return key, RULES[key]


def _doors() -> list[str]:
    """Packages with one door: the client, and each sub-package of store/hms and store/hudi."""
    doors = ["client"] if (ROOT / "client" / "__init__.py").exists() else []
    for parent in ("store/hms", "store/hudi"):
        for init in sorted((ROOT / parent).glob("*/__init__.py")):
            doors.append(_module_name(init))
    return doors


def _sources() -> list[Path]:
    files = []
    for top in FIRST_PARTY:
        if top == "thrift_idl":  # generated bindings
            continue
        base = ROOT / top
        files += sorted(base.rglob("*.py")) if base.is_dir() else []
    return files


@functools.cache
def _exported(door: str) -> frozenset[str]:
    """The names a door's `__all__` lists (a door may export a module as a namespace)."""
    init = ROOT / Path(*door.split(".")) / "__init__.py"
    for node in ast.walk(ast.parse(init.read_text())):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            return frozenset(ast.literal_eval(node.value))
    return frozenset()


def _inner(door: str, module: str) -> str | None:
    """The inner module of `door` this import reaches, if it reaches one past the door."""
    if module == door or not _within(module, door):
        return None
    rest = module[len(door) + 1:]
    if "." not in rest and rest in _exported(door):
        return None  # `from door import mod`: a module the door exports as a namespace
    return module


def test_layers_import_only_downwards():
    bad = []
    for path in _sources():
        me = _module_name(path)
        for line, module, _ in _imports(path):
            if _upward(me, module):
                bad.append(f"{path.relative_to(ROOT)}:{line}: {me} ({_rule_of(me)[0]}) imports {module}")
    assert not bad, "imports against docs/architecture.md's rules:\n" + "\n".join(bad)


def test_doors_are_the_only_way_in():
    bad = []
    doors = _doors()
    for path in _sources():
        me = _module_name(path)
        for line, module, _ in _imports(path):
            for door in doors:
                if _within(me, door):
                    continue
                inner = _inner(door, module)
                if inner:
                    bad.append(f"{path.relative_to(ROOT)}:{line}: {me} reaches {inner} behind {door}'s door")
    assert not bad, "imports past a package's door:\n" + "\n".join(bad)


def test_the_checker_sees_what_it_must():
    """The checker itself (one that saw nothing would pass everything): absolute, relative and
    in-function imports are found, and an upward one is flagged."""
    source = "from store.hudi import x\nfrom . import sibling\ndef f():\n    import pipeline.writer\n"
    found = {m for _, m, _ in _imports_of(source, "store.hms.probe", False)}
    assert found == {"store.hudi", "store.hms", "pipeline.writer"}  # no store/hms/sibling.py: a name
    assert _upward("store.hms.probe", "store.hudi") and _upward("pipeline.writer", "store.db")
    assert not _upward("store.hudi.commit", "store.hms") and not _upward("tests.x", "store.db")
    assert _inner("store.hms.partitions", "store.hms.partitions.partition_reads")  # past the door
    assert _inner("store.hms.partitions", "store.hms.partitions") is None  # through it
