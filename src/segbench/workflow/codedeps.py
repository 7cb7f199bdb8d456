"""Which source files a `segbench` subcommand runs, derived from the package's imports.

The workflow declares these files as a rule's inputs, so a code change re-runs exactly the steps
whose code it touches, and no list of modules is kept by hand. A subcommand runs the CLI module
and its step module (segbench.commands.cli.COMMANDS names it; the caller looks it up, so this
module, a layer below the commands, imports none of them); each module depends on every segbench
module it imports, at its top or inside a function (a lazy import is still code the step may
run), transitively.
A module that imports by computed name (`import_module`) depends on every module of its own
package, the registry it picks from. Also the data files the code reads by a fixed path: the
JSON schemas (segbench.io.schemas), the label table (segbench.protocols.idd.table) and the
results page's style and script (segbench.stages.results_page).

Pure `ast` over the checkout's own src/segbench (the code its jobs run, whichever copy of the
package is installed): nothing is imported, so this runs at every Snakemake start in milliseconds.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "segbench"
CLI = f"{PACKAGE}.commands.cli"
# Modules that read project files by a fixed path (not through a declared argument), and the
# files: a step importing the module depends on them like on code.
READS = {
    f"{PACKAGE}.io.schemas": ("workflow/schemas", "*.json"),
    f"{PACKAGE}.protocols.idd.table": ("config/label_tables", "*.yaml"),
    f"{PACKAGE}.stages.results_page": ("src/segbench/stages", "results_page.*"),
}


class CodeGraph:
    """The import graph of the segbench sources below `root` (a checkout: root/src/segbench)."""

    def __init__(self, root: Path):
        self.root = Path(root).resolve()
        self.source = self.root / "src" / PACKAGE
        self._imports: dict[str, frozenset[str]] = {}

    def module_path(self, module: str) -> Path | None:
        """The source file of a segbench module (None when there is none)."""
        base = self.source.joinpath(*module.split(".")[1:])
        for path in (base.with_suffix(".py"), base / "__init__.py"):
            if path.is_file():
                return path
        return None

    def imports_of(self, module: str) -> frozenset[str]:
        """The segbench modules `module` imports directly (anywhere in its source)."""
        if module not in self._imports:
            self._imports[module] = self._read_imports(module)
        return self._imports[module]

    def _read_imports(self, module: str) -> frozenset[str]:
        path = self.module_path(module)
        if path is None:
            return frozenset()
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.ImportFrom):
                base = _resolve(package, node.level, node.module) if node.level else (node.module or "")
                if not base.startswith(PACKAGE):
                    continue
                found.add(base)
                found.update(f"{base}.{a.name}" for a in node.names if self.module_path(f"{base}.{a.name}"))
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.startswith(PACKAGE))
            elif isinstance(node, ast.Name) and node.id == "import_module" and module != CLI:
                found.update(f"{package}.{p.stem}" for p in path.parent.glob("*.py") if p.stem != "__init__")
        # a package's __init__ runs before any of its modules
        parents = {m.rsplit(".", i)[0] for m in found for i in range(1, m.count("."))}
        return frozenset(m for m in found | parents if self.module_path(m) is not None and m != module)

    def closure(self, roots: list[str]) -> set[str]:
        """`roots` and every segbench module they import, transitively."""
        seen: set[str] = set()
        todo = list(roots)
        while todo:
            module = todo.pop()
            if module not in seen:
                seen.add(module)
                todo.extend(self.imports_of(module) - seen)
        return seen

    def command_files(self, step: str) -> list[str]:
        """The source and data files of a subcommand whose step module is `step` (below segbench,
        as cli.COMMAND names it), sorted, relative to the root."""
        modules = self.closure([CLI, f"{PACKAGE}.{step}", PACKAGE])
        files = {self.module_path(m) for m in modules} - {None}
        for module, (folder, pattern) in READS.items():
            if module in modules:
                files.update((self.root / folder).glob(pattern))
        return sorted(p.relative_to(self.root).as_posix() for p in files)


def _resolve(package: str, level: int, name: str | None) -> str:
    base = package.split(".")
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))
