"""Shape and layout text: ``parse_shape`` / ``parse_layout`` (``str`` prints).

XLA's syntax plus our own ``PD``/``PV`` attributes for the padding fields XLA
has since removed from its Layout::

    shape  ::= array | tuple | 'token[]'
    tuple  ::= '(' [shape (',' shape)*] ')'
    array  ::= TYPE '[' [INT (',' INT)*] ']' [layout]    TYPE: PrimitiveType.short_name
    layout ::= '{' [INT (',' INT)*] [':' attr*] '}'      minor_to_major, then attributes
    attr   ::= 'T' tile+                  tiles, e.g. T(8,128)(2,1)
             | 'PD(' [INT (',' INT)*] ')' padded_dimensions, by logical dimension
             | 'PV(' NUMBER ')'           padding_value, e.g. PV(0), PV(-1.5), PV(nan)
             | 'L(' INT ')'               tail_padding_alignment_in_elements
             | 'E(' INT ')'               element_size_in_bits
             | 'S(' INT ')'               memory_space
    tile   ::= '(' (INT | '*') (',' (INT | '*'))* ')'

Spaces between tokens are ignored.  ``str`` prints attributes in the order
above, always prints an array's layout (``f32[2,3]{1,0}``) except for a
scalar with the default layout (``f32[]``), and prints tuples as
``(f32[2]{0}, s32[])``; a missing layout parses as the default one.  XLA's
other layout attributes (``D``, ``#``, ``*``, ``SC``, ``P``, ``M``) and
unbounded dynamic dimensions (``?``) are rejected with ValueError; a bounded
dynamic dimension is written ``<=5`` (``f32[<=5,3]``).
"""
from __future__ import annotations

import re
from typing import Any

from .shapes import Layout, PrimitiveType, Shape, Tile

__all__ = ["parse_shape", "parse_layout"]

_UNSUPPORTED_ATTRS = ("SC(", "D(", "#(", "*(", "P(", "M(")
_INT = re.compile(r"-?\d+")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_NUMBER = re.compile(r"[-+]?(?:inf|nan|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")
_INTEGER = re.compile(r"[-+]?\d+")


