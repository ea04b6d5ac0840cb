"""PyTorch reference for matrix_transpose: the same arguments as solve(), as tensors."""


def reference(input, output, rows, cols):
    output.view(cols, rows).copy_(input.view(rows, cols).t())


# The mistakes of the wrong solutions, each computing what such a kernel writes (mistake_<name>,
# named in puzzle.yaml's mistakes): a failing call that matches one gets its hint. Elements a
# kernel never writes keep the output's sentinel, a NaN.


def mistake_grid_from_rows(input, output, rows, cols, block=32):
    """Both axes of a grid of 32 x 32 tiles sized from rows: the input's columns from
    cdiv(rows, 32) * 32 on (the output's rows from there) are never written."""
    done = min(cols, -(-rows // block) * block)
    output.fill_(float("nan"))
    output.view(cols, rows)[:done] = input.view(rows, cols)[:, :done].t()


def mistake_not_transposed(input, output, rows, cols):
    """Each tile stored at the offsets it was loaded from: the output is a copy of the input."""
    output.copy_(input)
