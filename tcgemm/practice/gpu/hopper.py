"""The Hopper exercises checked on the GPU (see tcgemm.practice.gpu.hardware).

hopper.descriptor: wgmma itself says which descriptor reads each tile of the exercise. The tile (a swizzle
mode, K- or MN-major, its M or N and its K) is laid densely in that layout, with distinct fp16 values, into
the shared-memory image of kernels/probe_wgmma.cu, and one wgmma per candidate descriptor reads the tile's
first 16 of K against an identity, so that D is what it read: as A (64 rows of M), or as B with N = 128
where an MN-major tile is wider than 64 (so that the step from one atom to the next along N is read).
Each field is searched alone, the others as the model has them: the swizzle code over 0 to 3, LBO and SBO
over 16 x 2^j bytes. The hardware's value of a field is the one through which wgmma read the tile as it
lies. Where every value reads it alike (a field this tile does not use: LBO of a K-major swizzled tile, or
of an MN-major one a single atom wide) the hardware cannot tell and the model's value stands; the start
address is the case's own (the probe puts each tile at the start of its buffer and adds that address).
A candidate is launched only if every byte it may make wgmma read lies inside the operand's image
(Reading.stays_inside), whichever part the hardware gave its offsets.

Not checked on the GPU:
- hopper.tma_offset: a TMA copy of a tagged box would show where each element lands, but no kernel of the
  book copies a box back out of shared memory yet.
- hopper.operand_boxes: how a kernel cuts its stage tile into boxes is its own choice; the driver accepts
  many cuts, so the hardware has no single answer.
- hopper.full_parity, hopper.empty_parity: a kernel that waits on a wrong parity waits forever: never run.
- hopper.d_owner: the probe's widest wgmma has N = 128; the exercise's accumulator is N = 256.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

import numpy as np

from tcgemm.canonical import SWIZZLE_MODES, MatrixDescriptor, canonical_strides, descriptor, operand_layout, smem_image
from tcgemm.engine.catalog import PROBES
from tcgemm.engine.gpu.compile import get_arch_specific_function
from tcgemm.engine.gpu.device import device_info, require_gpu
from tcgemm.errors import UnsupportedOnGPUError
from tcgemm.hopper.gpu.wgmma import probe_entry, skipped
from tcgemm.hopper.wgmma import WARPGROUP_SIZE, WGMMA_M, accumulator_layout
from tcgemm.practice import exercise

DESCRIPTOR_KEY = "hopper.descriptor"
K = 16                          # of K one wgmma reads
WIDE_N = 128                    # the probe's N-major B entry: two 128B atoms along N
ROW_BYTES = 128                 # the probe's images: one 128-byte row per row of A (64) or of B (max(16, N))
STRIDES = tuple(16 << j for j in range(11))          # LBO and SBO candidates: 16 to 16384 bytes


def image_bytes(operand: str, n: int) -> int:
    """The bytes of operand A's or B's image that kernels/probe_wgmma.cu copies into shared memory."""
    return ROW_BYTES * (WGMMA_M if operand == "A" else max(16, n))


@dataclass(frozen=True)
class Reading:
    """How the probe reads one tile (mode, major, mn, k): as `operand` of a wgmma m64n<n>k16, the window
    (rows, cols) of the tile as it lies (K-major: rows of M by K; MN-major: rows of K by M or N)."""

    mode: str
    major: str
    mn: int
    k: int

    @property
    def operand(self) -> str:
        return "B" if self.major == "MN" and self.mn > WGMMA_M else "A"

    @property
    def n(self) -> int:
        return WIDE_N if self.operand == "B" else K

    @property
    def window(self) -> tuple[int, int]:
        if self.major == "K":
            return WGMMA_M, K
        return K, WGMMA_M if self.operand == "A" else self.n

    @property
    def entry(self) -> str:
        return probe_entry(self.n, self.operand if self.major == "MN" else "")

    @property
    def model(self) -> MatrixDescriptor:
        return descriptor(self.mode, self.mn, self.k, 0, 2, self.major)

    def tile(self) -> np.ndarray:
        """The tile as it lies (K-major mn x k, MN-major k x mn), every value a different fp16."""
        shape = (self.mn, self.k) if self.major == "K" else (self.k, self.mn)
        return distinct_fp16(shape[0] * shape[1]).reshape(shape)

    def read_offsets(self, desc: MatrixDescriptor, mode: str | None = None, exchanged: bool = False) -> np.ndarray:
        """The byte offset wgmma reads each element of the window from through `desc`, by the model; or as
        if the layout were `mode`, or LBO and SBO played each other's part (`exchanged`)."""
        lbo, sbo = desc.leading_byte_offset, desc.stride_byte_offset
        layout = operand_layout(mode or desc.swizzle, self.window, 2, *((sbo, lbo) if exchanged else (lbo, sbo)),
                                self.major)
        return layout(*np.indices(self.window))

    def stays_inside(self, desc: MatrixDescriptor) -> bool:
        """Whether every byte wgmma may read through `desc` lies inside the image of the operand it is read as:
        as the model reads it, and also with LBO and SBO in each other's part, and (K-major) with LBO stepping
        along K as in a layout without swizzle, so that a field the model says is unused is bounded too."""
        modes = (desc.swizzle, "none") if self.major == "K" else (desc.swizzle,)
        size = image_bytes(self.operand, self.n)
        for mode in modes:
            for exchanged in (False, True):
                offsets = self.read_offsets(desc, mode, exchanged)
                last_row = int(offsets.max()) // ROW_BYTES     # a swizzle permutes chunks within a 128-byte row
                if int(offsets.min()) < 0 or (last_row + 1) * ROW_BYTES > size:
                    return False
        return True

    def candidates(self) -> dict[str, list[tuple[int, MatrixDescriptor]]]:
        """Per searched field: (value, descriptor) of each candidate whose reads stay inside the image; the
        other fields as the model has them. The swizzle's value is its descriptor code."""
        model = self.model
        found = {"swizzle": [(SWIZZLE_MODES[m].descriptor_code, replace(model, swizzle=m)) for m in SWIZZLE_MODES],
                 "leading_byte_offset": [(v, replace(model, leading_byte_offset=v)) for v in STRIDES],
                 "stride_byte_offset": [(v, replace(model, stride_byte_offset=v)) for v in STRIDES]}
        return {field: [(v, d) for v, d in pairs if self.stays_inside(d)] for field, pairs in found.items()}


