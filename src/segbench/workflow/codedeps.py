"""Which source files a `segbench` subcommand runs, derived from the package's imports.

The workflow gives each rule the digest of these files' bytes as a parameter (`command_key`), so
a code change re-runs exactly the steps whose code it touches, a file rewritten with the same
bytes re-runs nothing, and no list of modules is kept by hand. A parameter rather than the
source files as inputs of every job: Snakemake's planning time grows with every declared input
of every job (docs/performance.md), and the jobs run the installed package, not the files of the
checkout. A subcommand runs the CLI module
and its step module (segbench.commands.cli.COMMANDS names it; the caller looks it up, so this
module, a layer below the commands, imports none of them); each module depends on every segbench
module it imports, at its top or inside a function (a lazy import is still code the step may
run), transitively.
A module that imports by computed name (`import_module`) depends on every module of its own
package, the registry it picks from. Also the data files the code reads by a fixed path: the
JSON schemas (segbench.io.schemas), the label table (segbench.protocols.idd.table) and the
results page's style and script (segbench.stages.results_page).

Pure text over the checkout's own src/segbench (the code its jobs run, whichever copy of the
package is installed): nothing is imported, so it is cheap enough for every Snakemake start.
"""

from __future__ import annotations

import hashlib
import re
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
        self._digests: dict[str, bytes] = {}
        self._paths: dict[str, Path | None] = {}

    def module_path(self, module: str) -> Path | None:
        """The source file of a segbench module (None when there is none)."""
        if module not in self._paths:
            base = self.source.joinpath(*module.split(".")[1:])
            found = [path for path in (base.with_suffix(".py"), base / "__init__.py") if path.is_file()]
            self._paths[module] = found[0] if found else None
        return self._paths[module]

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
        source = path.read_text(encoding="utf-8")
        found: set[str] = set()
        for match in IMPORT.finditer(source):
            if match["names"] is not None:  # from BASE import NAMES
                dots = len(match["base"]) - len(match["base"].lstrip("."))
                base = _resolve(package, dots, match["base"][dots:] or None) if dots else match["base"]
                if not base.startswith(PACKAGE):
                    continue
                found.add(base)
                found.update(f"{base}.{n}" for n in _names(match["names"]) if self.module_path(f"{base}.{n}"))
            else:  # import MODULES
                found.update(n for n in _names(match["modules"], dotted=True) if n.startswith(PACKAGE))
        if module != CLI and IMPORT_BY_NAME.search(source):
            found.update(f"{package}.{p.stem}" for p in path.parent.glob("*.py") if p.stem != "__init__")
        return frozenset(m for m in _with_parents(found) if self.module_path(m) is not None and m != module)

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
        modules = self.closure(sorted(_with_parents({CLI, f"{PACKAGE}.{step}"})))
        files = {self.module_path(m) for m in modules} - {None}
        for module, (folder, pattern) in READS.items():
            if module in modules:
                files.update((self.root / folder).glob(pattern))
        return sorted(p.relative_to(self.root).as_posix() for p in files)

    def command_key(self, step: str) -> str:
        """The SHA-256 of the files `command_files(step)` lists: each one's path and the digest of
        its bytes (every file is read once per graph)."""
        key = hashlib.sha256()
        for name in self.command_files(step):
            if name not in self._digests:
                self._digests[name] = hashlib.sha256((self.root / name).read_bytes()).digest()
            key.update(name.encode() + b"\0" + self._digests[name])
        return key.hexdigest()


# An import statement at the start of a line, anywhere (a lazy import inside a function counts):
# `from BASE import NAMES` (NAMES possibly in parentheses over several lines) or `import MODULES`.
# A regular expression rather than a parse: this runs at every Snakemake start, over every
# module of the package (docs/performance.md has what a parse cost).
IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(?P<base>\.*[\w.]*)[ \t]+import[ \t]+(?P<names>\([^)]*\)|[^\n#;]*)"
    r"|import[ \t]+(?P<modules>[^\n#;]*))",
    re.M,
)
IMPORT_BY_NAME = re.compile(r"\bimport_module\(")  # a call of importlib's, with a computed name


def _with_parents(modules: set[str]) -> set[str]:
    """`modules` and every package above them: a package's __init__ runs before any of its modules."""
    return modules | {m.rsplit(".", i)[0] for m in modules for i in range(1, m.count(".") + 1)}


def _names(text: str, dotted: bool = False) -> list[str]:
    """The imported names of a statement's name list (`a as b, c`; parentheses, comments and
    line breaks allowed)."""
    names = []
    for line in text.strip("()").splitlines():
        for item in line.split("#")[0].split(","):
            name = item.strip().split(" as ")[0].strip()
            if name and (dotted or name.isidentifier()):
                names.append(name)
    return names


def _resolve(package: str, level: int, name: str | None) -> str:
    base = package.split(".")
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))
