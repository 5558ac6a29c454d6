"""tcgemm.matmul on the GPU: every memory-order case of A and B (the dispatched kernel: 5.9 or 4.7 for
fp16, Kernel D1's int8 build for int8, exact) on odd shapes, on views with offsets (aligned and not), with
alpha, beta and C, every tile plan and split of Kernel 4.7, in place; every output type, PyTorch tensors
(bf16 and fp8 too), fp32 as tf32, streams, CUDA graphs; and every bad input's error."""
import numpy as np
import pytest

from tcgemm.engine.catalog import WMMA_CASES
from tcgemm.errors import OperandError
from tcgemm.engine.plan import TILES

pytestmark = pytest.mark.gpu

CASES = list(WMMA_CASES)
# Odd M, N and K (edges inside a 16-byte chunk), one row or column, K shorter than one tile, a whole tile.
SHAPES = [(129, 257, 75), (1000, 1003, 1007), (1, 515, 33), (77, 1, 130), (5, 9, 3), (256, 256, 256)]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("offset", [0, 8, 3])
def test_every_case_and_offset_matches_the_reference(case, offset):
    from tcgemm.engine.gpu.matmul import check_matmul_order
    for mnk in SHAPES:
        for alpha, beta in ((1, 0), (2, -0.5)):
            result = check_matmul_order(case, *mnk, alpha, beta, offset=offset)
            assert result.passed, f"{case} {mnk} offset {offset} alpha={alpha} beta={beta}: {result}"


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("tile", [t.name for t in TILES])
def test_every_tile_and_split_in_every_case(case, tile):
    from tcgemm.engine.gpu.matmul import check_matmul_order
    for splits in (1, 3):
        result = check_matmul_order(case, 129, 257, 200, 1.5, 2, tile=f"{tile}/{splits}")
        assert result.passed, f"{case} {tile}/{splits}: {result}"


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("offset", [0, 1])
def test_int8_runs_kernel_d1_exact_at_odd_shapes(case, offset):
    """Kernel D1's int8 build in every memory-order case (an operand in the other order copied into D1's),
    K of any length (padded to 16 bytes by the launcher), with and without the int32 epilogue pass."""
    import tcgemm
    from tcgemm.engine.gpu.matmul import check_matmul_order
    for mnk in ((129, 257, 75), (48, 80, 32), (3, 5, 700), (1, 515, 33), (77, 1, 130), (300, 520, 1000)):
        assert tcgemm.plan(*mnk, "int8").key == "d1"
        for alpha, beta in ((1, 0), (3, -2)):
            result = check_matmul_order(case, *mnk, alpha, beta, dtype="int8", offset=offset)
            assert result.passed, f"int8 {case} {mnk} offset {offset} alpha={alpha} beta={beta}: {result}"


def test_int8_in_place_and_through_kernel_w1_1_on_request():
    import cupy
    import tcgemm
    from tcgemm.engine.gpu.gemm import reference
    from tcgemm.engine.gpu.matmul import case_operands
    A, B, C = case_operands("A B", 129, 70, 75, dtype="int8")
    ref = reference(A, B, C, 2, 5)
    out = tcgemm.matmul(A, B, out=C, alpha=2, beta=5, C=C)
    assert out is C and bool(cupy.all(C == ref))
    D = tcgemm.matmul(A, B, kernel="w1.1")
    assert D.dtype == np.int32 and bool(cupy.all(D == reference(A, B)))
    with pytest.raises(OperandError, match="alpha=0.5: int8 inputs take integer alpha and beta in int32's range"):
        tcgemm.matmul(A, B, alpha=0.5)
    with pytest.raises(OperandError, match="int8 inputs give a int32 C, not float32"):
        tcgemm.matmul(A, B, out_dtype="float32")
    with pytest.raises(OperandError, match="out must be a row-major \\(129, 70\\) int32"):
        tcgemm.matmul(A, B, out=cupy.empty((70, 129), dtype=np.int32))


