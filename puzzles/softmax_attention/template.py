import math

import triton
import triton.language as tl


@triton.jit
def attention_kernel(
    q_ptr,  # address of Q, M x d, row-major
    k_ptr,  # address of K, N x d, row-major
    v_ptr,  # address of V, N x d, row-major
    o_ptr,  # address of the output, M x d, row-major
    M,  # number of queries
    N,  # number of keys and values
    d,  # head dimension
    qk_scale,  # 1 / sqrt(d)
    BLOCK_M: tl.constexpr,  # queries handled by one program
    BLOCK_N: tl.constexpr,  # keys handled per step of the loop over keys
    BLOCK_D: tl.constexpr,  # d rounded up to a power of two, at least 16 (mask the padding)
):
    q_ptr = q_ptr.to(tl.pointer_type(tl.float32))
    k_ptr = k_ptr.to(tl.pointer_type(tl.float32))
    v_ptr = v_ptr.to(tl.pointer_type(tl.float32))
    o_ptr = o_ptr.to(tl.pointer_type(tl.float32))
    # Your code: load this program's block of queries; loop over blocks of keys with an online
    # softmax (running maximum, running sum, running weighted sum of V rows); store the result.


# q_ptr, k_ptr, v_ptr, output_ptr are device addresses (Python ints); Q is M x d, K and V are
# N x d, the output is M x d, all float32 and row-major.
def solve(q_ptr: int, k_ptr: int, v_ptr: int, output_ptr: int, M: int, N: int, d: int):
    BLOCK_M = 64
    BLOCK_N = 64
    BLOCK_D = max(16, triton.next_power_of_2(d))
    grid = (triton.cdiv(M, BLOCK_M),)
    attention_kernel[grid](
        q_ptr,
        k_ptr,
        v_ptr,
        output_ptr,
        M,
        N,
        d,
        1.0 / math.sqrt(d),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_D=BLOCK_D,
    )
