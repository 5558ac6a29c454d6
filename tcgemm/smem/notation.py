"""The explorer's two text notations for a layout, parsed the same way here and in the page.

tcgemm/widgets/banks.js implements GRAMMAR again, token for token and message for message;
tests/test_bank_explorer_js.py checks that its copy of GRAMMAR is this one and runs thousands of
random expressions and layouts through both. Pure module (standard library only).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

GRAMMAR = """\
tokens   INT   := '_'? DIGITS | '0x' HEXDIGITS    (CuTe prints static integers as _8)
         NAME  := letter or '_', then letters, digits, '_'
         PUNCT := '<<' | '>>' | '//' | one of + - * % ^ & | ~ ( ) , : < >
         spaces (' ', tab, CR, LF) separate tokens; any other character is refused;
         a text has at most 400 characters, all ASCII
expr     := or
or       := xor ('|' xor)*
xor      := and ('^' and)*
and      := shift ('&' shift)*
shift    := sum (('<<' | '>>') sum)*
sum      := product (('+' | '-') product)*
product  := unary (('*' | '//' | '%') unary)*
unary    := ('-' | '~') unary | atom
atom     := INT | NAME | '(' expr ')'
NAME in expr: row, col, elem_bytes, row_elems, row_bytes
cute     := [swizzle 'o' [INT 'o']] shape ':' stride
swizzle  := ('Swizzle' | 'Sw') '<' sint ',' sint ',' sint '>'
sint     := ['-'] INT
shape    := INT | '(' shape (',' shape)* ')'    the outer one is (rows, cols)
stride   := sint | '(' stride (',' stride)* ')' nested as the shape is
semantics: integers of any size (Python int, JavaScript BigInt); // and % round toward minus
  infinity (a % b takes the sign of b), and refuse a zero divisor; shift counts 0..64; & | ^ ~ >>
  act on two's complement with unbounded sign; every offset, the layout's before its swizzle and
  the byte offset after, must lie in 0 .. 2^31 - 1.
