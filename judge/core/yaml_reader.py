"""Reading YAML files whose every error names the file and the key: `read_yaml` (the file's data,
or a SpecError naming the file and the line) and `Reader` (typed access to one mapping of it).
Puzzle specs (`spec_reader`) and course policies are read with these."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from judge.core.spec import evaluate
from judge.errors import SpecError


class Reader:
    """Typed access to a YAML mapping that reports `file: key: problem` on every error."""

    def __init__(self, path: Path, data: Any, where: str = ""):
        self.path, self.data, self.where = path, data, where
        if not isinstance(data, dict):
            self.fail(f"expected a mapping, got {type(data).__name__}")

    def fail(self, message: str, key: str = "") -> SpecError:
        location = ".".join(p for p in (self.where, key) if p) or "(top level)"
        raise SpecError(f"{self.path}: {location}: {message}")

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
        if key not in self.data:
            if default is ...:
                self.fail("missing key", key)
            return default
        value = self.data[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if float in kinds and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            names = " or ".join(k.__name__ for k in kinds)
            self.fail(f"expected {names}, got {type(value).__name__} {value!r}", key)
        return value

    def child(self, key: str, value: Any) -> Reader:
        return Reader(self.path, value, f"{self.where}.{key}" if self.where else key)

    def expression(self, key: str, sizes: set[str], default: Any = ...) -> float | str:
        """A number, or an arithmetic expression in the sizes (checked now, evaluated per case)."""
        value = self.get(key, (float, str), default)
        if isinstance(value, str):
            try:
                evaluate(value, dict.fromkeys(sizes, 1))
            except (ValueError, ZeroDivisionError) as exc:
                self.fail(f"{value!r}: {exc}", key)
        return value

    def choice(self, key: str, options: tuple[str, ...], default: Any = ...) -> str:
        value = self.get(key, str, default)
        if value not in options:
            self.fail(f"unknown value {value!r} (expected one of: {', '.join(options)})", key)
        return value


def read_yaml(path: Path) -> Any:
    """The data of a YAML file; SpecError naming the file (and the line) when it cannot be read
    or parsed."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise SpecError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "(syntax)"
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SpecError(f"{path}: {where}: YAML syntax error: {problem}") from None
