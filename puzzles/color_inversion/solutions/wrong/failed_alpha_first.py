# expect: failed wrong-answer
# mistake: alpha_first
# Takes the pixel layout for ARGB: keeps byte 0 (red) and inverts bytes 1, 2, 3 (alpha included).
import triton
import triton.language as tl


@triton.jit
def color_inversion_kernel(image_ptr, n_bytes, BLOCK_SIZE: tl.constexpr):
    image_ptr = image_ptr.to(tl.pointer_type(tl.uint8))
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_bytes
    v = tl.load(image_ptr + offsets, mask=mask)
    tl.store(image_ptr + offsets, tl.where(offsets % 4 == 0, v, 255 - v), mask=mask)


def solve(image_ptr: int, width: int, height: int):
    n_bytes = width * height * 4
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(n_bytes, BLOCK_SIZE),)
    color_inversion_kernel[grid](image_ptr, n_bytes, BLOCK_SIZE=BLOCK_SIZE)
