"""Every problem of one input in one refusal: a team uploading 500 masks learns in one run of
every frame missing, extra, of the wrong size or undecodable, not of the first alone.

A problem has a kind, the heading it is listed under (`Problem`, raised by the check that found
it; `kind_of` gives a check's errors theirs). `Problems` gathers them; its refusal is one
SegbenchError listing each kind with its count, at most SHOWN lines a kind and how many more.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import SegbenchError

SHOWN = 20  # problems listed per kind in one error


class Problem(SegbenchError):
    """One problem of an input; its message names the file (and frame) and what is wrong."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@contextmanager
def kind_of(kind: str) -> Iterator[None]:
    """A SegbenchError raised inside is a Problem of `kind` with the same message."""
    try:
        yield
    except Problem:
        raise
    except SegbenchError as exc:
        raise Problem(kind, str(exc)) from None


class Problems:
    """The problems found in one input so far, by kind in the order each kind was first found."""

    def __init__(self) -> None:
        self.by_kind: dict[str, list[str]] = {}

    def add(self, kind: str, message: str) -> None:
        self.by_kind.setdefault(kind, []).append(message)

    def add_problem(self, problem: Problem) -> None:
        self.add(problem.kind, str(problem))

    def __len__(self) -> int:
        return sum(map(len, self.by_kind.values()))

    def message(self, source: object, what: str) -> str:
        count = len(self)
        lines = [f"{source}: {what}: {count} problem{'s' if count != 1 else ''}:"]
        for kind, messages in self.by_kind.items():
            lines.append(f"  {kind} ({len(messages)}):")
            lines += [f"    {m}" for m in messages[:SHOWN]]
            if len(messages) > SHOWN:
                lines.append(f"    ... and {len(messages) - SHOWN} more")
        return "\n".join(lines)

    def refuse(self, source: object, what: str) -> None:
        """Raise them all as one SegbenchError (`source: what: ...`), if there is any."""
        if self.by_kind:
            raise SegbenchError(self.message(source, what))
