"""tcgemm.arch's table against the driver of the GPU the tests run on, and the configuration the
launcher picks here against the one the catalog picks for this architecture offline."""
import pytest

from tcgemm.arch import ARCH_LIMITS
from tcgemm.engine.catalog import GEMM_KERNELS, configured

pytestmark = pytest.mark.gpu


def test_the_driver_reports_the_tables_limits():
    import cupy

    from tcgemm.engine.gpu.device import device_info

    info = device_info()
    if info.arch not in ARCH_LIMITS:
        pytest.skip(f"{info.arch} is not a target architecture of the book")
    lim = ARCH_LIMITS[info.arch]
    attrs = cupy.cuda.Device().attributes
    assert info.shared_mem_per_block_optin == lim.max_smem_per_block
    assert attrs["MaxSharedMemoryPerMultiprocessor"] == lim.smem_per_sm
    assert attrs["ReservedSharedMemoryPerBlock"] == lim.smem_reserved_per_block
    assert attrs["MaxRegistersPerMultiprocessor"] == lim.registers_per_sm
    assert attrs["MaxThreadsPerMultiProcessor"] == 32 * lim.max_warps_per_sm
    assert attrs["MaxBlocksPerMultiprocessor"] == lim.max_blocks_per_sm
    assert attrs["MaxThreadsPerBlock"] == lim.max_threads_per_block


def test_the_launcher_configures_each_kernel_as_the_catalog_does_for_this_arch():
    from tcgemm.engine.gpu.device import device_info
    from tcgemm.engine.gpu.gemm import for_this_gpu

    arch = device_info().arch
    if arch not in ARCH_LIMITS:
        pytest.skip(f"{arch} is not a target architecture of the book")
    for key, kernel in GEMM_KERNELS.items():
        if kernel.unsupported(arch) is None:     # Kernel 5.0 runs on sm_90 only
            assert for_this_gpu(kernel) == configured(key, arch), key