class _Parser:
    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            raise ValueError(f"shape text must be a str, got {text!r}")
        self.text, self.pos = text, 0

    def fail(self, message: str) -> ValueError:
        return ValueError(f"{message} at position {self.pos} in {self.text!r}")

    def context(self, error: ValueError) -> ValueError:
        return ValueError(f"{error} in {self.text!r}")

    def peek(self, token: str) -> bool:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1
        return self.text.startswith(token, self.pos)

    def accept(self, token: str) -> bool:
        if self.peek(token):
            self.pos += len(token)
            return True
        return False

    def expect(self, token: str, what: str | None = None) -> None:
        if not self.accept(token):
            raise self.fail(f"expected {what or repr(token)}")

    def regex(self, pattern: re.Pattern, what: str) -> str:
        self.peek("")
        m = pattern.match(self.text, self.pos)
        if not m:
            raise self.fail(f"expected {what}")
        self.pos = m.end()
        return m.group()

    def end(self) -> None:
        if self.peek("") and self.pos != len(self.text):
            raise self.fail("unexpected text")

    def int_list(self, close: str, what: str) -> list[int]:
        values: list[int] = []
        if self.accept(close):
            return values
        while True:
            values.append(int(self.regex(_INT, what)))
            if self.accept(close):
                return values
            self.expect(",", f"',' or {close!r}")

    def shape(self) -> Shape:
        if self.accept("("):
            elements = []
            if not self.accept(")"):
                while True:
                    elements.append(self.shape())
                    if self.accept(")"):
                        break
                    self.expect(",", "',' or ')'")
            return Shape.tuple_of(elements)
        name = self.regex(_NAME, "an element type")
        try:
            et = PrimitiveType.from_name(name)
        except ValueError:
            raise ValueError(f"unknown element type {name!r} in {self.text!r}") from None
        if et is PrimitiveType.TUPLE:
            raise ValueError(f"write tuple shapes as '(a, b)', not 'tuple' in {self.text!r}")
        self.expect("[")
        dims: list[int] = []
        dynamic: list[bool] = []
        if not self.accept("]"):
            while True:
                dynamic.append(self.accept("<="))
                if self.peek("?"):
                    raise self.fail("dynamic dimensions ('?') aren't supported in shape text yet")
                dims.append(int(self.regex(_INT, "a dimension size")))
                if self.accept("]"):
                    break
                self.expect(",", "']' or ','")
        layout = self.layout() if self.peek("{") else None
        if et is PrimitiveType.TOKEN:
            if dims or layout is not None:
                raise ValueError(f"a token is written 'token[]' in {self.text!r}")
            return Shape.token()
        try:
            return Shape(et, dims, layout, dynamic_dimensions=tuple(dynamic))
        except ValueError as e:
            raise self.context(e) from None

    def tiles(self) -> tuple[Tile, ...]:
        tiles = []
        while self.accept("("):
            entries: list[Any] = []
            while True:
                entries.append("*" if self.accept("*") else
                               int(self.regex(_INT, "a tile dimension (an int or '*')")))
                if self.accept(")"):
                    break
                self.expect(",", "',' or ')'")
            try:
                tiles.append(Tile(tuple(entries)))
            except ValueError as e:
                raise self.context(e) from None
        if not tiles:
            raise self.fail("expected '(' after 'T'")
        return tuple(tiles)

    def layout(self) -> Layout:
        self.expect("{")
        m2m: list[int] = []
        if not self.peek(":") and not self.peek("}"):
            while True:
                m2m.append(int(self.regex(_INT, "a minor_to_major entry")))
                if not self.accept(","):
                    break
        fields: dict[str, Any] = {}
        if self.accept(":"):
            while not self.accept("}"):
                if self.pos >= len(self.text):
                    raise self.fail("expected '}'")
                for bad in _UNSUPPORTED_ATTRS:
                    if self.text.startswith(bad, self.pos):
                        raise ValueError(f"unsupported layout attribute {bad!r} in {self.text!r}")
                key = next((k for k in ("T", "PD(", "PV(", "L(", "E(", "S(")
                            if self.text.startswith(k, self.pos)), None)
                if key is None:
                    raise self.fail("expected a layout attribute (T, PD, PV, L, E or S)")
                if key in fields:
                    raise self.fail(f"duplicate layout attribute {key.rstrip('(')!r}")
                self.pos += len(key)
                if key == "T":
                    fields[key] = self.tiles()
                elif key == "PD(":
                    fields[key] = tuple(self.int_list(")", "a padded dimension"))
                elif key == "PV(":
                    text = self.regex(_NUMBER, "a padding value")
                    fields[key] = int(text) if _INTEGER.fullmatch(text) else float(text)
                    self.expect(")")
                else:
                    fields[key] = int(self.regex(_INT, "an int"))
                    self.expect(")")
        else:
            self.expect("}", "',', ':' or '}'")
        try:
            return Layout(tuple(m2m), tiles=fields.get("T", ()),
                          padded_dimensions=fields.get("PD("),
                          padding_value=fields.get("PV("),
                          element_size_in_bits=fields.get("E(", 0),
                          memory_space=fields.get("S(", 0),
                          tail_padding_alignment_in_elements=fields.get("L(", 0))
        except ValueError as e:
            raise self.context(e) from None


def parse_shape(text: str) -> Shape:
    """Parse shape text such as ``f32[3,5]{1,0:T(2,2)}`` or ``(f32[2]{0}, s32[])``."""
    p = _Parser(text)
    shape = p.shape()
    p.end()
    return shape


def parse_layout(text: str) -> Layout:
    """Parse layout text such as ``{1,0:T(2,2)(2,1)}``."""
    p = _Parser(text)
    layout = p.layout()
    p.end()
    return layout