def distinct_fp16(count: int, seed: int = 0) -> np.ndarray:
    """`count` different fp16 values, 1/16 <= |x| < 2048 (normal, and exact through D = A x identity),
    shuffled."""
    bits = np.arange(0x2C00, 0x6800, dtype=np.uint16)      # exponent fields 11 to 25: 2^-4 to 2^10
    values = np.concatenate([bits, bits | 0x8000]).view(np.float16)
    if count > values.size:
        raise ValueError(f"at most {values.size} distinct values, asked for {count}")
    return np.random.default_rng(seed).permutation(values)[:count]


def _image(mode: str, matrix: np.ndarray, major: str, size: int) -> np.ndarray:
    """The dense canonical image of `matrix` (as it lies), cut or padded to the probe's `size` bytes."""
    image = smem_image(mode, matrix.astype(np.float16), major=major)
    out = np.zeros(size, dtype=np.uint8)
    out[:min(size, image.size)] = image[:size]
    return out


def _helper_descriptor(mode: str, rows: int) -> MatrixDescriptor:
    """The identity operand's descriptor: K-major, dense (the probe's own, which it checks)."""
    return MatrixDescriptor(0, *canonical_strides(mode, rows, K), mode)


def _operands(reading: Reading):
    """(A image, B image, the identity's descriptor, expected D) of the probe reading this tile."""
    r = reading
    tile = r.tile()
    rows, cols = r.window
    if not r.stays_inside(r.model):
        raise ValueError(f"the probe's image cannot hold the window read of {r}")
    mine = _image(r.mode, tile, r.major, image_bytes(r.operand, r.n))
    if r.operand == "A":                      # D = A x identity: A as wgmma reads it, 64 x 16
        identity = np.eye(K, dtype=np.float16)
        window = tile[:rows, :cols] if r.major == "K" else tile[:rows, :cols].T
        other, helper = _image(r.mode, identity, "K", image_bytes("B", r.n)), _helper_descriptor(r.mode, r.n)
        return mine, other, helper, window.astype(np.float32)
    identity = np.eye(WGMMA_M, K, dtype=np.float16)    # D = identity x B: rows 0-15 are B, the rest 0
    expected = np.zeros((WGMMA_M, r.n), dtype=np.float32)
    expected[:K] = tile[:rows, :cols]
    other, helper = _image(r.mode, identity, "K", image_bytes("A", r.n)), _helper_descriptor(r.mode, WGMMA_M)
    return other, mine, helper, expected