def test_int8_with_a_copied_operand_is_captured_in_a_cuda_graph():
    """B row-major: copied into Kernel D1's column-major order on the call's stream, in a buffer kept from
    the call before, so that a captured call allocates nothing and replays the copy."""
    import cupy
    import tcgemm
    from tcgemm.engine.gpu.gemm import reference
    from tcgemm.engine.gpu.matmul import case_operands
    A, B, _ = case_operands("A B", 200, 136, 96, dtype="int8")
    out = cupy.empty((200, 136), dtype=np.int32)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        tcgemm.matmul(A, B, out=out)
        stream.synchronize()
        stream.begin_capture()
        tcgemm.matmul(A, B, out=out)
        graph = stream.end_capture()
        B[...] = -B                           # the replay reads B anew, through the copy
        out[...] = 0
        graph.launch()
    stream.synchronize()
    assert bool(cupy.all(out == reference(A, B)))


def test_aligned_operands_are_not_copied_and_unaligned_ones_are():
    import cupy
    from tcgemm.engine.gpu.gemm import for_this_gpu, kernel_spec, prepare
    from tcgemm.engine.gpu.matmul import case_operands
    spec = for_this_gpu(kernel_spec("k4.7"))
    for case, (a, b) in WMMA_CASES.items():
        A, B, _ = case_operands(case, 256, 384, 512)
        assert prepare(spec.with_orders(a, b), A, B).staged == ()
        A, B, _ = case_operands(case, 256, 384, 512, offset=3)
        assert prepare(spec.with_orders(a, b), A, B).staged == ("A", "B")
        A, B, _ = case_operands(case, 257, 385, 513)    # tight rows of an odd length
        staged = prepare(spec.with_orders(a, b), A, B).staged
        assert staged == ("A", "B"), (case, staged)
    A = cupy.ones((64, 64), dtype=np.float16)[1:]         # a row-major view one row in: aligned
    assert prepare(spec, A, cupy.ones((64, 40), dtype=np.float16, order="F")).staged == ()


def test_row_major_cupy_arrays_and_transposed_views():
    import cupy
    import tcgemm
    rng = cupy.random.default_rng(1)
    A = (rng.random((300, 200), dtype=np.float32) - 0.5).astype(np.float16)
    B = (rng.random((200, 170), dtype=np.float32) - 0.5).astype(np.float16)
    ref = A.astype(np.float32) @ B.astype(np.float32)
    for a, b in ((A, B), (cupy.ascontiguousarray(A.T).T, B), (A, cupy.ascontiguousarray(B.T).T)):
        D = tcgemm.matmul(a, b)
        assert D.dtype == np.float16 and D.flags.c_contiguous      # A @ B's type, as in NumPy and CuPy
        assert float(cupy.abs(D.astype(np.float32) - ref).max()) < 1e-2
        assert tcgemm.matmul(a, b, out_dtype="float32").dtype == np.float32
    Dt = tcgemm.matmul(B.T, A.T, out_dtype="float32")     # (A B)^T from the transposed views
    assert float(cupy.abs(Dt - ref.T).max()) < 1e-2


def test_a_short_m_against_a_long_n_runs_kernel_5_13_on_the_product_turned_round():
    """M of 64 to 128 against N of 49 tile pairs or more: C^T = B^T A^T, written column-major into D, in
    every memory-order case, both output types, into a new D and into out=; alpha and beta are refused."""
    import cupy
    import tcgemm
    from tcgemm.engine.gpu.gemm import check_output, reference
    from tcgemm.engine.gpu.matmul import case_operands, chosen
    M, N, K = 100, 12801, 200
    assert chosen(M, N, K).label == "k5.13/128" and chosen(64, N, K).label == "k5.13/64"
    assert chosen(M, N, K, out_dtype="float32").label == "k5.13/128" and chosen(M, N, K, scaled=True).key != "k5.13"
    for case in CASES:
        A, B, _ = case_operands(case, M, N, K)
        ref = reference(A, B)
        for out_dtype in ("float16", "float32"):
            D = tcgemm.matmul(A, B, out_dtype=out_dtype)
            assert D.flags.c_contiguous and D.dtype == out_dtype and D.shape == (M, N)
            assert check_output(D, ref, accumulator="float32").passed, (case, out_dtype)
        out = cupy.full((M, N), np.nan, dtype=np.float16)
        assert tcgemm.matmul(A, B, out=out) is out and check_output(out, ref, accumulator="float32").passed, case
    with pytest.raises(OperandError, match="Kernel 5.13.*turned round and takes no alpha, beta or C"):
        tcgemm.matmul(A, B, alpha=2, kernel="k5.13")
    with pytest.raises(OperandError, match=r"out has shape|out .*\(100, 12801\)"):
        tcgemm.matmul(A, B, out=cupy.empty((N, M), np.float16))


