import triton
import triton.language as tl


@triton.jit
def color_inversion_kernel(
    image_ptr,  # address of the RGBA image, read and written in place
    n_bytes,  # width * height * 4
    BLOCK_SIZE: tl.constexpr,  # bytes handled by one program
):
    image_ptr = image_ptr.to(tl.pointer_type(tl.uint8))
    pid = tl.program_id(axis=0)  # which block of bytes this program handles
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_bytes  # the last block is usually partial
    # A pointer made from an integer carries no alignment for the compiler, which then moves one
    # byte per instruction: far from the memory bandwidth. The image starts on a 16-byte boundary
    # and each run of 16 offsets starts at a multiple of 16, so say so: loads and stores become
    # 16 bytes wide (where the mask allows: n_bytes a multiple of 16).
    ptrs = tl.max_contiguous(tl.multiple_of(image_ptr + offsets, 16), 16)
    v = tl.load(ptrs, mask=mask)
    is_alpha = (offsets % 4) == 3  # byte 3 of every pixel
    v = tl.where(is_alpha, v, 255 - v)
    tl.store(ptrs, v, mask=mask)


def solve(image_ptr: int, width: int, height: int):
    n_bytes = width * height * 4
    # A fixed block size: @triton.autotune would run the kernel once per trial, and every run
    # inverts the image again.
    BLOCK_SIZE = 16384
    grid = (triton.cdiv(n_bytes, BLOCK_SIZE),)
    color_inversion_kernel[grid](image_ptr, n_bytes, BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
