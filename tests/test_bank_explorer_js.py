"""The explorer's JavaScript bank model (tcgemm/widgets/banks.js) agrees with tcgemm.smem.banks.

Node runs the JavaScript on a few thousand settings; Python builds the same cases with
tcgemm.smem.bank_cases; every count, every lane's address and banks, and every refusal must match.
"""
import itertools
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tcgemm.smem import bank_cases

ROOT = Path(__file__).resolve().parent.parent
RUNNER = ROOT / "tests" / "js" / "bank_cases.mjs"

EXPRESSIONS = [
    bank_cases.DEFAULTS["expr"],
    "row * row_bytes + col * elem_bytes",
    "row * (row_bytes + 4) + col * elem_bytes",
    "(row * row_bytes + col * elem_bytes) ^ ((row % 8) << 4)",
    "row * 128 + ((col * elem_bytes) ^ ((row & 7) << 4))",
    "row * row_bytes + col * elem_bytes - 4096",      # negative addresses: refused
    "row * 3 + col",                                  # misaligned for wide accesses: refused
    "row * row_bytes + col * elem_bytes +",           # does not parse
    "row < col",                                      # comparisons are not integer arithmetic
    "Math.max(row, col)",                             # unknown names
    "row ** 2",
]
SWIZZLES = [(2, 3, 3, "element"), (2, 4, 3, "byte"), (3, 3, 3, "element"), (3, 4, 3, "element"),
            (3, 4, 3, "byte"), (1, 4, -3, "byte"), (2, 0, 1, "element")]


def cases() -> list[dict]:
    out = []
    for access, eb, re_ in itertools.product(bank_cases.ACCESSES, (1, 2, 4), (8, 16, 24, 32, 33, 64, 128)):
        base = dict(access=access, elem_bytes=eb, row_elems=re_)
        out.append(bank_cases.settings(**base, layout="row-major"))
        out.append(bank_cases.settings(**base, layout="xor"))
        out += [bank_cases.settings(**base, layout="padded", pad_bytes=p) for p in (0, 4, 8, 16, 20)]
        out += [bank_cases.settings(**base, layout="swizzle", B=b, M=m, S=s, unit=u) for b, m, s, u in SWIZZLES]
        out += [bank_cases.settings(**base, layout="custom", expr=e) for e in EXPRESSIONS]
    return out


def python_result(settings: dict) -> dict:
    try:
        access = bank_cases.build_access(settings)
    except ValueError as error:
        return {"error": str(error)}
    report = bank_cases.banks.analyze(access)
    return {
        "addresses": [int(a) for a in access.addresses],
        "wavefronts": report.wavefronts, "ideal": report.ideal, "conflicts": report.conflicts, "ways": report.ways,
        "phases": [{"lanes": [int(x) for x in p.lanes], "banks": [list(b) for b in p.banks_per_lane],
                    "wavefronts": p.wavefronts} for p in report.phases],
    }


@pytest.fixture(scope="module")
def node() -> str:
    found = shutil.which("node")
    if not found:
        if os.environ.get("TCGEMM_REQUIRE_NODE") == "1":
            pytest.fail("node is required (TCGEMM_REQUIRE_NODE=1) but not on PATH")
        pytest.skip("node is not installed: the JavaScript twin of tcgemm.smem.banks cannot be checked")
    return found


def run_js(node: str, settings: list[dict]) -> list[dict]:
    run = subprocess.run([node, str(RUNNER)], input=json.dumps(settings), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_js_and_python_agree_on_every_case(node):
    settings = cases()
    js = run_js(node, settings)
    assert len(js) == len(settings)
    valid = 0
    for case, ours, theirs in zip(settings, (python_result(s) for s in settings), js):
        if "error" in ours or "error" in theirs:
            assert "error" in ours and "error" in theirs, f"{case}: python {ours.get('error')!r}, js {theirs.get('error')!r}"
            continue
        valid += 1
        assert theirs == ours, f"{case}"
    # The sweep must exercise real cases, and conflicting ones among them, not only refusals.
    assert valid > len(settings) // 3


def test_sweep_contains_conflicts_and_conflict_free_cases(node):
    js = [r for r in run_js(node, cases()) if "error" not in r]
    assert {r["conflicts"] > 0 for r in js} == {True, False}
    assert max(r["ways"] for r in js) == 32


def test_js_reproduces_the_seed_claim(node):
    """Unpermuted A tile: ldmatrix lanes 0, 2, 4, 6 all land on banks 0-3; permuted: no conflicts."""
    plain, permuted = run_js(node, [bank_cases.settings(layout="row-major"), bank_cases.settings(layout="xor")])
    first_phase = plain["phases"][0]
    assert [first_phase["banks"][lane] for lane in (0, 2, 4, 6)] == [[0, 1, 2, 3]] * 4
    assert (plain["conflicts"], plain["ways"]) == (12, 4)
    assert (permuted["conflicts"], permuted["ways"]) == (0, 1)


def test_error_messages_name_the_problem(node):
    bad = [bank_cases.settings(layout="custom", expr="row ** 2"),
           bank_cases.settings(layout="swizzle", B=3, S=2),
           bank_cases.settings(access="store-16", row_elems=16),
           bank_cases.settings(layout="padded", pad_bytes=4, access="store-16")]
    js = run_js(node, bad)
    assert "only names, integers" in js[0]["error"]
    assert "|S| >= B" in js[1]["error"]
    assert "past the end of a row" in js[2]["error"]
    assert "not aligned to width 16" in js[3]["error"]
    for settings in bad:
        with pytest.raises(ValueError):
            bank_cases.build_access(settings)