@dataclass(frozen=True)
class FieldSearch:
    """What wgmma read through each candidate value of each searched field for one tile: `passed` the values
    through which it read the tile as it lies (swizzle: descriptor codes; offsets: bytes)."""

    reading: Reading
    passed: dict[str, tuple[int, ...]]
    tried: dict[str, tuple[int, ...]]

    def value(self, field: str) -> int:
        """The hardware's value of `field`: the one value that read the tile; the model's where every value
        tried did (a field this tile does not use)."""
        model = _value(self.reading.model, field)
        passed = self.passed[field]
        if not passed:
            raise RuntimeError(f"wgmma read {self.reading} through none of {field} = {self.tried[field]}: "
                               f"the probe or the model is wrong")
        return model if len(passed) > 1 and model in passed else passed[0]

    def word(self, address: int) -> int:
        by_code = {m.descriptor_code: name for name, m in SWIZZLE_MODES.items()}
        return MatrixDescriptor(address, self.value("leading_byte_offset"), self.value("stride_byte_offset"),
                                by_code[self.value("swizzle")]).encode()


def _value(desc: MatrixDescriptor, field: str) -> int:
    return SWIZZLE_MODES[desc.swizzle].descriptor_code if field == "swizzle" else getattr(desc, field)


def search_fields(reading: Reading) -> FieldSearch:
    """Run the probe's wgmma once per candidate (Reading.candidates) and keep the values that read the tile."""
    if reason := skipped():
        raise UnsupportedOnGPUError(reason)
    cupy = require_gpu()
    a, b, helper, expected = _operands(reading)
    a, b = cupy.asarray(a), cupy.asarray(b)
    kernel = get_arch_specific_function(PROBES["wgmma"].source, reading.entry)
    d = cupy.zeros((WARPGROUP_SIZE, reading.n // 2), dtype=np.float32)
    layout = accumulator_layout(reading.n)
    passed, tried = {}, {}
    for field, pairs in reading.candidates().items():
        ok = []
        for value, desc in pairs:
            desc_a, desc_b = (desc, helper) if reading.operand == "A" else (helper, desc)
            d.fill(np.nan)
            kernel((1,), (WARPGROUP_SIZE,), (a, b, np.uint64(desc_a.encode()), np.uint64(desc_b.encode()), d))
            if np.array_equal(layout.scatter(cupy.asnumpy(d)), expected):
                ok.append(value)
        passed[field], tried[field] = tuple(ok), tuple(v for v, _ in pairs)
    return FieldSearch(reading, passed, tried)


def descriptor_readings() -> list[Reading]:
    """The distinct tiles of the descriptor exercise's cases (their addresses aside)."""
    return list(dict.fromkeys(Reading(*args[:4]) for args, _ in exercise(DESCRIPTOR_KEY).cases()))


@cache
def _descriptor_truth():
    searches = {(r.mode, r.major, r.mn, r.k): search_fields(r) for r in descriptor_readings()}

    def truth(mode, major, mn, k, address):
        return searches[mode, major, mn, k].word(address)

    return truth, f"wgmma (kernels/probe_wgmma.cu) on the {device_info().name}"


TRUTHS = {DESCRIPTOR_KEY: _descriptor_truth}
