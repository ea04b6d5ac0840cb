# expect: failed wrong-answer
# mistake: eps_outside_sqrt
# Adds eps to the root mean square, x / (sqrt(mean square) + eps), instead of inside the root.
import triton
import triton.language as tl


@triton.jit
def rms_norm_kernel(input_ptr, weight_ptr, output_ptr, C, eps, BLOCK_SIZE: tl.constexpr):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    weight_ptr = weight_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    row_start = tl.program_id(axis=0) * C
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < C
    x = tl.load(input_ptr + row_start + cols, mask=mask, other=0.0)
    rms = tl.sqrt(tl.sum(x * x, axis=0) / C)
    w = tl.load(weight_ptr + cols, mask=mask)
    tl.store(output_ptr + row_start + cols, x / (rms + eps) * w, mask=mask)


def solve(input_ptr: int, weight_ptr: int, output_ptr: int, N: int, C: int, eps: float):
    rms_norm_kernel[(N,)](
        input_ptr, weight_ptr, output_ptr, C, eps, BLOCK_SIZE=triton.next_power_of_2(C)
    )
