"""Confinement of a worker that runs submission code: what it may read, write and reach.

The parent decides the rules (`rules`, a pure function of the job's paths and this Python); the
worker applies them to itself (`apply`) once its CUDA context exists and before it imports a
submission. The driver talks to the system while it starts (a socket, files of its own), which a
confined process may not; every thread and process the worker starts afterwards inherits the
rules, the seccomp filter holds every thread, and Landlock the worker's main thread and all it
starts (so all of the submission's code). Nothing here needs root or a container runtime:

- files (Landlock, Linux 5.13+): read and execute the Python environment, the system's programs
  and libraries, /proc, /sys and the device files a GPU needs; read and write the job folder and
  the submission's own compile cache. Everything else (other job folders, the class folder, the
  catalogue, the results database, home, /tmp) cannot be opened, listed or written;
- network (seccomp): socket() fails, whatever the family, and io_uring cannot be set up (its
  operations would go around it); Landlock's TCP rules (ABI 4+) refuse bind and connect as well;
- signals (Landlock ABI 6+ scoping; ptrace since ABI 1): no signal and no ptrace to a process
  outside the worker's own tree; every worker is a domain of its own;
- limits (rlimits): memory (RLIMIT_DATA), processes (RLIMIT_NPROC; it counts all of a user's
  processes and does not bind root, so the parent's watchdog counts the worker's tree as well),
  open files, file size (and the watchdog sums the worker's folders), no core files.

Where the kernel lacks a mechanism, `available()` says which, so that the judge can say so once.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import resource
import signal
import struct
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

CONFINE_ENV = "TPUZZLE_CONFINE"  # 0: workers run unconfined (to measure what confinement costs)

# ------------------------------------------------------------------------------ what it may use

SYSTEM_READ = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/opt")
KERNEL_READ = ("/proc", "/sys")
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
GPU_DEVICES = ("/dev/nvidia", "/dev/nvidia-caps")  # a prefix: nvidia0, nvidiactl, nvidia-uvm, ...

GIB = 1 << 30
MEMORY_BYTES = 32 * GIB  # private writable memory of one worker (RLIMIT_DATA)
PROCESSES = 256  # processes and threads beyond what the user already runs
OPEN_FILES = 4096
FILE_BYTES = 8 * GIB  # one file (the largest buffer dump is well under this)
DISK_BYTES = 16 * GIB  # everything the worker writes into its folders (the parent's watchdog)


@dataclass(frozen=True)
class Limits:
    memory_bytes: int = MEMORY_BYTES
    processes: int = PROCESSES
    open_files: int = OPEN_FILES
    file_bytes: int = FILE_BYTES
    disk_bytes: int = DISK_BYTES


LIMIT_ENV = {  # an instructor's own limits, in MiB or counts: the field and its unit
    "TPUZZLE_MEMORY_MB": ("memory_bytes", 1 << 20),
    "TPUZZLE_PROCESSES": ("processes", 1),
    "TPUZZLE_OPEN_FILES": ("open_files", 1),
    "TPUZZLE_FILE_MB": ("file_bytes", 1 << 20),
    "TPUZZLE_DISK_MB": ("disk_bytes", 1 << 20),
}


def limits_from(environ: dict[str, str]) -> Limits:
    """The limits, with any of LIMIT_ENV set in `environ` in place of the defaults; a value that
    is not a positive whole number is an error naming the variable."""
    from judge.errors import JudgeError

    given = {}
    for name, (key, unit) in LIMIT_ENV.items():
        if name in environ:
            text = environ[name].strip()
            if not text.isdigit() or int(text) <= 0:
                raise JudgeError(f"{name}={environ[name]!r}: expected a positive whole number")
            given[key] = int(text) * unit
    return Limits(**given)


@dataclass(frozen=True)
class Rules:
    """What one worker may touch: read (and execute) beneath `read`; read, write, create and
    remove beneath `write`; read, write and ioctl on the `devices` (files)."""

    read: tuple[str, ...]
    write: tuple[str, ...]
    devices: tuple[str, ...]
    limits: Limits = field(default_factory=Limits)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Rules:
        return cls(
            read=tuple(data["read"]),
            write=tuple(data["write"]),
            devices=tuple(data["devices"]),
            limits=Limits(**data["limits"]),
        )


WORKER_PACKAGES = ("triton", "torch", "numpy", "yaml", "nvidia")  # what a worker runs on


def python_dirs() -> list[str]:
    """Where this Python and its packages live: the prefixes, the site folders, the sys.path
    folders inside either or inside a system folder, and the folders of the packages a worker
    runs on (WORKER_PACKAGES), wherever they lie. Never the working directory, nor the rest of a
    folder PYTHONPATH adds from elsewhere: a Triton installed there with `pip install --target`
    is readable, the class folder beside it is not (the judge's own package is added by name)."""
    import importlib.util
    import site

    prefixes = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    sites = list(site.getsitepackages()) + [site.getusersitepackages()]
    roots = [_real(p) for p in [*prefixes, *sites, *SYSTEM_READ]]
    found = [*prefixes, *sites]
    for entry in sys.path:
        if entry and os.path.isabs(entry) and any(_inside(_real(entry), r) for r in roots):
            found.append(entry)
    here = _real(os.getcwd())  # where the judge runs from: a class folder, say
    for name in WORKER_PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        for folder in (spec.submodule_search_locations or []) if spec else []:
            real = _real(folder)
            if not _inside(real, here) and not any(_inside(real, r) for r in roots):
                found.append(folder)
    return [p for p in found if os.path.isdir(p)]


def rules(
    writable: list[Path],
    forbidden: list[Path],
    gpu: bool,
    limits: Limits | None = None,
    python: list[str] | None = None,
) -> Rules:
    """The rules for one worker. `writable`: its job folder and compile cache. `forbidden`:
    folders it must not see even where they lie inside something it may read (the catalogue
    bundled in site-packages, the submission's own folder, the results database, home): a
    readable folder holding one is opened child by child, leaving the forbidden one out. The
    judge's package is readable (the worker imports it); its checkout's other folders are not."""
    import judge

    package = Path(judge.__file__).resolve().parent
    blocked = [_real(p) for p in forbidden] + [package.parent]
    read: list[str] = [str(package)]
    for path in [*SYSTEM_READ, *KERNEL_READ, *(python_dirs() if python is None else python)]:
        read += _opened(_real(path), blocked)
    devices = [d for d in DEVICES if os.path.exists(d)]
    if gpu:
        devices += _gpu_devices()
    writes = [str(_real(p)) for p in writable]
    return Rules(
        read=tuple(_unique(p for p in read if p not in writes)),
        write=tuple(writes),
        devices=tuple(devices),
        limits=limits or Limits(),
    )


def _real(path: str | Path) -> Path:
    return Path(os.path.realpath(path))


def _unique(items) -> list:
    return list(dict.fromkeys(items))


def _inside(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


def _opened(path: Path, blocked: list[Path]) -> list[str]:
    """`path` as rules that leave every blocked folder out: the path itself when it holds none,
    else each of its children opened the same way; nothing for a blocked path itself. A folder
    inside a blocked one is still opened (a virtual environment inside the checkout, Python
    inside home): only what the blocked folder holds beside it stays closed."""
    if path in blocked or not path.exists():
        return []
    if not any(path in b.parents for b in blocked):
        return [str(path)]
    try:
        children = sorted(path.iterdir())
    except OSError:
        return []
    found: list[str] = []
    for child in children:
        found += _opened(_real(child) if child.is_symlink() else child, blocked)
    return found


def _gpu_devices() -> list[str]:
    found = []
    for entry in sorted(Path("/dev").glob("nvidia*")):
        if entry.is_dir():
            found += [str(p) for p in sorted(entry.iterdir())]
        else:
            found.append(str(entry))
    return found


# ------------------------------------------------------------------------------ Landlock

SYS_LANDLOCK_CREATE_RULESET = 444  # the same number on every architecture
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1

# filesystem rights: bits 0-12 are ABI 1's (execute, write, read, read a folder, remove and make
# each kind of entry), then refer (ABI 2), truncate (ABI 3) and device ioctl (ABI 5)
FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_TRUNCATE = 1 << 14
FS_IOCTL_DEV = 1 << 15
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1

FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
FILE_ONLY = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def landlock_abi() -> int:
    """The Landlock ABI this kernel offers (0: none, or switched off)."""
    if platform.system() != "Linux":
        return 0
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(
        ctypes.c_long(SYS_LANDLOCK_CREATE_RULESET),
        None,
        ctypes.c_size_t(0),
        ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION),
    )
    return max(0, int(abi))


def fs_rights(abi: int) -> int:
    return FS_BY_ABI[max(k for k in FS_BY_ABI if k <= abi)] if abi else 0


class ConfineError(OSError):
    pass


def _landlock(rules: Rules, abi: int) -> None:
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    handled = fs_rights(abi)
    attr = struct.pack("<Q", handled)
    if abi >= 4:
        attr += struct.pack("<Q", NET_BIND_TCP | NET_CONNECT_TCP)
    if abi >= 6:
        attr += struct.pack("<Q", SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL)
    buffer = ctypes.create_string_buffer(attr, len(attr))
    ruleset = libc.syscall(
        ctypes.c_long(SYS_LANDLOCK_CREATE_RULESET), buffer, ctypes.c_size_t(len(attr)),
        ctypes.c_uint32(0),
    )  # fmt: skip
    if ruleset < 0:
        raise ConfineError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        read = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
        for path in rules.read:
            _add(libc, ruleset, path, read & handled)
        for path in rules.write:
            _add(libc, ruleset, path, handled)
        for path in rules.devices:
            _add(libc, ruleset, path, (FS_READ_FILE | FS_WRITE_FILE | FS_IOCTL_DEV) & handled)
        if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
            raise ConfineError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS failed")
        if libc.syscall(ctypes.c_long(SYS_LANDLOCK_RESTRICT_SELF), ruleset, ctypes.c_uint32(0)):
            raise ConfineError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)