def test_out_may_be_c_in_place():
    import cupy
    import tcgemm
    from tcgemm.engine.gpu.matmul import case_operands
    A, B, C = case_operands("A B", 200, 136, 96)
    ref = 2 * (A.astype(np.float32) @ B.astype(np.float32)) + 3 * C
    out = tcgemm.matmul(A, B, out=C, alpha=2, beta=3, C=C)
    assert out is C and float(cupy.abs(C - ref).max()) < 1e-2


def test_bad_inputs_get_clear_errors():
    import cupy
    import tcgemm
    A = cupy.ones((64, 32), dtype=np.float16)
    B = cupy.ones((32, 48), dtype=np.float16)
    wide = cupy.ones((64, 64), dtype=np.float16)
    with pytest.raises(OperandError, match="non-contiguous"):
        tcgemm.matmul(wide[:, ::2], B)
    with pytest.raises(OperandError, match="takes float16, bfloat16, int8, float8_e4m3fn, float8_e5m2 inputs "
                                           r"\(float32 with allow_tf32=True\), got float32: pass allow_tf32=True"):
        tcgemm.matmul(A.astype(np.float32), B.astype(np.float32))
    with pytest.raises(OperandError, match="got uint8 .*torch.float8_e4m3fn"):
        tcgemm.matmul(A.astype(np.uint8), B.astype(np.uint8))
    with pytest.raises(OperandError, match="A is float16 and B is int8"):
        tcgemm.matmul(A, B.astype(np.int8))
    with pytest.raises(OperandError, match="float16 inputs give a float16 or float32 C, not int32"):
        tcgemm.matmul(A, B, out_dtype="int32")
    with pytest.raises(OperandError, match="inner dimensions"):
        tcgemm.matmul(A, B[:16])
    with pytest.raises(OperandError, match="beta=2 needs a C"):
        tcgemm.matmul(A, B, beta=2)
    with pytest.raises(OperandError, match="C must be a row-major \\(64, 48\\) float16"):
        tcgemm.matmul(A, B, beta=1, C=cupy.ones((48, 64), dtype=np.float32))
    with pytest.raises(OperandError, match="not uint16"):
        tcgemm.matmul(A, B, out=cupy.empty((64, 48), dtype=np.uint16))
    with pytest.raises(OperandError, match="out must be a row-major \\(64, 48\\) float16"):
        tcgemm.matmul(A, B, out=cupy.empty((48, 64), dtype=np.float16))
    buffer = cupy.zeros(64 * 48 * 2, dtype=np.float32)
    with pytest.raises(OperandError, match="C overlaps out"):
        tcgemm.matmul(A, B, out=buffer[:64 * 48].reshape(64, 48), beta=1, C=buffer[8:8 + 64 * 48].reshape(64, 48))
    with pytest.raises(OperandError, match="host memory"):
        tcgemm.matmul(cupy.asnumpy(A), B)
    with pytest.raises(OperandError, match="needs it column-major"):
        tcgemm.matmul(A, B, kernel="k4.6")


def _torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    return torch


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_torch_tensors_come_back_as_tensors_without_a_copy(dtype):
    import tcgemm
    from tcgemm.engine.gpu.compile import current_arch
    torch = _torch()
    if dtype == "bfloat16" and current_arch() != "sm_90":
        pytest.skip("bf16 runs on sm_90 (Kernel 5.9)")
    kind = getattr(torch, dtype)
    A = torch.rand(300, 520, device="cuda", dtype=kind) - 0.5
    B = (torch.rand(200, 520, device="cuda", dtype=kind) - 0.5).T      # column-major
    ref = A.double() @ B.double()
    D = tcgemm.matmul(A, B)
    assert isinstance(D, torch.Tensor) and D.dtype == kind and D.shape == (300, 200)
    assert float((D.double() - ref).abs().max() / ref.abs().max()) < (1e-2 if dtype == "bfloat16" else 2e-3)
    out = torch.empty(300, 200, device="cuda", dtype=torch.float32)
    assert tcgemm.matmul(A, B, out=out) is out and float((out.double() - ref).abs().max()) < 1e-3