"""

EXPR_NAMES = ("row", "col", "elem_bytes", "row_elems", "row_bytes")
MAX_SHIFT = 64
MAX_TEXT = 400
_TOKEN = re.compile(r"(?P<int>0[xX][0-9a-fA-F]+|_?[0-9]+)|(?P<name>[A-Za-z_][A-Za-z_0-9]*)"
                    r"|(?P<punct><<|>>|//|[-+*%^&|~(),:<>])")
_SPACE = " \t\n\r"
_BINARY = (("|",), ("^",), ("&",), ("<<", ">>"), ("+", "-"), ("*", "//", "%"))


class NotationError(ValueError):
    """Text that the grammar refuses, or arithmetic it does not allow."""


@dataclass(frozen=True)
class Token:
    kind: str      # "int", "name", "punct" or "end"
    text: str
    at: int        # position of its first character

    @property
    def shown(self) -> str:
        return "the end" if self.kind == "end" else f"'{self.text}'"


def tokenize(text: str) -> list[Token]:
    if not isinstance(text, str):
        raise NotationError("the layout text must be a string")
    for at, char in enumerate(text):
        if not char.isascii():
            raise NotationError(f"unexpected character '{char}' at position {at}")
    if len(text) > MAX_TEXT:
        raise NotationError(f"the text is {len(text)} characters long; at most {MAX_TEXT}")
    tokens, at = [], 0
    while True:
        while at < len(text) and text[at] in _SPACE:
            at += 1
        if at == len(text):
            break
        match = _TOKEN.match(text, at)
        if not match:
            raise NotationError(f"unexpected character '{text[at]}' at position {at}")
        tokens.append(Token(match.lastgroup, match.group(), at))
        at = match.end()
    tokens.append(Token("end", "", len(text)))
    return tokens


def int_value(token: Token) -> int:
    text = token.text.lstrip("_")
    return int(text, 16) if text[:2] in ("0x", "0X") else int(text)


class _Parser:
    def __init__(self, text: str):
        self.tokens = tokenize(text)
        self.i = 0

    @property
    def peek(self) -> Token:
        return self.tokens[self.i]

    def take(self) -> Token:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def accept(self, text: str) -> bool:
        if self.peek.kind in ("punct", "name") and self.peek.text == text:
            self.i += 1
            return True
        return False

    def expect(self, text: str) -> None:
        if not self.accept(text):
            raise NotationError(f"expected '{text}' at position {self.peek.at}, found {self.peek.shown}")

    def finish(self):
        if self.peek.kind != "end":
            raise NotationError(f"unexpected {self.peek.shown} at position {self.peek.at}")

    # expr ------------------------------------------------------------------------------------
    def binary(self, level: int):
        if level == len(_BINARY):
            return self.unary()
        node = self.binary(level + 1)
        while self.peek.kind == "punct" and self.peek.text in _BINARY[level]:
            op = self.take().text
            node = ("bin", op, node, self.binary(level + 1))
        return node

    def unary(self):
        if self.accept("-"):
            return ("neg", self.unary())
        if self.accept("~"):
            return ("not", self.unary())
        token = self.take()
        if token.kind == "int":
            return ("int", int_value(token))
        if token.kind == "name":
            if token.text not in EXPR_NAMES:
                raise NotationError(f"unknown name '{token.text}' at position {token.at}; "
                                    f"use {', '.join(EXPR_NAMES)}")
            return ("name", token.text)
        if token.text == "(":
            node = self.binary(0)
            self.expect(")")
            return node
        raise NotationError(f"unexpected {token.shown} at position {token.at}")

    # cute ------------------------------------------------------------------------------------
    def integer(self, signed: bool) -> int:
        negative = signed and self.accept("-")
        token = self.take()
        if token.kind != "int":
            raise NotationError(f"expected an integer at position {token.at}, found {token.shown}")
        return -int_value(token) if negative else int_value(token)

    def tree(self, signed: bool):
        if self.accept("("):
            modes = [self.tree(signed)]
            while self.accept(","):
                modes.append(self.tree(signed))
            self.expect(")")
            return tuple(modes)
        return self.integer(signed)


# ---------------------------------------------------------------------------------------------
# Integer expressions: the byte offset of element (row, col).


def parse_expr(text: str):
    """The expression's syntax tree (nested tuples); NotationError if GRAMMAR refuses it."""
    if not isinstance(text, str) or not text.strip():
        raise NotationError("the custom layout needs an expression, e.g. row * row_bytes + col * elem_bytes")
    parser = _Parser(text)
    node = parser.binary(0)
    parser.finish()
    return node


def _floor_div(a: int, b: int, op: str) -> int:
    if b == 0:
        raise NotationError("division by zero" if op == "//" else "modulo by zero")
    return a // b if op == "//" else a % b


def _shift(a: int, b: int, op: str) -> int:
    if not 0 <= b <= MAX_SHIFT:
        raise NotationError(f"shift count {b} is out of range 0..{MAX_SHIFT}")
    return a << b if op == "<<" else a >> b


_OPS = {
    "|": lambda a, b, op: a | b, "^": lambda a, b, op: a ^ b, "&": lambda a, b, op: a & b,
    "<<": _shift, ">>": _shift, "+": lambda a, b, op: a + b, "-": lambda a, b, op: a - b,
    "*": lambda a, b, op: a * b, "//": _floor_div, "%": _floor_div,
}


def evaluate(node, names: dict[str, int]) -> int:
    """The value of a parse_expr tree, left operand first (so the first refusal is the same as JS's)."""
    kind = node[0]
    if kind == "int":
        return node[1]
    if kind == "name":
        return names[node[1]]
    if kind == "neg":
        return -evaluate(node[1], names)
    if kind == "not":
        return ~evaluate(node[1], names)
    _, op, left, right = node
    a = evaluate(left, names)
    return _OPS[op](a, evaluate(right, names), op)


