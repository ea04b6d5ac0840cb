import math

import triton
import triton.language as tl


@triton.jit
def causal_attention_kernel(
    q_ptr,  # address of Q, N x d, row-major, float16
    k_ptr,  # address of K, N x d, row-major, float16
    v_ptr,  # address of V, N x d, row-major, float16
    o_ptr,  # address of the output, N x d, row-major, float16
    N,  # sequence length
    d,  # head dimension
    qk_scale,  # 1 / sqrt(d)
    BLOCK_M: tl.constexpr,  # queries handled by one program
    BLOCK_N: tl.constexpr,  # keys handled per step of the loop over keys
    BLOCK_D: tl.constexpr,  # d rounded up to a power of two, at least 16 (mask the padding)
):
    q_ptr = q_ptr.to(tl.pointer_type(tl.float16))
    k_ptr = k_ptr.to(tl.pointer_type(tl.float16))
    v_ptr = v_ptr.to(tl.pointer_type(tl.float16))
    o_ptr = o_ptr.to(tl.pointer_type(tl.float16))
    # Your code: load this program's block of queries; loop over the blocks of keys up to the
    # diagonal with an online softmax, masking keys j > i; store the result as float16.


# q_ptr, k_ptr, v_ptr, output_ptr are device addresses (Python ints) of N x d float16 matrices,
# row-major.
def solve(q_ptr: int, k_ptr: int, v_ptr: int, output_ptr: int, N: int, d: int):
    BLOCK_M = 64
    BLOCK_N = 64
    BLOCK_D = max(16, triton.next_power_of_2(d))
    grid = (triton.cdiv(N, BLOCK_M),)
    causal_attention_kernel[grid](
        q_ptr,
        k_ptr,
        v_ptr,
        output_ptr,
        N,
        d,
        1.0 / math.sqrt(d),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_D=BLOCK_D,
    )