def test_torch_inputs_that_cannot_be_operands_are_named():
    import tcgemm
    torch = _torch()
    A = torch.ones(64, 32, dtype=torch.float16)
    B = torch.ones(32, 48, device="cuda", dtype=torch.float16)
    with pytest.raises(OperandError, match="A is a PyTorch tensor in host memory"):
        tcgemm.matmul(A, B)
    with pytest.raises(OperandError, match="bool tensor"):
        tcgemm.matmul(A.cuda().bool(), B)
    with pytest.raises(OperandError, match="float32"):
        tcgemm.matmul(A.cuda().float(), B.float())
    fp8 = torch.ones(64, 32, dtype=torch.float8_e4m3fn)
    with pytest.raises(OperandError, match="A is a PyTorch tensor in host memory"):
        tcgemm.matmul(fp8, B.to(torch.float8_e4m3fn))
    with pytest.raises(OperandError, match="A is float8_e4m3fn and B is float8_e5m2"):
        tcgemm.matmul(fp8.cuda(), B.to(torch.float8_e5m2))


FP8 = ["float8_e4m3fn", "float8_e5m2"]
# (A column-major, B column-major): every order, the copy into Kernel D1's where it needs one.
ORDERS = [(False, True), (False, False), (True, True), (True, False)]


def _fp8(torch, dtype, rows, cols, column_major, seed):
    """A random (rows, cols) fp8 tensor of values in [-1, 1), row- or column-major."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    shape = (cols, rows) if column_major else (rows, cols)
    x = (torch.rand(*shape, device="cuda", generator=g) * 2 - 1).to(getattr(torch, dtype))
    return x.T if column_major else x


def _skip_without_fp8():
    from tcgemm.engine.gpu.compile import current_arch
    if int(current_arch()[3:]) < 89:
        pytest.skip("fp8 mma.sync needs sm_89 or later (test_fp8_is_refused_before_sm_89 covers this GPU)")


def _checked(torch, D, ref, K: int):
    """D (a tensor of fp32, fp16 or bf16) against the fp64 reference, under the fp32 accumulator's tolerance
    for sums of K terms (tcgemm.engine.gpu.gemm.check_output, as tests/gpu/test_kernel_d1.py checks D1),
    a 16-bit D allowed its final rounding."""
    from tcgemm.engine.gpu.gemm import check_output
    held = D.view(torch.int16).cpu().numpy().view(np.uint16) if D.dtype == torch.bfloat16 else D.cpu().numpy()
    return check_output(held, ref.cpu().numpy(), K, accumulator="float32")


@pytest.mark.parametrize("dtype", FP8)
@pytest.mark.parametrize("a_col, b_col", ORDERS)
def test_fp8_tensors_run_kernel_d1_in_every_order(dtype, a_col, b_col):
    import tcgemm
    torch = _torch()
    _skip_without_fp8()
    for M, N, K in ((129, 257, 75), (77, 1, 130), (1, 515, 33), (300, 520, 1000)):
        A = _fp8(torch, dtype, M, K, a_col, M + K)
        B = _fp8(torch, dtype, K, N, b_col, N + K)
        ref = A.float().double() @ B.float().double()     # the fp8-decoded values, multiplied in fp64
        assert tcgemm.plan(M, N, K, dtype).key == "d1"
        D = tcgemm.matmul(A, B)
        assert isinstance(D, torch.Tensor) and D.dtype == torch.float32 and D.shape == (M, N)
        result = _checked(torch, D, ref, K)
        assert result.passed, f"{dtype} {M}x{N}x{K} A col {a_col} B col {b_col}: {result}"


@pytest.mark.parametrize("dtype", FP8)
def test_fp8_gives_16_bit_d_on_request_and_takes_alpha_beta_and_c(dtype):
    import tcgemm
    torch = _torch()
    _skip_without_fp8()
    M, N, K = 129, 200, 96
    A, B = _fp8(torch, dtype, M, K, False, 1), _fp8(torch, dtype, K, N, True, 2)
    ref = A.float().double() @ B.float().double()
    for out_dtype, kind in (("float16", torch.float16), ("bfloat16", torch.bfloat16)):
        D = tcgemm.matmul(A, B, out_dtype=out_dtype)
        assert D.dtype == kind and _checked(torch, D, ref, K).passed, out_dtype
    C = torch.rand(M, N, device="cuda")
    want = 2 * ref - C.double()
    D = tcgemm.matmul(A, B, out=C, alpha=2, beta=-1, C=C)
    assert D is C and _checked(torch, C, want, K).passed
    with pytest.raises(OperandError, match=f"{dtype} inputs give a float32 or float16 or bfloat16 C, not {dtype}"):
        tcgemm.matmul(A, B, out_dtype=dtype)


def test_fp8_is_refused_before_sm_89():
    import tcgemm
    from tcgemm.engine.gpu.compile import current_arch
    from tcgemm.errors import UnsupportedOnGPUError
    torch = _torch()
    arch = current_arch()
    if int(arch[3:]) >= 89:
        assert tcgemm.plan(64, 64, 64, "float8_e5m2").element == "e5m2"
        return
    A = torch.ones(64, 32, device="cuda").to(torch.float8_e4m3fn)
    B = torch.ones(48, 32, device="cuda").to(torch.float8_e4m3fn).T
    with pytest.raises(UnsupportedOnGPUError, match=f"float8_e4m3fn inputs need fp8 mma.sync, on sm_89 .*is {arch}"):
        tcgemm.matmul(A, B)


@pytest.mark.parametrize("case", CASES)
def test_fp32_runs_as_tf32_when_allowed(case):
    """allow_tf32=True: Kernel D1's tf32 build on fp32 arrays in every order, each input rounded to tf32
    (to nearest, ties away: tcgemm.numerics.elements.decode), the sums under the fp32 tolerance."""
    import cupy
    import tcgemm
    from tcgemm.engine.gpu.gemm import check_output
    from tcgemm.engine.gpu.matmul import case_operands
    from tcgemm.numerics.elements import decode
    for M, N, K in ((129, 257, 75), (1, 515, 33), (300, 520, 1000)):
        A, B, C = case_operands(case, M, N, K, dtype="float32", seed=K)
        rounded = [cupy.asarray(decode(cupy.asnumpy(x), "tf32")) for x in (A, B)]
        ref = rounded[0] @ rounded[1]
        assert tcgemm.plan(M, N, K, "float32", allow_tf32=True).element == "tf32"
        D = tcgemm.matmul(A, B, allow_tf32=True)
        assert D.dtype == np.float32
        assert check_output(D, ref, K).passed, f"tf32 {case} {M}x{N}x{K}"
        D = tcgemm.matmul(A, B, alpha=2, beta=-1, C=C, allow_tf32=True)
        assert check_output(D, 2 * ref - C, K).passed, f"tf32 {case} {M}x{N}x{K}, alpha and beta"
    with pytest.raises(OperandError, match="pass allow_tf32=True"):
        tcgemm.matmul(A, B)


def test_runs_on_the_current_stream_and_in_a_cuda_graph():
    import cupy
    import tcgemm
    A = (cupy.random.default_rng(2).random((512, 384), dtype=np.float32) - 0.5).astype(np.float16)
    B = cupy.asfortranarray((cupy.random.default_rng(3).random((384, 640), dtype=np.float32) - 0.5).astype(np.float16))
    ref = A.astype(np.float32) @ B.astype(np.float32)
    out = cupy.full((512, 640), np.nan, dtype=np.float16)
    stream = cupy.cuda.Stream(non_blocking=True)
    big = cupy.ones((4096, 4096), dtype=np.float32)
    with stream:
        big @ big                             # the stream starts busy
        tcgemm.matmul(A, B, out=out)          # prepared and launched here, ordered on this stream
        tcgemm.matmul(A, B, out=out)
        stream.synchronize()
        stream.begin_capture()
        tcgemm.matmul(A, B, out=out)          # the same call again: captured, nothing allocated
        graph = stream.end_capture()
        out[...] = np.nan
        graph.launch()
    stream.synchronize()
    assert float(cupy.abs(out.astype(np.float32) - ref).max()) < 1e-2


@pytest.mark.parametrize("shape", [(1024, 1024, 1024), (512, 512, 512), (96, 4096, 4096), (100, 12801, 200)])
def test_a_new_d_per_call_is_right_whether_the_last_one_is_kept_or_dropped(shape):
    """tcgemm.matmul allocates D and holds it by address only (PreparedGemm.forget_output): a D the caller
    keeps is never written again, and a D that lands where a dropped one was is written in full."""
    import cupy
    import tcgemm
    M, N, K = shape
    rng = cupy.random.default_rng(7)
    A = (rng.random((M, K), dtype=np.float32) - 0.5).astype(np.float16)
    B = cupy.asfortranarray((rng.random((K, N), dtype=np.float32) - 0.5).astype(np.float16))
    first = tcgemm.matmul(A, B)
    kept = first.copy()
    A2 = -A
    second = tcgemm.matmul(A2, B)                     # first is alive: second is elsewhere
    assert second.data.ptr != first.data.ptr and bool(cupy.all(first == kept))
    assert bool(cupy.all(second == -kept))
    address = second.data.ptr
    del second
    third = tcgemm.matmul(A, B)                       # most likely where second was, through the same launch
    assert bool(cupy.all(third == kept)), (third.data.ptr == address)


# A shape per path of a repeated call: Kernel 5.11 (64-wide tiles) and 5.9 writing a 16-bit D themselves;
# Kernel 4.7 into fp32, then the epilogue pass; Kernel 5.13 on the product turned round.
REPEATED = [(1024, 1024, 1024), (2048, 2048, 512), (64, 4096, 4096), (128, 12801, 512)]


@pytest.mark.parametrize("shape", REPEATED)
def test_a_repeated_call_reads_new_values_and_keeps_no_array_alive(shape):
    """The second call on the same arrays goes through tcgemm.engine.gpu.matmul's _Repeat: it reads what the
    arrays hold now, writes all of a new D, and holds neither A nor B (a dropped operand is freed)."""
    import gc
    import weakref

    import cupy
    import tcgemm
    from tcgemm.engine.gpu import matmul as m
    M, N, K = shape
    rng = cupy.random.default_rng(11)
    A = (rng.random((M, K), dtype=np.float32) - 0.5).astype(np.float16)
    B = cupy.asfortranarray((rng.random((K, N), dtype=np.float32) - 0.5).astype(np.float16))
    ref = A.astype(np.float32) @ B.astype(np.float32)
    first = tcgemm.matmul(A, B)
    assert float(cupy.abs(first.astype(np.float32) - ref).max()) < 3e-2
    del first
    A *= -2                                   # same address, new values
    second = tcgemm.matmul(A, B)
    assert any(second.data.ptr in r.by_address for r in m._REPEATS.values()), "the second call was not a repeat"
    assert float(cupy.abs(second.astype(np.float32) + 2 * ref).max()) < 6e-2
    kept = tcgemm.matmul(A, B)                # second is kept: this D lands elsewhere, by the whole way
    assert kept.data.ptr != second.data.ptr and bool(cupy.all(kept == second))
    held = weakref.ref(A)
    del A, second, kept
    gc.collect()
    assert held() is None, "a kept launch holds A"


def test_a_repeated_torch_call_on_another_stream_launches_there():
    import tcgemm
    torch = _torch()
    A = torch.rand(1000, 1000, device="cuda", dtype=torch.float16) - 0.5
    B = (torch.rand(1000, 1000, device="cuda", dtype=torch.float16) - 0.5).T
    ref = A.float() @ B.float()
    for _ in range(2):
        D = tcgemm.matmul(A, B)
        assert float((D.float() - ref).abs().max()) < 3e-2
        del D
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        side.wait_stream(torch.cuda.current_stream())
        torch.cuda._sleep(50_000_000)          # the side stream is busy: work launched elsewhere would race
        A.mul_(-1)
        for _ in range(2):
            D = tcgemm.matmul(A, B)
    side.synchronize()
    assert float((D.float() + ref).abs().max()) < 3e-2
