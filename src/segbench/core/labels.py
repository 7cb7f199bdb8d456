"""Label spaces as tables, and the lookup tables that map raw mask values and label spaces.

Every lookup is derived from the tables in config/label_spaces/; nothing here names a class.
Masks are uint8, so every mapping starts from the 256 possible raw values: a lookup table of
length 256 sends each raw value to a class index, to DROP (excluded, e.g. void) or to INVALID
(a value the protocol forbids; scoring reports it with the frame that holds it).

The two sides read void differently: a ground-truth void pixel is excluded (DROP), a predicted
void value is NO_CLASS, a prediction of no class that still counts against the pixel's
ground-truth class (a miss), as mmsegmentation counts it; dropping it would let a blank upload
score 1.0. A report's confusion matrix gives NO_CLASS a column of its own (no_class_column).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import SegbenchError

RAW_VALUES = 256
DROP = -1
INVALID = -2
NO_CLASS = -3  # a predicted void value: no class predicted, a miss of the pixel's ground-truth class


@dataclass(frozen=True)
class LabelClass:
    id: int
    name: str
    color: tuple[int, int, int]
    mirror: str | None = None  # the class a horizontal flip turns this one into (left <-> right)


@dataclass(frozen=True)
class LabelSpace:
    """An ordered table of classes with contiguous ids 0..K-1, plus how raw mask values read."""

    name: str
    classes: tuple[LabelClass, ...]
    void: tuple[int, ...] = ()
    void_from: int | None = None  # raw values >= this are void too
    fold_from: int | None = None  # raw values >= this fold into class `fold_into`
    fold_into: int | None = None
    _index: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        ids = [c.id for c in self.classes]
        if ids != list(range(len(ids))):
            raise SegbenchError(f"label space '{self.name}': class ids must be 0..K-1 in order, got {ids}")
        names = [c.name for c in self.classes]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise SegbenchError(f"label space '{self.name}': duplicate class names {dupes}")
        self._index.update({c.name: c.id for c in self.classes})
        mirrors = {c.name: c.mirror or c.name for c in self.classes}
        for name, mirror in mirrors.items():
            if mirrors.get(mirror) != name:  # a flip applied twice must give the class back
                raise SegbenchError(
                    f"label space '{self.name}': class '{name}' mirrors '{mirror}', which is not a class mirroring it back"
                )

    @classmethod
    def from_table(cls, table: Mapping) -> LabelSpace:
        fold = table.get("fold_values_from")
        return cls(
            name=table["name"],
            classes=tuple(
                LabelClass(int(row["id"]), str(row["name"]), tuple(row.get("color", (0, 0, 0))), row.get("mirror"))
                for row in table["classes"]
            ),
            void=tuple(table.get("void", ())),
            void_from=table.get("void_from"),
            fold_from=None if fold is None else int(fold["value"]),
            fold_into=None if fold is None else cls._name_lookup(table, fold["into"]),
        )

    @staticmethod
    def _name_lookup(table: Mapping, name: str) -> int:
        for row in table["classes"]:
            if row["name"] == name:
                return int(row["id"])
        raise SegbenchError(f"label space '{table['name']}': fold target '{name}' is not a class")

    @property
    def size(self) -> int:
        return len(self.classes)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.classes]

    def id_of(self, name: str) -> int:
        try:
            return self._index[name]
        except KeyError:
            raise SegbenchError(f"label space '{self.name}' has no class '{name}' (classes: {self.names})") from None

    def has(self, name: str) -> bool:
        return name in self._index

    def raw_lut(self) -> np.ndarray:
        """Raw uint8 value -> class index, DROP for void values, INVALID for anything else."""
        lut = np.full(RAW_VALUES, INVALID, dtype=np.int64)
        lut[: self.size] = np.arange(self.size)
        if self.fold_from is not None:
            lut[self.fold_from :] = self.fold_into
        if self.void_from is not None:
            lut[self.void_from :] = DROP
        lut[list(self.void)] = DROP
        return lut

    def prediction_lut(self) -> np.ndarray:
        """Raw value of a predicted mask -> class index, NO_CLASS for void values (never dropped:
        a miss), INVALID for anything else."""
        lut = self.raw_lut()
        lut[lut == DROP] = NO_CLASS
        return lut

    def void_values(self) -> np.ndarray:
        """Sorted raw values that are void in this space (a prediction holding them predicts no class)."""
        return np.flatnonzero(self.raw_lut() == DROP)

    def allowed_values(self) -> np.ndarray:
        """Sorted raw values a mask in this space may hold."""
        return np.flatnonzero(self.raw_lut() != INVALID)

    def mirrored_ids(self) -> np.ndarray:
        """Class index -> the index a horizontal flip turns it into (itself unless it names a mirror)."""
        return np.array([self.id_of(c.mirror) if c.mirror else c.id for c in self.classes], dtype=np.int64)

    def palette(self) -> np.ndarray:
        """(256, 3) uint8 colour table indexed by raw value; unlisted values are black."""
        pal = np.zeros((RAW_VALUES, 3), dtype=np.uint8)
        for c in self.classes:
            pal[c.id] = c.color
        return pal


@dataclass(frozen=True)
class LabelMapping:
    """A many-to-one map from one label space to another, as a lookup table of class indices."""

    source: LabelSpace
    target: LabelSpace
    lut: np.ndarray  # length source.size; target index or DROP

    @classmethod
    def from_rules(
        cls,
        source: LabelSpace,
        target: LabelSpace,
        rules: Mapping[str, Sequence[str]],
        default: str | None,
        where: str,
    ) -> LabelMapping:
        """`rules` maps each target class name to the source names that go to it.

        Source names absent from `source` are allowed (e.g. "window" for ADE20K's "windowpane"),
        but every rule must match at least one source class, so a typo cannot pass silently.
        """
        lut = np.full(source.size, DROP if default is None else target.id_of(default), dtype=np.int64)
        seen: dict[str, str] = {}
        for target_name, source_names in rules.items():
            target_id = target.id_of(target_name)
            present = [n for n in source_names if source.has(n)]
            if not present:
                raise SegbenchError(
                    f"{where}: mapping {source.name} -> {target.name}: none of {list(source_names)} "
                    f"(for '{target_name}') is a class of '{source.name}'"
                )
            for name in present:
                if name in seen:
                    raise SegbenchError(
                        f"{where}: mapping {source.name} -> {target.name}: '{name}' is mapped to both "
                        f"'{seen[name]}' and '{target_name}'"
                    )
                seen[name] = target_name
                lut[source.id_of(name)] = target_id
        return cls(source, target, lut)

    @classmethod
    def identity(cls, space: LabelSpace) -> LabelMapping:
        return cls(space, space, np.arange(space.size, dtype=np.int64))

    def then(self, other: LabelMapping) -> LabelMapping:
        """Compose: self, then other."""
        if other.source.name != self.target.name:
            raise SegbenchError(f"cannot compose {self.source.name}->{self.target.name} with {other.source.name}->...")
        lut = np.where(self.lut >= 0, other.lut[np.clip(self.lut, 0, None)], DROP)
        return LabelMapping(self.source, other.target, lut)

    def apply_to_raw(self, raw_lut: np.ndarray) -> np.ndarray:
        """Compose a raw-value lookup (class index / DROP / INVALID / NO_CLASS) with this mapping;
        the markers stay as they are."""
        safe = np.clip(raw_lut, 0, None)
        return np.where(raw_lut >= 0, self.lut[safe], raw_lut)


def no_class_column(lut: np.ndarray, size: int) -> np.ndarray:
    """A prediction's raw lookup into a space of `size` classes as confusion columns: NO_CLASS
    becomes column `size`, the one after the classes (a report's matrix is K x (K + 1))."""
    return np.where(lut == NO_CLASS, size, lut)


def one_hot(lut: np.ndarray, size: int) -> np.ndarray:
    """(len(lut), size) int64 matrix with a 1 at (i, lut[i]); rows for DROP/INVALID are zero."""
    matrix = np.zeros((len(lut), size), dtype=np.int64)
    keep = lut >= 0
    matrix[np.flatnonzero(keep), lut[keep]] = 1
    return matrix


def reduce_confusion(counts: np.ndarray, row_lut: np.ndarray, col_lut: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """Sum the rows and columns of a confusion matrix through two lookup tables.

    Entries whose row or column maps to DROP vanish. Works on a (..., R, C) stack of matrices.
    """
    return one_hot(row_lut, rows).T @ counts @ one_hot(col_lut, cols)
