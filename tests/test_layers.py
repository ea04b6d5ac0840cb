"""The package's layers: imports go one way (cli -> records -> insight -> judging -> workers ->
core -> errors; cli -> sources -> core), and no module reaches itself through others. Imports
inside functions count: a lazy import still draws an arrow."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "judge"
ORDER = ["errors", "core", "workers", "judging", "insight", "records", "sources", "cli"]
MAY_IMPORT = {  # a layer may import itself and these
    "errors": set(),
    "core": {"errors"},
    "workers": {"core", "errors"},
    "judging": {"workers", "core", "errors"},
    "insight": {"judging", "workers", "core", "errors"},
    "records": {"insight", "judging", "workers", "core", "errors"},
    "sources": {"core", "errors"},
    "cli": set(ORDER),
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "errors"  # the package itself: its version, nothing more
    return "cli" if parts[1] == "__main__" else parts[1]


def graph() -> dict[str, set[str]]:
    """Each module of the package and the package modules it imports, anywhere in its text."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    arrows: dict[str, set[str]] = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [f"{node.module}.{a.name}" for a in node.names] + [node.module]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name and target.startswith("judge."):
                    found.add(target)
        arrows[name] = found
    return arrows


def test_every_import_goes_down_the_layers():
    wrong = []
    for module, targets in graph().items():
        if module == "judge":
            continue
        for target in targets:
            own, theirs = layer(module), layer(target)
            if theirs != own and theirs not in MAY_IMPORT[own]:
                wrong.append(f"{module} -> {target}")
    assert not wrong, wrong


def test_no_module_reaches_itself():
    arrows = graph()
    circles = []

    def visit(node: str, path: list[str], on_path: set[str], done: set[str]) -> None:
        for target in sorted(arrows.get(node, ())):
            if target in on_path:
                circles.append(path[path.index(target) :] + [target])
            elif target not in done:
                on_path.add(target)
                visit(target, [*path, target], on_path, done)
                on_path.discard(target)
        done.add(node)

    done: set[str] = set()
    for start in sorted(arrows):
        if start not in done:
            visit(start, [start], {start}, done)
    packages = {
        m for m in arrows if (PACKAGE.parent / m.replace(".", "/") / "__init__.py").exists()
    }
    circles = [c for c in circles if not packages & set(c)]  # a package and its modules: fine
    assert not circles, [" -> ".join(c) for c in circles]