def _add(libc, ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # gone since the parent listed it
    try:
        if not os.path.isdir(path):
            access &= FILE_ONLY
        attr = struct.pack("<Qi", access, fd)  # struct landlock_path_beneath_attr, packed
        buffer = ctypes.create_string_buffer(attr, len(attr))
        done = libc.syscall(
            ctypes.c_long(SYS_LANDLOCK_ADD_RULE), ctypes.c_int(ruleset),
            ctypes.c_int(LANDLOCK_RULE_PATH_BENEATH), buffer, ctypes.c_uint32(0),
        )  # fmt: skip
        if done != 0:
            raise ConfineError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
    finally:
        os.close(fd)


# ------------------------------------------------------------------------------ seccomp

ARCHES = {  # machine: (AUDIT_ARCH_*, socket, io_uring_setup)
    "x86_64": (0xC000003E, 41, 425),
    "aarch64": (0xC00000B7, 198, 425),
}
X32_BIT = 0x40000000
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
BPF_LD_W_ABS, BPF_JEQ_K, BPF_JGE_K, BPF_RET_K = 0x20, 0x15, 0x35, 0x06


def seccomp_filter(machine: str) -> bytes | None:
    """A classic BPF program: socket() and io_uring_setup() fail with EACCES, as does any system
    call made through another architecture's numbers (x32, or 32-bit calls on a 64-bit kernel);
    everything else is allowed. None on an architecture this does not know."""
    if machine not in ARCHES:
        return None
    arch, socket_nr, uring_nr = ARCHES[machine]
    deny = SECCOMP_RET_ERRNO | errno.EACCES

    def op(code, k, jt=0, jf=0):
        return struct.pack("<HBBI", code, jt, jf, k)

    program = [
        op(BPF_LD_W_ABS, 4),  # seccomp_data.arch
        op(BPF_JEQ_K, arch, 1, 0),
        op(BPF_RET_K, deny),
        op(BPF_LD_W_ABS, 0),  # seccomp_data.nr
        op(BPF_JGE_K, X32_BIT, 2, 0) if machine == "x86_64" else op(BPF_JEQ_K, 0xFFFFFFFF, 2, 0),
        op(BPF_JEQ_K, socket_nr, 1, 0),
        op(BPF_JEQ_K, uring_nr, 0, 1),
        op(BPF_RET_K, deny),
        op(BPF_RET_K, SECCOMP_RET_ALLOW),
    ]
    return b"".join(program)


SYS_SECCOMP = {"x86_64": 317, "aarch64": 277}
SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_TSYNC = 1  # every thread of the process, not only the caller


def _seccomp(program: bytes) -> None:
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    filters = ctypes.create_string_buffer(program, len(program))
    fprog = struct.pack("<HxxxxxxQ", len(program) // 8, ctypes.addressof(filters))
    buffer = ctypes.create_string_buffer(fprog, len(fprog))
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise ConfineError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS failed")
    done = libc.syscall(
        ctypes.c_long(SYS_SECCOMP[platform.machine()]), ctypes.c_uint(SECCOMP_SET_MODE_FILTER),
        ctypes.c_uint(SECCOMP_FILTER_FLAG_TSYNC), buffer,
    )  # fmt: skip
    if done != 0:
        raise ConfineError(ctypes.get_errno(), "seccomp(SECCOMP_SET_MODE_FILTER) failed")


# ------------------------------------------------------------------------------ limits


def user_tasks() -> int:
    """Processes and threads of this real user, system-wide (what RLIMIT_NPROC counts)."""
    uid, count = os.getuid(), 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid == uid:
                count += len(os.listdir(f"/proc/{entry.name}/task"))
        except OSError:
            continue
    return count


def _limits(limits: Limits) -> None:
    def cap(kind: int, value: int) -> None:
        _, hard = resource.getrlimit(kind)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(kind, (value, value))

    cap(resource.RLIMIT_DATA, limits.memory_bytes)
    cap(resource.RLIMIT_NPROC, user_tasks() + limits.processes)
    cap(resource.RLIMIT_NOFILE, limits.open_files)
    cap(resource.RLIMIT_FSIZE, limits.file_bytes)
    cap(resource.RLIMIT_CORE, 0)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG


# ------------------------------------------------------------------------------ applying

MECHANISMS = ("files", "network", "signals", "limits")


def available() -> dict[str, str]:
    """Each mechanism this machine cannot give, with why (empty: all of them)."""
    missing = {}
    if platform.system() != "Linux":
        return {m: f"not on {platform.system()}" for m in MECHANISMS}
    abi = landlock_abi()
    if abi < 1:
        missing["files"] = "the kernel has no Landlock (Linux 5.13+, enabled in the LSM list)"
    if seccomp_filter(platform.machine()) is None:
        missing["network"] = f"no seccomp filter for {platform.machine()}"
    if abi < 6:
        missing["signals"] = f"Landlock ABI {abi} cannot scope signals (ABI 6, Linux 6.12+)"
    return missing


def missing_here(environ: dict[str, str] | None = None) -> dict[str, str]:
    """What a worker started by this process would run without: `available()`, or everything
    when TPUZZLE_CONFINE=0."""
    environ = os.environ if environ is None else environ
    if environ.get(CONFINE_ENV, "1") == "0":
        return {"everything": f"{CONFINE_ENV}=0"}
    return available()


def describe(missing: dict[str, str]) -> str:
    """One line: each mechanism a worker runs without, with why."""
    return "; ".join(f"{name}: {why}" for name, why in missing.items())


def apply(rules: Rules) -> dict[str, str]:
    """Confine this process (and everything it starts later). Returns the mechanisms that could
    not be applied, with why. Landlock holds the calling thread and what it starts; seccomp
    every thread."""
    missing = available()
    _limits(rules.limits)
    abi = landlock_abi()
    if abi >= 1:
        _landlock(rules, abi)
    program = seccomp_filter(platform.machine())
    if program is not None:
        _seccomp(program)
    return missing
