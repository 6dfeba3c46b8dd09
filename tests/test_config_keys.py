"""The `hoodie.*` key registry: each key named once, and no other module of the project spells one."""

import ast
from pathlib import Path

from hudi_format import config_keys

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("adapter", "client", "store", "hudi_format", "pipeline", "bench", "tools")


def test_registry_keys_are_hoodie_keys_with_a_meaning():
    assert config_keys.KEYS
    for key, entry in config_keys.KEYS.items():
        assert key.startswith(config_keys.PREFIX) and entry.key == key and entry.meaning


def test_defaults():
    assert config_keys.default_of(config_keys.TABLE_VERSION) == "6"
    assert int(config_keys.default_of(config_keys.PARQUET_MAX_FILE_SIZE)) == 120 * 1024 * 1024
    assert config_keys.shuffle_parallelism("upsert") == "hoodie.upsert.shuffle.parallelism"


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def test_no_module_outside_the_registry_spells_a_key():
    registry = Path(config_keys.__file__).resolve()
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.resolve() == registry:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docstrings = _docstrings(tree)
            found += [f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}" for node in ast.walk(tree)
                      if isinstance(node, ast.Constant) and isinstance(node.value, str)
                      and id(node) not in docstrings and config_keys.PREFIX in node.value]
    assert not found, "spell these through hudi_format.config_keys:\n" + "\n".join(found)
