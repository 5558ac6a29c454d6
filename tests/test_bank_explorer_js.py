"""The explorer's JavaScript bank model (tcgemm/widgets/banks.js) agrees with tcgemm.smem.banks.

Node runs the JavaScript on a fixed sweep of settings and on thousands of random ones (random
layouts, custom expressions, CuTe layouts and accesses, broken ones among them); Python builds the
same cases with tcgemm.smem.bank_cases; every count, every lane's address and banks, the tile drawn,
the CuTe equivalent, the words the explorer shows (summary, phase labels, the phase table's rows) and
every refusal (its message, word for word) must match. Expressions are also evaluated on their own, on
integers far past 64 bits, where the two must give the same value.
"""
import itertools
import json
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tcgemm.smem import bank_cases, notation
from tcgemm.widgets.bank_explorer import catalog
from required import skip_or_fail

ROOT = Path(__file__).resolve().parent.parent
RUNNER = ROOT / "tests" / "js" / "bank_cases.mjs"
BANKS_JS = ROOT / "tcgemm" / "widgets" / "banks.js"
RANDOM_CASES = 3000
RANDOM_EXPRS = 3000

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
# Found with Python's floor modulo giving an address where JavaScript's % refused: they agree now.
REGRESSIONS = ["(row - 3) % 4 * 16 + col * 2", "row * row_bytes + ((col * elem_bytes) ^ ((row - 1) % 8 << 4))"]
SWIZZLES = [(2, 3, 3, "element"), (2, 4, 3, "byte"), (3, 3, 3, "element"), (3, 4, 3, "element"),
            (3, 4, 3, "byte"), (1, 4, -3, "byte"), (2, 0, 1, "element")]
CUTES = ["Swizzle<2,3,3> o (64,32):(32,1)", "(16,(8,4)):(8,(1,128))", "Sw<3,4,3> o _0 o (_8,_64):(_64,_1)",
         "(32,32):(33,1)", "(8,64):(64,1)", "(8,64):(64, 1"]


def cases() -> list[dict]:
    out = []
    for access, eb, re_ in itertools.product(bank_cases.ACCESSES, (1, 2, 4), (8, 16, 24, 32, 33, 64, 128)):
        base = dict(access=access, elem_bytes=eb, row_elems=re_)
        out.append(bank_cases.settings(**base, layout="row-major"))
        out.append(bank_cases.settings(**base, layout="xor"))
        out += [bank_cases.settings(**base, layout="padded", pad_bytes=p) for p in (0, 4, 8, 16, 20)]
        out += [bank_cases.settings(**base, layout="swizzle", B=b, M=m, S=s, unit=u) for b, m, s, u in SWIZZLES]
        out += [bank_cases.settings(**base, layout="custom", expr=e) for e in EXPRESSIONS + REGRESSIONS]
        out += [bank_cases.settings(**base, layout="cute", cute=c) for c in CUTES[:3]]
    return out


# ---- random cases -----------------------------------------------------------------------------

def random_int(rng: random.Random) -> str:
    value = rng.choice([0, 1, 2, 3, 4, 7, 8, 16, 31, 32, 64, 128, rng.randrange(1000), 2 ** rng.randrange(90)])
    return rng.choice([str(value), str(value), hex(value), f"_{value}"])


def random_expr(rng: random.Random, depth: int = 0) -> str:
    if depth > 3 or rng.random() < 0.3:
        return rng.choice([*notation.EXPR_NAMES, *notation.EXPR_NAMES, random_int(rng)])
    kind = rng.random()
    if kind < 0.15:
        return rng.choice(["-", "~"]) + random_expr(rng, depth + 1)
    if kind < 0.3:
        return f"({random_expr(rng, depth + 1)})"
    op = rng.choice(["|", "^", "&", "<<", ">>", "+", "-", "*", "//", "%", "+", "*", "%"])
    space = rng.choice(["", " ", "  "])
    return f"{random_expr(rng, depth + 1)}{space}{op}{space}{random_expr(rng, depth + 1)}"


def corrupt(rng: random.Random, text: str) -> str:
    """Now and then, a character deleted, or one inserted from those the grammar has or refuses."""
    if rng.random() > 0.15 or not text:
        return text
    at = rng.randrange(len(text))
    if rng.random() < 0.5:
        return text[:at] + text[at + 1:]
    return text[:at] + rng.choice("()<>,:*-+#$.é\t_xoSw") + text[at:]


