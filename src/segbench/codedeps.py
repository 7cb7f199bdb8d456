"""Which source files a `segbench` subcommand runs, derived from the package's imports.

The workflow declares these files as a rule's inputs, so a code change re-runs exactly the steps
whose code it touches, and no list of modules is kept by hand. A subcommand runs the CLI module
and its step module (cli.COMMANDS); each module depends on every segbench module it imports,
at its top or inside a function (a lazy import is still code the step may run), transitively.
A module that imports by computed name (`import_module`) depends on every module of its own
package, the registry it picks from. Also the data files the code reads by a fixed path: the
JSON schemas (segbench.schemas) and the label table (segbench.idd.table).

Pure `ast`: nothing is imported, so this runs at every Snakemake start in milliseconds.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

PACKAGE = "segbench"
SOURCE = Path(__file__).resolve().parent
CLI = f"{PACKAGE}.cli"
# Modules that read project files by a fixed path (not through a declared argument), and the
# files: a step importing the module depends on them like on code.
READS = {
    f"{PACKAGE}.schemas": ("workflow/schemas", "*.json"),
    f"{PACKAGE}.idd.table": ("config/label_tables", "*.yaml"),
}


def module_path(module: str) -> Path | None:
    """The source file of a segbench module (None when there is none)."""
    parts = module.split(".")[1:]
    base = SOURCE.joinpath(*parts)
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _package_of(module: str, path: Path) -> str:
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _resolve(package: str, level: int, name: str | None) -> str:
    base = package.split(".")
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


@cache
def imports_of(module: str) -> frozenset[str]:
    """The segbench modules `module` imports directly (anywhere in its source)."""
    path = module_path(module)
    if path is None:
        return frozenset()
    package = _package_of(module, path)
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = _resolve(package, node.level, node.module) if node.level else (node.module or "")
            if not base.startswith(PACKAGE):
                continue
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names if module_path(f"{base}.{alias.name}"))
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith(PACKAGE))
        elif isinstance(node, ast.Name) and node.id == "import_module" and module != CLI:
            found.update(f"{package}.{p.stem}" for p in Path(path).parent.glob("*.py") if p.stem != "__init__")
    # a package's __init__ runs before any of its modules
    parents = {m.rsplit(".", i)[0] for m in found for i in range(1, m.count("."))}
    return frozenset(m for m in found | parents if module_path(m) is not None and m != module)


def closure(roots: list[str]) -> set[str]:
    """`roots` and every segbench module they import, transitively."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        todo.extend(imports_of(module) - seen)
    return seen


def command_modules(command: str) -> set[str]:
    """The modules the subcommand `command` runs: the CLI, its step module, their imports."""
    from .cli import COMMAND  # cli imports nothing heavy at its top

    return closure([CLI, f"{PACKAGE}.{COMMAND[command].step}", PACKAGE])


def command_files(command: str, root: Path | None = None) -> list[str]:
    """The source and data files of subcommand `command`, sorted, relative to `root` (the
    project root: this checkout, by default) when they are inside it."""
    root = (root or SOURCE.parents[1]).resolve()
    modules = command_modules(command)
    files = {module_path(m) for m in modules}
    for module, (folder, pattern) in READS.items():
        if module in modules:
            files.update((root / folder).glob(pattern))
    return sorted(_relative(p, root) for p in files if p is not None)


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path)
