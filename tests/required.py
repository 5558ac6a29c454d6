"""Tests that need a tool this machine may lack (nvcc and cuobjdump, an NVRTC, Chromium, Node.js) skip
with the reason, unless the tool's TCGEMM_REQUIRE_* variable is 1, when they fail instead: .ci/run sets
TCGEMM_REQUIRE_NVCC, _NVRTC, _BROWSER and _NODE, so in CI nothing skips for want of a tool."""
from __future__ import annotations

import os
from typing import NoReturn

import pytest

from tcgemm.engine.gpu.nvrtc_offline import cuda_tool


def skip_or_fail(variable: str, reason: str) -> NoReturn:
    """Skip the test with `reason`, or fail it with `reason` where the environment sets `variable` to 1."""
    if os.environ.get(variable) == "1":
        pytest.fail(f"{reason}; {variable}=1 makes this a failure")
    pytest.skip(reason)


def require_cuda_tool(name: str) -> str:
    """The path of the CUDA tool `name` (nvcc, cuobjdump, ...), else skip_or_fail (TCGEMM_REQUIRE_NVCC)."""
    path = cuda_tool(name)
    if path is None:
        skip_or_fail("TCGEMM_REQUIRE_NVCC",
                     f"{name} not found (pip install -r requirements-test.txt, or a CUDA toolkit on PATH)")
    return path
