"""tcgemm.matmul's elementwise pass (tcgemm.engine.gpu.matmul.epilogue_source) without a GPU: every D type,
with and without a C, compiles with NVRTC for sm_90; a split K's partials are added in order from zero, as
reduce_splits adds them, and an unsplit C is read as it is."""
import re

import pytest

from tcgemm.engine.gpu.matmul import epilogue_source
from tcgemm.engine.gpu.nvrtc_offline import compile_source_text, find_toolkit
from required import skip_or_fail

OUT_DTYPES = ("float32", "float16", "bfloat16", "int32")


@pytest.mark.parametrize("out_dtype", OUT_DTYPES)
@pytest.mark.parametrize("with_c", [False, True])
def test_every_pass_compiles(out_dtype, with_c):
    kit = find_toolkit(13)
    if kit is None:
        skip_or_fail("TCGEMM_REQUIRE_NVRTC", "no NVRTC 13 with its headers")
    assert compile_source_text(epilogue_source(out_dtype, with_c), "epilogue.cu", "sm_90", (), kit)


@pytest.mark.parametrize("out_dtype", OUT_DTYPES)
def test_the_partials_are_added_in_order_from_zero_and_c_only_where_asked(out_dtype):
    plain, with_c = epilogue_source(out_dtype, False), epilogue_source(out_dtype, True)
    for source in (plain, with_c):
        assert "s = splits == 1 ? t[i] : " in source and "for (int z = splits == 1; z < splits; ++z) s += t[z * n + i];" in source
        assert re.search(r"\balpha \* (\(unsigned\))?s\b", source)
    assert "beta" in with_c.split("s += t[z * n + i];")[1] and "c[i]" in with_c.split("s += t[z * n + i];")[1]
    assert "c[i]" not in plain.split("s += t[z * n + i];")[1]