# ---------------------------------------------------------------------------------------------
# CuTe layouts: [Swizzle<B,M,S> o [offset o]] (rows, cols):(row stride, col stride), nested modes.


@dataclass(frozen=True)
class CuteLayout:
    shape: tuple
    stride: tuple
    swizzle: tuple[int, int, int] | None = None
    offset: int = 0

    @property
    def rows(self) -> int:
        return size(self.shape[0])

    @property
    def cols(self) -> int:
        return size(self.shape[1])

    def __str__(self) -> str:
        prefix = ""
        if self.swizzle is not None:
            prefix = "Swizzle<{},{},{}> o ".format(*self.swizzle) + (f"{self.offset} o " if self.offset else "")
        return f"{prefix}{_text(self.shape)}:{_text(self.stride)}"

    def element_offset(self, row: int, col: int) -> int:
        """The layout's value at (row, col) before the swizzle, in the layout's own unit."""
        if not (0 <= row < self.rows and 0 <= col < self.cols):
            raise NotationError(f"element ({row}, {col}) is outside the layout's shape {_text(self.shape)}")
        return self.offset + _mode_offset(self.shape[0], self.stride[0], row) + \
            _mode_offset(self.shape[1], self.stride[1], col)


def size(shape) -> int:
    if isinstance(shape, int):
        return shape
    total = 1
    for mode in shape:
        total *= size(mode)
    return total


def _text(tree) -> str:
    return str(tree) if isinstance(tree, int) else "(" + ",".join(_text(t) for t in tree) + ")"


def _mode_offset(shape, stride, index: int) -> int:
    """CuTe's index -> offset of one mode: nested modes split the index colexicographically."""
    if isinstance(shape, int):
        return index * stride
    total = 0
    for sub_shape, sub_stride in zip(shape, stride):
        total += _mode_offset(sub_shape, sub_stride, index % size(sub_shape))
        index //= size(sub_shape)
    return total


def _same_nesting(shape, stride) -> bool:
    if isinstance(shape, int) or isinstance(stride, int):
        return isinstance(shape, int) and isinstance(stride, int)
    return len(shape) == len(stride) and all(_same_nesting(a, b) for a, b in zip(shape, stride))


def _positive(shape) -> bool:
    return shape >= 1 if isinstance(shape, int) else all(_positive(mode) for mode in shape)


def parse_cute(text: str) -> CuteLayout:
    """A CuTe layout (GRAMMAR's ``cute``); NotationError if the grammar refuses it."""
    if not isinstance(text, str) or not text.strip():
        raise NotationError("the CuTe layout needs a shape and a stride, e.g. (8,64):(64,1)")
    parser = _Parser(text)
    swizzle, offset = None, 0
    if parser.peek.kind == "name":
        if parser.peek.text not in ("Swizzle", "Sw"):
            raise NotationError(f"unexpected '{parser.peek.text}' at position {parser.peek.at}; "
                                "a CuTe layout starts with Swizzle<B,M,S> o or with its shape")
        parser.take()
        parser.expect("<")
        swizzle = (parser.integer(True), 0, 0)
        parser.expect(",")
        swizzle = (swizzle[0], parser.integer(True), 0)
        parser.expect(",")
        swizzle = (swizzle[0], swizzle[1], parser.integer(True))
        parser.expect(">")
        parser.expect("o")
        if parser.peek.kind == "int":
            offset = parser.integer(False)
            parser.expect("o")
    at = parser.peek.at
    shape = parser.tree(False)
    parser.expect(":")
    stride = parser.tree(True)
    parser.finish()
    if isinstance(shape, int) or len(shape) != 2:
        raise NotationError(f"the shape at position {at} must have two modes, (rows, cols); got {_text(shape)}")
    if not _positive(shape):
        raise NotationError(f"every extent of the shape must be at least 1; got {_text(shape)}")
    if not _same_nesting(shape, stride):
        raise NotationError(f"the stride {_text(stride)} is not nested as the shape {_text(shape)} is")
    return CuteLayout(shape, stride, swizzle, offset)
