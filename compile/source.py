"""Generated code as small objects, rendered to text last.

A lowering rule appends statements to the block being written; a loop is a
:class:`Loop` object until the end, so deciding after its body is written
that it runs on threads (``prange``) sets an attribute instead of editing an
emitted line, and a statement that turns out to be unneeded (a guard
counter no loop used) is a :class:`Line` whose ``needed`` is False, not a
line deleted afterwards.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

__all__ = ["Line", "Loop", "Block", "Statement"]


@dataclass(eq=False)
class Line:
    """One statement; left out of the source while ``needed`` is False."""
    text: str
    needed: bool = True

    def render(self, indent: int, out: list[str]) -> None:
        if self.needed:
            out.append("    " * indent + self.text)


@dataclass(eq=False)
class Loop:
    """``for index in range(extent):`` — or ``prange`` once ``parallel`` is set."""
    index: str
    extent: str
    parallel: bool = False

    def __str__(self) -> str:
        return f"for {self.index} in {'prange' if self.parallel else 'range'}({self.extent}):"


@dataclass(eq=False)
class Block:
    """A header (a ``Loop`` or a line of text such as ``if x:``) and the
    statements under it; the function body is a block without a header."""
    header: Union[Loop, str, None] = None
    body: list["Statement"] = field(default_factory=list)

    def render(self, indent: int, out: list[str]) -> None:
        if self.header is None:
            for statement in self.body:
                statement.render(indent, out)
            return
        out.append("    " * indent + str(self.header))
        start = len(out)
        for statement in self.body:
            statement.render(indent + 1, out)
        if len(out) == start:
            out.append("    " * (indent + 1) + "pass")


Statement = Union[Line, Block]
