# expect: failed out-of-bounds
# mistake: mask
# Packs several short rows per program but masks only the columns: the last program runs past N.
import triton
import triton.language as tl


@triton.jit
def rms_norm_kernel(
    input_ptr, weight_ptr, output_ptr, C, eps, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    weight_ptr = weight_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    row_ids = tl.program_id(axis=0) * BLOCK_M + tl.arange(0, BLOCK_M)
    col_ids = tl.arange(0, BLOCK_N)
    mask = col_ids[None, :] < C  # no row_ids < N
    offsets = row_ids[:, None] * C + col_ids[None, :]
    x = tl.load(input_ptr + offsets, mask=mask, other=0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / C + eps)
    w = tl.load(weight_ptr + col_ids, mask=col_ids < C)
    tl.store(output_ptr + offsets, x * rstd[:, None] * w[None, :], mask=mask)


def solve(input_ptr: int, weight_ptr: int, output_ptr: int, N: int, C: int, eps: float):
    BLOCK_N = triton.next_power_of_2(C)
    BLOCK_M = max(1, 4096 // BLOCK_N)
    rms_norm_kernel[(triton.cdiv(N, BLOCK_M),)](
        input_ptr, weight_ptr, output_ptr, C, eps, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=8
    )
