"""The kernels of the book, as data: where each lives, how it is launched, what it accepts.

Pure module: the launch wrappers (tcgemm.gpu), the SASS tests and the bench all read this one table.
Operand convention of every GEMM kernel: C = A @ B with
  A: (M, K) float16, row-major (C-contiguous),
  B: (K, N) float16, column-major (Fortran-contiguous), i.e. B.T is a C-contiguous (N, K) array,
  C: (M, N) row-major, float32 (or float16 where out_dtype says so).
The C signature is  extern "C" __global__ void entry(const __half *A, const __half *B, OUT *C, int M, int N, int K)
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GemmKernel:
    key: str                 # short name used by the CLI and the bench table
    title: str               # the name the book uses
    source: str              # file in kernels/
    entry: str               # extern "C" function name
    block: tuple[int, int, int]
    tile_m: int              # M must be a multiple of this (one block computes tile_m x tile_n)
    tile_n: int
    tile_k: int              # K must be a multiple of this
    out_dtype: str = "float32"
    sass: tuple[str, ...] = ()   # instructions the book claims are in the compiled kernel

    def grid(self, M: int, N: int) -> tuple[int, int, int]:
        return (N // self.tile_n, M // self.tile_m, 1)

    @property
    def threads(self) -> int:
        x, y, z = self.block
        return x * y * z


@dataclass(frozen=True)
class ProbeKernel:
    source: str
    entries: tuple[str, ...]
    sass: tuple[str, ...]


GEMM_KERNELS: dict[str, GemmKernel] = {
    k.key: k
    for k in (
        GemmKernel(
            key="k1.0", title="Kernel 1.0: naive mma", source="01_naive_mma.cu",
            entry="naive_mma", block=(16, 16, 1), tile_m=32, tile_n=32, tile_k=16,
            sass=("HMMA.16816.F32",),
        ),
        GemmKernel(
            key="k1.1", title="Kernel 1.1: naive mma + 2x2 warp tiling", source="02_warp_tile_2x2.cu",
            entry="warp_tile_2x2", block=(16, 16, 1), tile_m=64, tile_n=64, tile_k=16,
            sass=("HMMA.16816.F32",),
        ),
        GemmKernel(
            key="hgemm", title="HGEMM: ldmatrix + mma, fp16 accumulate and output",
            source="03_ldmatrix_hgemm_f16.cu", entry="ldmatrix_hgemm_f16", block=(32, 1, 1),
            tile_m=16, tile_n=8, tile_k=16, out_dtype="float16",
            sass=("HMMA.16816.F16", "LDSM.16.M88.4", "LDSM.16.M88.2"),
        ),
        GemmKernel(
            key="k2.0", title="Kernel 2.0: permuted shared memory", source="04_permuted_smem.cu",
            entry="permuted_smem", block=(16, 16, 1), tile_m=64, tile_n=64, tile_k=32,
            sass=("HMMA.16816.F32", "LDSM.16.M88.4", "LDSM.16.M88.2", "LDG.E.128", "STS.128"),
        ),
        GemmKernel(
            key="k2.1", title="Kernel 2.1: permuted shared memory, fragments loaded once",
            source="05_permuted_smem_a_once.cu", entry="permuted_smem_a_once", block=(16, 16, 1),
            tile_m=64, tile_n=64, tile_k=32,
            sass=("HMMA.16816.F32", "LDSM.16.M88.4", "LDSM.16.M88.2", "LDG.E.128", "STS.128"),
        ),
    )
}

PROBES: dict[str, ProbeKernel] = {
    "mma": ProbeKernel(
        source="probe_mma.cu",
        entries=("probe_mma_m16n8k16_f32", "probe_mma_m16n8k16_f16",
                 "probe_mma_m16n8k8_f32", "probe_mma_m16n8k32_s32"),
        sass=("HMMA.16816.F32", "HMMA.16816.F16", "HMMA.1688.F32", "IMMA.16832.S8.S8"),
    ),
    "ceiling": ProbeKernel(
        source="probe_mma_ceiling.cu",
        entries=("mma_ceiling",),
        sass=("HMMA.16816.F32",),
    ),
    "ldmatrix": ProbeKernel(
        source="probe_ldmatrix.cu",
        entries=("probe_ldmatrix_x1", "probe_ldmatrix_x2", "probe_ldmatrix_x4",
                 "probe_ldmatrix_x1_trans", "probe_ldmatrix_x2_trans", "probe_ldmatrix_x4_trans"),
        sass=("LDSM.16.M88 ", "LDSM.16.M88.2", "LDSM.16.M88.4",
              "LDSM.16.MT88 ", "LDSM.16.MT88.2", "LDSM.16.MT88.4"),
    ),
}

# The architectures the book targets, with the shared memory one block may use (bytes, opt-in max).
TARGET_ARCHS = {"sm_80": 163 * 1024, "sm_86": 99 * 1024, "sm_89": 99 * 1024, "sm_90": 227 * 1024}


def all_sources() -> list[str]:
    """Every .cu file the catalog knows, in teaching order."""
    names = [k.source for k in GEMM_KERNELS.values()] + [p.source for p in PROBES.values()]
    return list(dict.fromkeys(names))