def random_shape(rng: random.Random, depth: int = 0):
    if depth > 1 or rng.random() < 0.6:
        extent = rng.choice([1, 2, 4, 8, 16, 32, 64, rng.randrange(0, 70)])
        stride = rng.choice([0, 1, 2, 8, 32, 64, 33, rng.randrange(-8, 300), 2 ** rng.randrange(40)])
        return str(extent), str(stride)
    modes = [random_shape(rng, depth + 1) for _ in range(rng.choice([1, 2, 2, 3]))]
    return "(" + ",".join(m[0] for m in modes) + ")", "(" + ",".join(m[1] for m in modes) + ")"


def random_cute(rng: random.Random) -> str:
    (rows, row_stride), (cols, col_stride) = random_shape(rng, 1), random_shape(rng, 1)
    text = f"({rows},{cols}):({row_stride},{col_stride})"
    if rng.random() < 0.6:
        b, m, s = rng.randrange(0, 4), rng.randrange(0, 6), rng.choice([3, 3, 4, -3, 1, 2, 40])
        prefix = rng.choice(["Swizzle", "Sw"]) + f"<{b},{m},{s}> o "
        text = prefix + (f"{rng.randrange(0, 64)} o " if rng.random() < 0.2 else "") + text
    return text


def random_settings(rng: random.Random) -> dict:
    layout = rng.choice(list(bank_cases.LAYOUTS) + ["custom", "cute"])
    eb = rng.choice(bank_cases.ELEM_BYTES)
    row_elems = rng.choice([8, 16, 32, 64, 128, 16 // eb, 128 // eb, rng.randrange(1, 140)])
    return bank_cases.settings(
        access=rng.choice(list(bank_cases.ACCESSES)), layout=layout, elem_bytes=eb, row_elems=row_elems,
        pad_bytes=rng.choice([0, 4, 8, 16, 32, rng.randrange(0, 200)]), B=rng.randrange(0, 5),
        M=rng.randrange(0, 8), S=rng.randrange(-6, 7), unit=rng.choice(["element", "byte"]),
        expr=corrupt(rng, random_address(rng)), cute=corrupt(rng, random_cute(rng)))


def random_address(rng: random.Random) -> str:
    """A random expression, often made an aligned offset within range, so that many give counts."""
    expr = random_expr(rng)
    return rng.choice([expr, f"({expr}) * 16", f"({expr}) % 256 * 16", f"row * row_bytes + ({expr}) % 8 * 16"])


def random_names(rng: random.Random) -> dict:
    def value():
        return rng.choice([0, 1, -1, 5, -7, rng.randrange(-300, 300), rng.randrange(-2 ** 70, 2 ** 70)])
    return {name: value() for name in notation.EXPR_NAMES}


# ---- both sides -----------------------------------------------------------------------------

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
        "tile_rows": bank_cases.tile_rows(settings),
        "cute": bank_cases.cute_equivalent(settings),
        "words": {"summary": bank_cases.summary(settings),
                  "phases": [bank_cases.phase_label(settings, p) for p in range(len(report.phases))],
                  "rows": [bank_cases.phase_row_label(p, r.wavefronts) for p, r in enumerate(report.phases)]},
    }


def python_value(expr: str, names: dict) -> dict:
    try:
        return {"value": str(notation.evaluate(notation.parse_expr(expr), names))}
    except ValueError as error:
        return {"error": str(error)}


@pytest.fixture(scope="module")
def node() -> str:
    found = shutil.which("node")
    if not found:
        skip_or_fail("TCGEMM_REQUIRE_NODE",
                     "node is not installed: the JavaScript twin of tcgemm.smem.banks cannot be checked")
    return found


def run_node(node: str, cases: list[dict] = (), exprs: list[dict] = (), puzzles: list[dict] = ()) -> dict:
    """tests/js/bank_cases.mjs's answer: ``puzzles`` are {name, settings} (tests/test_bank_puzzles.py)."""
    payload = json.dumps({"cases": list(cases), "exprs": list(exprs), "puzzles": list(puzzles), "catalog": catalog()})
    run = subprocess.run([node, str(RUNNER)], input=payload, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def run_js(node: str, settings: list[dict]) -> list[dict]:
    return run_node(node, cases=settings)["cases"]


def assert_agree(settings: list[dict], js: list[dict]) -> list[bool]:
    """Every case the same on both sides, refusals word for word; for each case, whether it is valid."""
    assert len(js) == len(settings)
    valid = []
    for case, theirs in zip(settings, js):
        ours = python_result(case)
        assert theirs == ours, f"{case}:\npython {ours}\njs     {theirs}"
        valid.append("error" not in ours)
    return valid


def test_the_javascript_grammar_is_notations():
    block = re.search(r"// GRAMMAR begin\n(.*?)// GRAMMAR end", BANKS_JS.read_text(), re.S)
    assert block, "banks.js lost its GRAMMAR block"
    copied = "".join(line[3:] + "\n" if line != "//" else "\n" for line in block.group(1).splitlines())
    assert copied == notation.GRAMMAR


@pytest.fixture(scope="module")
def sweep(node) -> tuple[list[dict], list[dict]]:
    settings = cases()
    return settings, run_js(node, settings)


@pytest.mark.slow     # the sweep: every case of tcgemm.smem.bank_cases through Node
def test_js_and_python_agree_on_every_case(sweep):
    settings, js = sweep
    # The sweep must exercise real cases, and conflicting ones among them, not only refusals.
    assert sum(assert_agree(settings, js)) > len(settings) // 3


def test_js_and_python_agree_on_random_cases(node):
    rng = random.Random(18)
    settings = [random_settings(rng) for _ in range(RANDOM_CASES)]
    valid = assert_agree(settings, run_js(node, settings))
    # Enough of each outcome to mean something: valid cases and refusals, for the notations too.
    assert RANDOM_CASES // 5 < sum(valid) < RANDOM_CASES * 4 // 5, sum(valid)
    for layout in ("custom", "cute"):
        outcomes = [ok for s, ok in zip(settings, valid) if s["layout"] == layout]
        assert len(outcomes) // 10 < sum(outcomes) < len(outcomes) * 9 // 10, (layout, sum(outcomes), len(outcomes))


def test_js_and_python_evaluate_random_expressions_alike(node):
    rng = random.Random(5)
    exprs = [{"expr": corrupt(rng, random_expr(rng)), "names": random_names(rng)} for _ in range(RANDOM_EXPRS)]
    js = run_node(node, exprs=[{"expr": e["expr"], "names": {k: str(v) for k, v in e["names"].items()}}
                               for e in exprs])["exprs"]
    ours = [python_value(e["expr"], e["names"]) for e in exprs]
    for case, mine, theirs in zip(exprs, ours, js):
        assert theirs == mine, f"{case}"
    values = [int(r["value"]) for r in ours if "value" in r]
    assert len(values) > RANDOM_EXPRS // 2 and min(values) < -2 ** 64 and max(values) > 2 ** 64
    assert {r["error"].split(" ")[0] for r in ours if "error" in r} >= {"unexpected", "shift", "modulo", "division"}


def test_floor_semantics_and_refusals_are_the_same(node):
    names = {"row": -7, "col": 2, "elem_bytes": 2, "row_elems": 32, "row_bytes": 64}
    exprs = ["row % 4", "row // 2", "7 % -2", "-7 // -2", "row >> 1", "~row & 15", "1 << 64", "1 << 65",
             "row << row", "(row - 3) % 4 * 16 + col * 2", "0x10 + _8", "1 // (col - 2)", "col % 0"]
    js = run_node(node, exprs=[{"expr": e, "names": {k: str(v) for k, v in names.items()}} for e in exprs])["exprs"]
    assert [r.get("value", r.get("error")) for r in js] == [
        "1", "-4", "-1", "3", "-4", "6", str(2 ** 64), "shift count 65 is out of range 0..64",
        "shift count -7 is out of range 0..64", "36", "24", "division by zero", "modulo by zero"]
    assert js == [python_value(e, names) for e in exprs]


@pytest.mark.parametrize("expr", REGRESSIONS)
def test_negative_operands_of_modulo_agree(node, expr):
    settings = bank_cases.settings(layout="custom", expr=expr)
    (js,) = run_js(node, [settings])
    assert js == python_result(settings) and "error" not in js
    assert (js["wavefronts"], js["conflicts"]) == (4, 0)


@pytest.mark.slow
def test_sweep_contains_conflicts_and_conflict_free_cases(sweep):
    js = [r for r in sweep[1] if "error" not in r]
    assert {r["conflicts"] > 0 for r in js} == {True, False}
    assert max(r["ways"] for r in js) == 32


def test_js_reproduces_the_seed_claim(node):
    """Unpermuted A tile: ldmatrix lanes 0, 2, 4, 6 all land on banks 0-3; permuted: no conflicts."""
    plain, permuted = run_js(node, [bank_cases.settings(layout="row-major"), bank_cases.settings(layout="xor")])
    first_phase = plain["phases"][0]
    assert [first_phase["banks"][lane] for lane in (0, 2, 4, 6)] == [[0, 1, 2, 3]] * 4
    assert (plain["conflicts"], plain["ways"]) == (12, 4)
    assert (permuted["conflicts"], permuted["ways"]) == (0, 1)
    assert permuted["cute"] == {"cute": "Swizzle<2,3,3> o (16,32):(32,1)", "unit": "element"}


def test_presets_agree(node):
    settings = [preset["settings"] for preset in bank_cases.PRESETS.values()]
    assert all(assert_agree(settings, run_js(node, settings)))


def test_the_javascript_words_of_each_preset_say_what_it_is(node):
    """What the page shows of each preset (tests/test_bank_cases.py checks the same of the Python twin):
    its summary names its access, its element type, its layout and its kernel (and no other kernel), and
    each phase has the same number in the stepper's label and in the table's row."""
    names = list(bank_cases.PRESETS)
    js = run_js(node, [bank_cases.PRESETS[name]["settings"] for name in names])
    for name, shown in zip(names, js):
        preset = bank_cases.PRESETS[name]
        s, words = preset["settings"], shown["words"]
        assert words["summary"].startswith(expected_opening(preset)), (name, words["summary"])
        assert f"; layout {bank_cases.build_layout(s).name}: " in words["summary"], (name, words["summary"])
        assert words["summary"].count("Kernel") == (1 if preset["source"] else 0), (name, words["summary"])
        for p, (label, row, phase) in enumerate(zip(words["phases"], words["rows"], shown["phases"])):
            count = f"{phase['wavefronts']} wavefront"
            assert label.startswith(f"phase {p} (") and count in label, (name, label)
            assert row == f"{p} ({phase['wavefronts']}x)", (name, row)


def expected_opening(preset: dict) -> str:
    """The start of a preset's summary, from its settings alone: its kernel, its access, element type."""
    s = preset["settings"]
    origin = f"{bank_cases.GEMM_KERNELS[preset['source']].short_title}'s " if preset["source"] else ""
    elem = {1: "int8", 2: "fp16", 4: "fp32"}[s["elem_bytes"]]
    covered = [cell for cells in bank_cases.lane_elements(s).values() for cell in cells]
    tile = f"{max(r for r, _ in covered) + 1}x{max(c for _, c in covered) + 1} {elem}"
    what = {"ldmatrix-x4-A": "ldmatrix.x4 of a", "ldmatrix-x2-B": "ldmatrix.x2 of an",
            "ldmatrix-x4-trans-B": "ldmatrix.x4.trans of a", "stmatrix-x4": "stmatrix.x4 of a",
            "store-16": "16-byte stores of an", "fragment-4": "4-byte mma fragment loads of an",
            "fragment-8": "8-byte mma fragment stores of an"}[s["access"]]
    return f"{origin}{what} {tile}"


def test_error_messages_name_the_problem(node):
    bad = [bank_cases.settings(layout="custom", expr="row ** 2"),
           bank_cases.settings(layout="swizzle", B=3, S=2),
           bank_cases.settings(access="store-16", row_elems=16),
           bank_cases.settings(layout="padded", pad_bytes=4, access="store-16"),
           bank_cases.settings(layout="custom", expr="row - 1"),
           bank_cases.settings(layout="cute", cute="(8,64):(64,(1,2))"),
           bank_cases.settings(layout="cute", cute="(8,64):(64,1)")]
    js = run_js(node, bad)
    assert js[0]["error"] == "unexpected '*' at position 5"
    assert "|S| >= B" in js[1]["error"]
    assert "past the end of a row" in js[2]["error"]
    assert "not aligned to width 16" in js[3]["error"]
    assert js[4]["error"] == "offset -1 of element (0, 0) is outside 0..2^31-1"
    assert js[5]["error"] == "the stride (64,(1,2)) is not nested as the shape (8,64) is"
    assert js[6]["error"] == "element (8, 0) is outside the layout's shape (8,64)"
    for settings, theirs in zip(bad, js):
        with pytest.raises(ValueError) as error:
            bank_cases.build_access(settings)
        assert str(error.value) == theirs["error"]
