"""Occupancy read from the compiled kernel: its registers and shared memory as the driver reports
them, the model of tcgemm.pipelines.occupancy applied to them, and the driver's own answer to compare."""
from __future__ import annotations

from dataclasses import dataclass

from tcgemm.engine.kernel_types import GemmKernel
from tcgemm.pipelines.occupancy import Occupancy, occupancy
from tcgemm.engine.gpu.device import device_info, require_gpu
from tcgemm.engine.gpu.gemm import kernel_function


@dataclass(frozen=True)
class CompiledOccupancy:
    spec: GemmKernel
    registers: int          # per thread
    static_smem: int        # bytes, __shared__ arrays
    dynamic_smem: int       # bytes, the launch's dynamic shared memory
    local_bytes: int        # per thread; nonzero means spills
    model: Occupancy
    driver_blocks_per_sm: int

    @property
    def agrees(self) -> bool:
        return self.model.blocks_per_sm == self.driver_blocks_per_sm


def compiled_occupancy(spec: GemmKernel) -> CompiledOccupancy:
    cupy = require_gpu()
    fn = kernel_function(spec)
    info = device_info()
    smem = fn.shared_size_bytes + spec.smem_bytes
    model = occupancy(info.arch, spec.threads, fn.num_regs, smem)
    driver = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(fn.kernel.ptr, spec.threads, spec.smem_bytes)
    return CompiledOccupancy(spec, fn.num_regs, fn.shared_size_bytes, spec.smem_bytes,
                             fn.local_size_bytes, model, int(driver))
