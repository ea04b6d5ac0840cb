"""The CUDA toolkit's command-line tools the judge runs a worker under (compute-sanitizer for
`--sanitize`, Nsight Compute's ncu for `tpuzzle profile`), found the same way."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from judge.errors import JudgeError


def find(executable: str, env_var: str, needed_by: str) -> Path:
    """The tool: named by `env_var`, on PATH, in $CUDA_HOME/bin, $CUDA_PATH/bin or
    /usr/local/cuda/bin; JudgeError saying where it was looked for."""
    candidates = [os.environ.get(env_var), shutil.which(executable)]
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home:
            candidates.append(str(Path(home) / "bin" / executable))
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK) and Path(candidate).is_file():
            return Path(candidate)
    raise JudgeError(
        f"{needed_by}: not found on PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin; "
        f"set {env_var} to its path"
    )
