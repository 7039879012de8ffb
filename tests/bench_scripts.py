"""Load a bench/NAME.py script as a module, as `python bench/NAME.py` runs it (bench/dev_sets.py importable); and
`_rule_table`, bench/rule_table.py loaded, for tests/test_rules.py and test_rule_rows.py."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load(name: str) -> ModuleType:
    if str(ROOT / "bench") not in sys.path:
        sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None, f"bench/{name}.py is missing"
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def _rule_table() -> ModuleType:
    return load("rule_table")
