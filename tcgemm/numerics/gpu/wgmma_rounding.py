"""How wgmma rounds: the numerics chapter's rounding cases (tcgemm.numerics.rounding) run through Hopper's warpgroup
MMA, with f16 and with e4m3 inputs and an fp32 accumulator (kernels/probe_wgmma_rounding.cu).

Each case is one wgmma m64n8k<k>: A holds the case's a in all 64 rows and B its b in all 8 columns, both
K-major in shared memory without swizzle (images by tcgemm.canonical.smem_image, descriptors by
MatrixDescriptor), and the accumulators start at the case's C (scale-d 1). wgmma's k is that of an mma.sync
type (16 for f16, 32 for e4m3), so the cases and hypotheses of that type are the ones
tcgemm.numerics.rounding.verdict tells apart. D comes back through wgmma's accumulator layout
(tcgemm.hopper.wgmma): its 64 rows are four copies of mma.sync's 16, and all 512 entries must agree.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcgemm.engine.catalog import PROBES
from tcgemm.numerics.elements import encode
from tcgemm.errors import UnsupportedOnGPUError
from tcgemm.hopper.wgmma import WARPGROUP_SIZE, WGMMA_M, accumulator_layout, wgmma_shape
from tcgemm.engine.gpu.compile import current_arch, get_arch_specific_function
from tcgemm.engine.gpu.device import require_gpu
from tcgemm.hopper.gpu.wgmma import skipped
from tcgemm.numerics.rounding import MMA_TYPES, MmaType, cases, verdict, verdict_table
from tcgemm.canonical import MatrixDescriptor, canonical_strides, smem_image
from tcgemm.table import Table

N = 8
_SOURCE = PROBES["wgmma_rounding"].source


@dataclass(frozen=True)
class WgmmaRounding:
    """One wgmma the probe runs: its input type (PTX name and tcgemm.numerics.elements name), its entry in
    kernels/probe_wgmma_rounding.cu, and the mma.sync type of the same k whose cases it runs."""
    ab: str
    element: str
    entry: str
    mma: MmaType

    @property
    def k(self) -> int:
        return self.mma.k

    @property
    def label(self) -> str:
        return f"{wgmma_shape(N, self.ab)}, {self.mma.label}"


WGMMA_ROUNDING = (
    WgmmaRounding("f16", "fp16", "wgmma_rounding_f16_f32", MMA_TYPES["fp16 -> fp32"]),
    WgmmaRounding("e4m3", "e4m3", "wgmma_rounding_e4m3_f32", MMA_TYPES["e4m3 -> fp32"]),
)


def _image(matrix: np.ndarray, w: WgmmaRounding) -> np.ndarray:
    """(rows, k) exact values, K-major, as the bytes of a no-swizzle shared-memory tile of w's input type."""
    values = encode(matrix, w.element)
    return smem_image("none", values, elem_bytes=values.dtype.itemsize)


def _descriptor(rows: int, w: WgmmaRounding) -> int:
    lbo, sbo = canonical_strides("none", rows, w.k, elem_bytes=1 if w.ab == "e4m3" else 2)
    return MatrixDescriptor(0, lbo, sbo, "none").encode()


def observe(w: WgmmaRounding, case_list=None) -> np.ndarray:
    """Run each case (tcgemm.numerics.rounding.cases of w.mma) as one wgmma; return every entry of its D,
    (cases, 512) values (64 rows x 8 columns). UnsupportedOnGPUError on a GPU other than sm_90."""
    if reason := skipped():
        raise UnsupportedOnGPUError(reason)
    cupy = require_gpu()
    case_list = cases(w.mma) if case_list is None else case_list
    layout = accumulator_layout(N, w.ab)
    a_images = np.stack([_image(np.tile(np.array(c.a, dtype=np.float64), (WGMMA_M, 1)), w) for c in case_list])
    b_images = np.stack([_image(np.tile(np.array(c.b, dtype=np.float64), (N, 1)), w) for c in case_list])
    c_registers = np.array([layout.gather(np.full((WGMMA_M, N), float(c.c))) for c in case_list], dtype=np.float32)
    d = cupy.zeros((len(case_list), WARPGROUP_SIZE, N // 2), dtype=np.float32)
    kernel = get_arch_specific_function(_SOURCE, w.entry)
    kernel((len(case_list),), (WARPGROUP_SIZE,),
           (cupy.asarray(a_images), cupy.asarray(b_images), cupy.asarray(c_registers),
            np.uint64(_descriptor(WGMMA_M, w)), np.uint64(_descriptor(N, w)), d))
    values = cupy.asnumpy(d).astype(np.float64)
    return np.array([layout.scatter(v) for v in values]).reshape(len(case_list), -1)


def wgmma_rounding_verdicts() -> list:
    """tcgemm.numerics.rounding.verdict of each WGMMA_ROUNDING wgmma on this GPU (sm_90 only)."""
    return [verdict(w.mma, observe(w)) for w in WGMMA_ROUNDING]


def wgmma_rounding_table(verdicts=None, arch: str | None = None) -> Table | None:
    """What this GPU's wgmma does, per input type, as tcgemm.numerics.rounding.verdict_table says it for mma.sync
    (`verdicts`: those of WGMMA_ROUNDING's wgmma measured on `arch`, default: measured now); elsewhere
    than on sm_90, print the one line why not and return None."""
    if verdicts is None:
        if reason := skipped():
            print(reason)
            return None
        verdicts = wgmma_rounding_verdicts()
    table = verdict_table(verdicts)
    rows = [[w.label, *row[1:]] for w, row in zip(WGMMA_ROUNDING, table.rows)]
    agree = [f"{w.label}: all {WGMMA_M * N} entries of D agree in every case" if not v.disagreeing_cases else
             f"{w.label}: the {WGMMA_M * N} entries of D disagree in {v.disagreeing_cases} of {len(cases(w.mma))} cases"
             for w, v in zip(WGMMA_ROUNDING, verdicts)]
    return Table(["wgmma", *table.columns[1:]], rows, notes=agree,
                 caption=f"How wgmma rounds on this GPU ({arch or current_arch()}), fp32 accumulator, one wgmma per case")
