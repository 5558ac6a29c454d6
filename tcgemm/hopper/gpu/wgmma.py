"""Ask the H100 where wgmma reads A and B in shared memory and where it puts D, and compare with
tcgemm.canonical and tcgemm.hopper.wgmma.

Each experiment is one warpgroup running one wgmma.mma_async m64nNk16 (f16 in, f32 accumulate) on
shared-memory images the host builds with smem_image (kernels/probe_wgmma.cu copies them unchanged),
through descriptors the host encodes with MatrixDescriptor (the kernel adds the start address). Every
value is an integer below 2048, exact in f16 and f32.
  D: A[m,0] = m, A[m,1] = 1, B[0,n] = N, B[1,n] = n + 1, so D[m,n] = N*m + n + 1 names its own
     position; each (thread, register) shows where it sits.
  A: A[m,k] = 16m + k + 1 and B selects N of A's columns (B[k,n] = 1 where k = n + jN), so D shows,
     at each (m, k), which element of A the Tensor Core read there.
  B: A[m,k] = 1 where m = k < 16 and B[k,n] = Nk + n + 1, so rows 0-15 of D are B as read, and the
     other rows stay 0.
  Random product: A and B random integers in -3..3, D decoded through the accumulator layout.
A and B are observed through the accumulator layout, and D through A's and B's layouts: a wrong map
shows on its own line and on those of the experiments that read through it. The control puts the
128B layout behind a descriptor whose swizzle field says 32B (one bit differs): it must MISMATCH.

MN-major operands (observe_mn_major_wgmma): one operand at a time is laid out MN-major (A M-major: A
column-major; B N-major: B row-major; tcgemm.canonical.mnmajor_layout) and read with wgmma's
transpose immediate, the other K-major as above. With N = 16 B's M/N extent fits one atom of every
swizzle but "none", so the case N = 128, 128B (B two atoms wide, as Kernel 5.7's B is four) is what
makes LBO matter there. Its control swaps LBO and SBO in the descriptor: it must MISMATCH.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from tcgemm.engine.catalog import PROBES
from tcgemm.errors import UnsupportedOnGPUError
from tcgemm.hopper.wgmma import WARPGROUP_SIZE, WGMMA_M, accumulator_layout, wgmma_instruction
from tcgemm.engine.gpu.compile import current_arch, get_arch_specific_function
from tcgemm.engine.gpu.device import device_info, observation_path, require_gpu
from tcgemm.engine.gpu.probes import VERDICT
from tcgemm.canonical import SWIZZLE_MODES, MatrixDescriptor, canonical_strides, smem_image
from tcgemm.table import Table

K = 16
PROBE_N = (8, 16)
_SOURCE = PROBES["wgmma"].source
CONTROL = ("128B", "32B")      # (layout of the data, swizzle the descriptor names)
# (N, the operand laid out MN-major, swizzle) of the MN-major cases, and the one whose control swaps
# LBO and SBO.
MN_CASES = tuple((16, op, mode) for op in "AB" for mode in SWIZZLE_MODES) + ((128, "B", "128B"),)
MN_CONTROL = (128, "B", "128B")
MN_NAMES = {"A": "A M-major", "B": "B N-major"}


def _image_bytes(operand: str, n: int) -> int:
    """The image sizes kernels/probe_wgmma.cu copies: 64 rows (A) or max(16, N) rows (B) of one 128-byte
    atom row each, the widest K-major layout (an MN-major one is smaller)."""
    return 128 * (WGMMA_M if operand == "A" else max(16, n))


def probe_entry(n: int, mn_major: str = "") -> str:
    """The entry of kernels/probe_wgmma.cu for N = n with operand `mn_major` ('A', 'B' or '' for none)
    read MN-major."""
    return f"probe_wgmma_m64n{n}k16" + (f"_{mn_major.lower()}_mn" if mn_major else "")


def skipped() -> str | None:
    """None on an sm_90 GPU, else the one line that says why the wgmma probe is skipped."""
    arch = current_arch()
    if arch == "sm_90":
        return None
    return f"wgmma needs an sm_90 GPU (Hopper); this one is {arch}: skipped"


def _major(operand: str, mn_major: str) -> str:
    return "MN" if operand == mn_major else "K"


def _image(mode: str, matrix: np.ndarray, operand: str, n: int, mn_major: str = "") -> np.ndarray:
    """The image of operand A (64, 16) or B (16, n), given as the matrix: K-major, A as it is and B
    transposed (N rows of K); MN-major, A transposed (K rows of M) and B as it is."""
    major = _major(operand, mn_major)
    as_stored = matrix if (operand == "A") == (major == "K") else matrix.T
    image = smem_image(mode, as_stored.astype(np.float16), major=major)
    padded = np.zeros(_image_bytes(operand, n), dtype=np.uint8)
    padded[:image.size] = image
    return padded


def _descriptor(layout_mode: str, descriptor_mode: str, rows: int, major: str = "K", swapped: bool = False) -> int:
    lbo, sbo = canonical_strides(layout_mode, rows, K, major=major)
    if swapped:
        lbo, sbo = sbo, lbo
    return MatrixDescriptor(0, lbo, sbo, descriptor_mode).encode()


def run_wgmma(n: int, a: np.ndarray, b: np.ndarray, mode: str, descriptor_mode: str | None = None,
              mn_major: str = "", swapped: bool = False) -> np.ndarray:
    """One wgmma m64n<n>k16 per experiment: a (E, 64, 16) and b (E, 16, n) laid out in swizzle ``mode``,
    K-major but for operand ``mn_major`` ('A', 'B'; '' none) which is MN-major and read transposed,
    through descriptors naming ``descriptor_mode`` (default: the same), the MN-major one with LBO and
    SBO exchanged where ``swapped``. Returns the accumulator registers, (E, 128, n/2).
    UnsupportedOnGPUError on a GPU other than sm_90."""
    if reason := skipped():
        raise UnsupportedOnGPUError(reason)
    entry = probe_entry(n, mn_major)
    if entry not in PROBES["wgmma"].entries:
        raise ValueError(f"kernels/probe_wgmma.cu has no wgmma with N = {n} and {MN_NAMES.get(mn_major, 'A and B K-major')}; "
                         f"its entries: {', '.join(PROBES['wgmma'].entries)}")
    cupy = require_gpu()
    descriptor_mode = descriptor_mode or mode
    a_images = cupy.asarray(np.stack([_image(mode, x, "A", n, mn_major) for x in a]))
    b_images = cupy.asarray(np.stack([_image(mode, x, "B", n, mn_major) for x in b]))
    desc = [_descriptor(mode, descriptor_mode, rows, _major(op, mn_major), swapped and op == mn_major)
            for op, rows in (("A", WGMMA_M), ("B", n))]
    d = cupy.zeros((len(a), WARPGROUP_SIZE, n // 2), dtype=np.float32)
    kernel = get_arch_specific_function(_SOURCE, entry)
    kernel((len(a),), (WARPGROUP_SIZE,), (a_images, b_images, np.uint64(desc[0]), np.uint64(desc[1]), d))
    return cupy.asnumpy(d).astype(np.float64)


def _decode(values: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Tags width*row + col + 1 -> (row, col); -1 where a value is no such tag."""
    tag = values.astype(np.int64) - 1
    ok = (values == np.round(values)) & (tag >= 0)
    return np.where(ok, tag // width, -1), np.where(ok, tag % width, -1)


@dataclass(frozen=True, eq=False)
class WgmmaProbe:
    """One wgmma shape and swizzle as the probe saw it: observed (row, col) per position of A (64, 16),
    B (16, N) and per (thread, register) of D (128, N/2), and the random product's verdict."""

    n: int
    mode: str
    descriptor_mode: str
    seen: dict
    random_product: bool
    mn_major: str = ""       # the operand laid out MN-major and read transposed ('A', 'B'), or none
    swapped: bool = False    # its descriptor's LBO and SBO exchanged (the MN-major control)

    @property
    def layout(self):
        return accumulator_layout(self.n)

    def expected(self, operand: str) -> tuple[np.ndarray, np.ndarray]:
        if operand == "D":
            return self.layout.row, self.layout.col
        shape = (WGMMA_M, K) if operand == "A" else (K, self.n)
        return np.indices(shape)

    def match(self, operand: str) -> bool:
        rows, cols = self.expected(operand)
        seen_rows, seen_cols = (np.asarray(x) for x in self.seen[operand])
        return bool(np.array_equal(rows, seen_rows) and np.array_equal(cols, seen_cols))

    @property
    def label(self) -> str:
        label = self.mode if self.descriptor_mode == self.mode else f"{self.mode} data, {self.descriptor_mode} descriptor"
        if self.mn_major:
            label += f", {MN_NAMES[self.mn_major]}" + (", LBO and SBO swapped" if self.swapped else "")
        return label


def observe_wgmma(n: int, mode: str, descriptor_mode: str | None = None, seed: int = 0, mn_major: str = "",
                  swapped: bool = False) -> WgmmaProbe:
    descriptor_mode = descriptor_mode or mode
    layout = accumulator_layout(n)
    experiments_a, experiments_b = [], []

    # D: positions as values.
    a = np.zeros((WGMMA_M, K)); a[:, 0] = np.arange(WGMMA_M); a[:, 1] = 1
    b = np.zeros((K, n)); b[0] = n; b[1] = np.arange(n) + 1
    experiments_a.append(a); experiments_b.append(b)
    # A: tags, N columns at a time (all 16 at once when N >= 16).
    tags_a = np.arange(WGMMA_M * K).reshape(WGMMA_M, K) + 1.0
    a_experiments = max(1, K // n)
    for j in range(a_experiments):
        experiments_a.append(tags_a); experiments_b.append(np.eye(K, n, -j * n))
    # B: tags, read through an identity in A's rows 0-15.
    tags_b = np.arange(K * n).reshape(K, n) + 1.0
    experiments_a.append(np.eye(WGMMA_M, K)); experiments_b.append(tags_b)
    # Random product.
    rng = np.random.default_rng(seed)
    ra, rb = rng.integers(-3, 4, (WGMMA_M, K)).astype(float), rng.integers(-3, 4, (K, n)).astype(float)
    experiments_a.append(ra); experiments_b.append(rb)

    regs = run_wgmma(n, np.array(experiments_a), np.array(experiments_b), mode, descriptor_mode, mn_major, swapped)
    d = [layout.scatter(r) for r in regs]
    seen = {"D": _decode(regs[0], n)}
    a_read = np.concatenate(d[1:1 + a_experiments], axis=1)[:, :K]
    seen["A"] = _decode(a_read, K)
    b_rows, b_cols = _decode(d[-2][:K], n)
    stray = np.any(d[-2][K:] != 0)
    seen["B"] = (np.where(stray, -1, b_rows), np.where(stray, -1, b_cols))
    product = bool(np.array_equal(d[-1], ra @ rb))
    return WgmmaProbe(n, mode, descriptor_mode, {op: tuple(x.tolist() for x in v) for op, v in seen.items()}, product,
                      mn_major, swapped)


def observe_every_wgmma() -> list[WgmmaProbe]:
    """Each probed N with each swizzle mode, then the control (which must MISMATCH)."""
    probes = [observe_wgmma(n, mode) for n in PROBE_N for mode in SWIZZLE_MODES]
    return probes + [observe_wgmma(n, *CONTROL) for n in PROBE_N]


def observe_mn_major_wgmma() -> list[WgmmaProbe]:
    """Each MN-major case (MN_CASES), then its control (which must MISMATCH)."""
    probes = [observe_wgmma(n, mode, mn_major=op) for n, op, mode in MN_CASES]
    n, op, mode = MN_CONTROL
    return probes + [observe_wgmma(n, mode, mn_major=op, swapped=True)]


def wgmma_verdict_table(probes) -> Table:
    """One row per WgmmaProbe: the instruction, the swizzle, A's, B's and D's layouts, the product."""
    return Table(["Instruction", "Swizzle", "A", "B", "D", "Random product"],
                 [[wgmma_instruction(p.n).removeprefix("wgmma.mma_async.sync.aligned."), p.label,
                   *(VERDICT[p.match(op)] for op in "ABD"), VERDICT[p.random_product]] for p in probes])


def wgmma_verdicts(mn_major: bool = False) -> Table | None:
    """wgmma_verdict_table of observe_every_wgmma (mn_major: of observe_mn_major_wgmma) on this GPU;
    elsewhere print the one line why not."""
    if reason := skipped():
        print(reason)
        return None
    return wgmma_verdict_table(observe_mn_major_wgmma() if mn_major else observe_every_wgmma())


def observation(probes) -> list[dict]:
    """WgmmaProbe list -> JSON-able records (tests/data/wgmma_<gpu>.json keeps the H100's)."""
    return [{"n": p.n, "mode": p.mode, "descriptor_mode": p.descriptor_mode, "seen": p.seen,
             "random_product": p.random_product, "mn_major": p.mn_major, "swapped": p.swapped} for p in probes]


def from_observation(records) -> list[WgmmaProbe]:
    """The probes of a recorded observation, to check against the layouts without a GPU."""
    return [WgmmaProbe(r["n"], r["mode"], r["descriptor_mode"], {op: tuple(v) for op, v in r["seen"].items()},
                       r["random_product"], r.get("mn_major", ""), r.get("swapped", False)) for r in records]


def report(out_dir=None) -> None:
    """Observe every wgmma case, K-major and MN-major, print the verdicts, and write the observation to
    <out_dir>/wgmma_<gpu>.json (default $OUT, else the current folder)."""
    info = device_info()
    probes = observe_every_wgmma() + observe_mn_major_wgmma()
    print(f"{info.name} ({info.arch})")
    print(wgmma_verdict_table(probes))
    path = observation_path("wgmma", out_dir)
    path.write_text(json.dumps({"device": info.name, "arch": info.arch, "probes": observation(probes)}) + "\n")
    print(f"observation written to {path}")
