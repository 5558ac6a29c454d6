"""The kinds that say how a kernel is launched (tcgemm.engine.kernel_types.Signature, Schedule) agree with the
kernels' sources, and every signature has its launch builder in tcgemm.engine.gpu.gemm, the tensor maps' one
registered by tcgemm.engine.gpu.tma, which the launcher does not import itself (no GPU needed)."""
import re
import subprocess
import sys

import pytest

from tcgemm import KERNEL_DIR, ROOT
from tcgemm.engine.catalog import GEMM_KERNELS, WMMA_KERNELS
from tcgemm.engine.kernel_types import Schedule, Signature

KERNELS = list(GEMM_KERNELS.values()) + list(WMMA_KERNELS.values())


def declaration(spec) -> tuple[str, list[str]]:
    """The attributes before the entry point's name and its parameters, as its source declares them."""
    text = (KERNEL_DIR / spec.source).read_text()
    found = re.search(r'extern "C" __global__ void ([^;{]*?)\b' + spec.entry + r"\(([^)]*)\)", text)
    assert found, f"no extern \"C\" {spec.entry} in kernels/{spec.source}"
    return found.group(1), [p.strip() for p in found.group(2).split(",")]


@pytest.mark.parametrize("spec", KERNELS, ids=lambda s: s.key)
def test_the_signature_is_the_entry_points(spec):
    attributes, params = declaration(spec)
    assert len(params) == spec.signature.value.count(",") + 1, (spec.key, params)
    maps = sum("TensorMap" in p for p in params)
    assert maps == {Signature.TENSOR_MAPS: 2, Signature.TENSOR_MAPS_AND_C: 3, Signature.STREAM_K: 3}.get(spec.signature, 0), spec.key
    cluster = re.search(r"__cluster_dims__\((\w+)", attributes)
    if getattr(spec, "cluster_shapes", ()):     # the shape compiled in: CLUSTER = CLUSTER_M * CLUSTER_N
        assert cluster.group(1) == "CLUSTER" and ("CLUSTER_N", spec.cluster_n) in spec.defines, spec.key
    else:
        assert (int(cluster.group(1)) if cluster else 1) == spec.schedule.cluster, spec.key


def test_the_kinds_say_one_thing_each():
    assert {s for s in Signature if s.scaled} == {Signature.BLAS, Signature.WMMA}
    assert [s.persistent for s in Schedule] == [False, True, True] and Schedule.CLUSTERS.cluster == 2
    assert {k.key for k in GEMM_KERNELS.values() if k.schedule.persistent} == {"k5.4", "k5.5", "k5.6", "k5.7", "k5.8", "k5.9", "k5.10", "k5.11", "k5.12", "k5.13", "k5.14", "k5.15"}


def test_every_signature_has_a_builder_and_the_launcher_imports_no_tma_module():
    code = ("import sys; import tcgemm.engine.gpu.gemm as g; "
            "before = sorted(m for m in ('tcgemm.engine.tma', 'tcgemm.engine.gpu.tma') if m in sys.modules); "
            "from tcgemm.engine.kernel_types import Signature; "
            "built = {k.name: g.builder(k).__module__ for k in Signature}; print(before, built)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    before, built = done.stdout.strip().split(" ", 1)
    assert before == "[]"
    assert eval(built) == {"PLAIN": "tcgemm.engine.gpu.gemm", "BLAS": "tcgemm.engine.gpu.gemm", "WMMA": "tcgemm.engine.gpu.gemm",
                           "TENSOR_MAPS": "tcgemm.engine.gpu.tma", "TENSOR_MAPS_AND_C": "tcgemm.engine.gpu.tma",
                           "STREAM_K": "tcgemm.engine.gpu.tma"}
