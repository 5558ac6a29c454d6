"""Find a kernel's hot loop in a `cuobjdump -sass` listing and count what it issues. Pure module.

A loop is a backward branch: `BRA 0x0660` at an address past 0x0660. The hot loop of a GEMM kernel is
the one with the most FFMA (or HMMA) between the branch target and the branch.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from tcgemm.table import Column, Table

LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
BRANCH = re.compile(r"\bBRA\b.*?0x([0-9a-f]+)")    # "BRA 0x660" and "BRA `(.L_x_3) 0x660"
# Integer ALU opcodes (prefixes): the address and index arithmetic of a loop.
INTEGER = ("IMAD", "LEA", "IADD3", "VIADD", "LOP3", "SHF", "IADD")


@dataclass(frozen=True)
class Instruction:
    address: int
    text: str            # e.g. "@!P1 LDG.E.128.CONSTANT R84, desc[UR8][R104.64]"

    @property
    def opcode(self) -> str:
        words = self.text.split()
        return words[1] if words[0].startswith("@") else words[0]


def function_listing(listing: str, entry: str) -> str:
    """The part of a cuobjdump listing that belongs to the function `entry`."""
    parts = re.split(r"\n\s*Function : ", listing)
    for part in parts[1:]:
        if part.split()[0] == entry:
            return part
    found = [p.split()[0] for p in parts[1:]]
    raise KeyError(f"no function {entry!r} in the listing; it has {found}")


def instructions(listing: str) -> list[Instruction]:
    return [Instruction(int(m.group(1), 16), m.group(2).strip()) for m in LINE.finditer(listing)]


def loops(code: list[Instruction]) -> list[list[Instruction]]:
    """Every backward-branch loop body, from the branch target to the branch itself."""
    out = []
    for ins in code:
        m = BRANCH.search(ins.text)
        if m and int(m.group(1), 16) < ins.address:
            target = int(m.group(1), 16)
            out.append([i for i in code if target <= i.address <= ins.address])
    return out


def hot_loop(listing: str, entry: str, opcode: str = "FFMA") -> list[Instruction]:
    """The loop of `entry` with the most instructions whose opcode starts with `opcode`."""
    bodies = loops(instructions(function_listing(listing, entry)))
    if not bodies:
        raise ValueError(f"{entry} has no backward branch: no loop to read")
    return max(bodies, key=lambda body: sum(i.opcode.startswith(opcode) for i in body))


def opcode_counts(body: list[Instruction]) -> Counter:
    """Instructions per opcode with its width/kind suffixes, e.g. LDS.128, LDG.E.128.CONSTANT."""
    return Counter(i.opcode for i in body)


def count_before(body: list[Instruction], counted: str, stop: str) -> int:
    """How many instructions of `body` whose opcode starts with `counted` come before the first one
    that starts with `stop`, in address order: count_before(loop, "LDG", "STS") is the number of global
    loads a loop issues before its first shared store."""
    for n, ins in enumerate(body):
        if ins.opcode.startswith(stop):
            return sum(i.opcode.startswith(counted) for i in body[:n])
    raise ValueError(f"no {stop} in the {len(body)} instructions given")


def reuse_flags(body: list[Instruction]) -> int:
    """How many operand slots carry a .reuse flag."""
    return sum(i.text.count(".reuse") for i in body)


def text(body: list[Instruction]) -> str:
    """The body as cuobjdump-like lines (what tcgemm.sgemm.regbank.parse_ffma reads)."""
    return "\n".join(f"        /*{i.address:04x}*/ {i.text} ;" for i in body)


def tally(body: list[Instruction], groups: dict[str, str | tuple[str, ...]]) -> dict[str, int]:
    """Instructions per group of `body`; a group counts the opcodes that start with one of its
    prefixes, e.g. {"HMMA": "HMMA", "integer": INTEGER}."""
    return {name: sum(i.opcode.startswith(prefixes) for i in body) for name, prefixes in groups.items()}


def summary_table(bodies: dict[str, list[Instruction]], main: str = "FFMA", also: tuple[str, ...] = ("LDS.128",),
                  others: int = 10) -> Table:
    """One row per named loop body: its length, the `main` opcode (and its share), the `also` opcodes,
    the .reuse flags, then the `others` most frequent remaining opcodes."""
    rows = []
    for name, body in bodies.items():
        counts = opcode_counts(body)
        rest = [(op, k) for op, k in counts.most_common() if op != main and op not in also]
        listed = [f"{op} {k}" for op, k in rest[:others]]
        if len(rest) > others:
            listed.append(f"{len(rest) - others} more opcodes")
        rows.append([name, len(body), counts[main], 100 * counts[main] / len(body), *(counts[op] for op in also),
                     reuse_flags(body), ", ".join(listed) or "none"])
    return Table(["Loop", "Instructions per K tile", main, Column(f"{main} %", ".1f"), *also, ".reuse flags",
                  "Others"], rows)
