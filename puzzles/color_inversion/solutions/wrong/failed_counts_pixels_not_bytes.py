# expect: failed wrong-answer
# mistake: counts_pixels
# Walks the buffer byte by byte but stops at width * height, the number of pixels: only the first
# quarter of the image is inverted.
import triton
import triton.language as tl


@triton.jit
def color_inversion_kernel(image_ptr, n, BLOCK_SIZE: tl.constexpr):
    image_ptr = image_ptr.to(tl.pointer_type(tl.uint8))
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    v = tl.load(image_ptr + offsets, mask=mask)
    tl.store(image_ptr + offsets, tl.where(offsets % 4 == 3, v, 255 - v), mask=mask)


def solve(image_ptr: int, width: int, height: int):
    n = width * height
    BLOCK_SIZE = 1024
    color_inversion_kernel[(triton.cdiv(n, BLOCK_SIZE),)](image_ptr, n, BLOCK_SIZE=BLOCK_SIZE)
