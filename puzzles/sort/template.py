import triton
import triton.language as tl


@triton.jit
def sort_kernel(
    data_ptr,  # address of the data, sorted in place
    N,  # number of elements
    BLOCK_SIZE: tl.constexpr,  # elements handled by one program
):
    data_ptr = data_ptr.to(tl.pointer_type(tl.float32))
    # Your code: sort this program's block (masked lanes read as +inf so that they sort last and
    # are never stored), then merge the sorted blocks across programs: one kernel launch per merge
    # step, or per bitonic stage, with scratch memory from torch.empty in solve() if needed.


# data_ptr is a device address (a Python int); N is the number of elements.
def solve(data_ptr: int, N: int):
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(N, BLOCK_SIZE),)
    sort_kernel[grid](data_ptr, N, BLOCK_SIZE=BLOCK_SIZE)
