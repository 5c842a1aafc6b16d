"""Confinement of a candidate's worker process (issue 31).

A hostile candidate was seen reading its ancestors' ``/proc/<pid>/cmdline`` to find ``--store``, and
rewriting its rows in the SQLite store from a process in a new session that outlived its worker.
:func:`confine` runs inside the worker (:func:`mkbench.worker.entry`), after
:func:`mkbench.procguard.detach_and_guard` and the log redirection and before any candidate code is
imported. Each layer is applied where the kernel allows it and skipped otherwise: a run never fails
for want of confinement, it records what was in force (:func:`support`, the run's
``env["engine"]["confinement"]``).

A reaper (``PR_SET_CHILD_SUBREAPER``, then a fork)
    The worker's code goes on in the child; the original process becomes a child subreaper that
    only waits. A descendant in a new session or process group (``setsid``,
    ``start_new_session=True``, a double fork) whose parent dies is handed to it, not to init, so
    it stays below the reaper: when the worker ends, however it ends, the reaper stops and kills
    everything below it (:func:`mkbench.procguard.kill_descendants`), removes the scratch
    directory and passes the worker's exit status on; when the orchestrator stops the unit,
    :func:`mkbench.procguard.kill_group` does the same from outside. Not a PID namespace, which
    the kernel would make airtight: legacy CUDA IPC handles (how a worker hands GPU tensors to the
    judge, :mod:`mkbench.transfer`) cannot be opened across PID namespaces. Not a cgroup: it needs
    a delegated, writable cgroup tree, which a container rarely has.
Landlock (ABI 1 and later)
    Writes only to the unit's scratch directory (``TMPDIR``, and the worker's cwd: :func:`_enter`), the
    JIT caches the runner names in the worker's environment, the unit's log file, ``/dev/shm`` and the
    device nodes a GPU needs. Reads everywhere except the digest key directory
    (:func:`mkbench.store_digest.key_dir`): Landlock
    grants by hierarchy, so every directory on the way to the key directory is granted entry by entry
    minus the one leading to it; and except ``/dev``, of which only the nodes above are granted (a
    raw disk would bypass every rule). A Landlock domain also denies ptrace-class access
    (``/proc/<pid>/mem``, ``environ``, ``fd``) to processes outside it, and from ABI 6 signals too.
    One procfs grant: the worker's own ``/proc/<pid>/task`` may be written (:func:`_own_task_dir`):
    the CUDA driver names the threads it starts in ``cuInit`` by writing their
    ``/proc/<pid>/task/<tid>/comm`` and fails with error 304 where it may not.
Capabilities
    The worker runs as root on the GPU machines; after the rules it drops every capability (the
    effective, permitted and bounding sets, with no_new_privs), so it cannot mount, create device
    nodes, read ``/proc/kcore`` or enter another namespace with ``setns``.
seccomp (a filter written out here: no maintained Python binding is installed)
    Every ``connect`` fails with ENOENT: the fork server listens on a named Unix socket and forks
    whatever it is sent, unconfined, and Landlock up to ABI 7 does not govern ``connect``. ENOENT is
    what a client sees where nothing listens, which the CUDA driver takes in its stride (it looks for
    an MPS daemon's socket in ``cuInit``); refusing ``socket(AF_UNIX)`` instead, with EPERM or EACCES,
    made ``cuInit`` fail with error 304 on an H200 (``reports/2026-11-27-confinement``). ptrace,
    ``process_vm_readv``/``writev`` (Landlock keeps those out of other domains too), io_uring (whose
    submissions seccomp never sees: a connect issued through it would pass) and other ABIs are
    refused with EPERM. :data:`UNIX_SOCKET` (or ``cfg["unix_socket"]``) chooses another socket rule.

Not covered: see the README's "Confinement" section.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import signal
import sys
import tempfile
import traceback
from pathlib import Path

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # the same on x86_64 and aarch64
_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER, _PR_CAPBSET_DROP, _PR_SET_NO_NEW_PRIVS = 1, 36, 24, 38
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1, 2, 4, 8
_REFER, _TRUNCATE = 1 << 13, 1 << 14
_SCOPE_SIGNAL = 2
_PROC_TASK = _WRITE_FILE | _READ_FILE  # the own /proc/<pid>/task: open(O_RDWR) a thread's comm (+ TRUNCATE, ABI 3)
_READ = _EXECUTE | _READ_FILE
# the JIT caches the runner points the workers at (core/engine/runner.py unit_env), writable
CACHE_VARS = ("TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR", "CUPY_CACHE_DIR", "TORCH_EXTENSIONS_DIR",
              "CUDA_CACHE_PATH", "XDG_CACHE_HOME", "POCL_CACHE_DIR")
# /dev: only these (a GPU's nodes by prefix); all of /dev would include raw disks
_DEV_RW = {"null", "zero", "full", "random", "urandom", "tty", "ptmx", "shm", "pts", "dri", "kfd"}
_DEV_RW_PREFIX = ("nvidia", "accel")
_DEV_READ = {"fd", "stdin", "stdout", "stderr", "char"}

#: What the seccomp filter does with sockets, unless ``confine``'s cfg says (``"unix_socket"``):
#: ``"no-connect"`` (the default): sockets may be made, but every ``connect`` (any family) fails with
#: ENOENT, as where nothing listens; ``"deny"``: ``socket(AF_UNIX)`` fails with EPERM (breaks CUDA);
#: an errno name (``"EACCES"``, ``"EAFNOSUPPORT"``): it fails with that instead; ``"allow"``: no rule.
UNIX_SOCKET = "no-connect"

_libc = ctypes.CDLL(None, use_errno=True)
_protected: dict[str, str] = {}  # set by confine(): what a denied access to means hack
_task_dir: tuple[str, int] | None = None  # (pid, O_PATH fd) of the own /proc/<pid>/task, open for life
_databases: list[str] = []  # SQLite databases the candidate opened (see _watch_sqlite)


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 where there is none (or not Linux)."""
    if not sys.platform.startswith("linux"):
        return 0
    abi = _libc.syscall(_SYS_CREATE_RULESET, None, 0, 1)  # LANDLOCK_CREATE_RULESET_VERSION
    return max(abi, 0)


def support() -> str:
    """What :func:`confine` will put in force on this machine, in one line (the orchestrator's view)."""
    abi = landlock_abi()
    return " + ".join(["subreaper",
                       f"landlock ABI {abi}" if abi else "no landlock", "no capabilities",
                       "seccomp" if os.uname().machine in _SYSCALLS else "no seccomp"])


# --- in the worker --------------------------------------------------------------------------------

def confine(cfg: dict, log_path: str | None) -> str:
    """Confine this worker (see the module docstring); what was put in force, for its log."""
    from .store_digest import key_dir
    # absolute: it becomes the worker's cwd below, and TMPDIR (mkdtemp keeps a relative ``dir`` relative)
    scratch = os.path.abspath(tempfile.mkdtemp(prefix="mkbench-unit-", dir=cfg.get("scratch_root")))
    for var in ("TMPDIR", "TMP", "TEMP"):
        os.environ[var] = scratch
    tempfile.tempdir = scratch
    keys = os.path.realpath(key_dir())
    store = cfg.get("store")
    _protected.update({k: v for k, v in {"keys": keys, "store": store and os.path.realpath(store),
                                        "logs": cfg.get("logs") and os.path.realpath(cfg["logs"]),
                                        "log": log_path and os.path.realpath(log_path)}.items() if v})
    done = [_reaper(scratch)]
    for var in CACHE_VARS:  # the runner's are absolute; a relative one would move with the chdir below
        if os.environ.get(var):
            os.environ[var] = os.path.abspath(os.environ[var])
    writable = [scratch, *(os.environ[v] for v in CACHE_VARS if os.environ.get(v)),
                *(os.path.abspath(p) for p in cfg.get("write", ()))]
    for path in writable:
        try:
            os.makedirs(path, exist_ok=True)
        except OSError:
            pass
    _enter(scratch)
    # a key directory that holds what the worker must read (MKBENCH_KEY_DIR=/tmp, say) cannot be hidden
    needed = [os.path.realpath(p) for p in (sys.prefix, os.path.dirname(__file__), *writable)]
    hidden = None if any(_inside(p, keys) for p in needed) else keys
    _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    try:
        done.append(_landlock(writable, log_path, hidden, proc_task=cfg.get("proc_task", True))
                    + ("" if hidden else f" (key dir {keys} NOT hidden)"))
    except OSError as exc:
        done.append(f"no landlock ({exc})")
    done.append(_drop_capabilities())
    done.append(_seccomp(cfg.get("unix_socket")))
    _watch_sqlite()
    return " + ".join(done)


def _enter(scratch: str) -> None:
    """Make the scratch directory the worker's cwd: generated kernels build and write relative to it
    (CUDA-L1's ``load_inline(..., build_directory="vit_fully_fused_build")``), which in the
    orchestrator's cwd confinement refuses. Every path the orchestrator hands a worker is absolute
    (store, logs, caches, candidate and task files), so none moves with it. A ``''`` (or ``'.'``) on
    ``sys.path`` would now mean the scratch directory, where the candidate writes: a module it left
    there would shadow one the harness imports later. Such an entry becomes the old cwd, as it
    meant until now (multiprocessing already hands its children the absolute one)."""
    try:
        here = os.getcwd()
    except OSError:  # the old cwd is gone: nothing there to import either
        here = None
    cwd_entries = ("", os.curdir)
    if here is None:
        sys.path[:] = [p for p in sys.path if p not in cwd_entries]
    else:
        sys.path[:] = [here if p in cwd_entries else p for p in sys.path]
    os.chdir(scratch)


def _reaper(scratch: str) -> str:
    from .procguard import kill_descendants
    if _libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        return f"no subreaper ({os.strerror(ctypes.get_errno())})"
    reaper = os.getpid()
    pid = os.fork()
    if pid == 0:  # the worker from here on
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != reaper:  # died before that was armed
            os._exit(137)
        return "subreaper"
    # the reaper: holds nothing, reaps the orphans handed to it until the worker ends, then kills the rest
    os.closerange(3, 1 << 16)
    while True:
        try:
            done, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(137)
        if done == pid:
            break
    kill_descendants(reaper)
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                break
        except ChildProcessError:
            break
    shutil.rmtree(scratch, ignore_errors=True)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status))


def _landlock(writable: list[str], log_path: str | None, hidden: str | None, *, proc_task: bool = True) -> str:
    """Restrict this process (see the module docstring); ``proc_task=False`` leaves out the grant on
    its own ``/proc/<pid>/task`` (the rules before CUDA's need was known, for probes)."""
    abi = landlock_abi()
    if abi < 1:
        raise OSError(errno.ENOSYS, "Landlock not available")
    handled = (1 << 13) - 1 | (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0)
    attr = _RulesetAttr(handled, 0, _SCOPE_SIGNAL if abi >= 6 else 0)
    ruleset = _libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr), 0)
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset: " + os.strerror(ctypes.get_errno()))
    try:
        _rule(ruleset, "/", _READ_DIR)
        for path in _readable(hidden or "/dev"):
            _rule(ruleset, path, _READ)
        for name in os.listdir("/dev"):
            if name in _DEV_RW or name.startswith(_DEV_RW_PREFIX):
                _rule(ruleset, "/dev/" + name, handled & ~(0b11 << 6 | 1 << 11))  # no mknod
            elif name in _DEV_READ:
                _rule(ruleset, "/dev/" + name, _READ)
        for path in writable:
            _rule(ruleset, path, handled)
        if log_path:
            _rule(ruleset, log_path, _WRITE_FILE | _READ_FILE | (_TRUNCATE if abi >= 3 else 0))
        task_note = ""
        if proc_task:
            try:
                _add_rule(ruleset, _own_task_dir(), _PROC_TASK | (_TRUNCATE if abi >= 3 else 0))
            except OSError as exc:  # no procfs: CUDA will not start, the rest holds
                task_note = f" (own /proc task not writable: {exc})"
        if _libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self: " + os.strerror(ctypes.get_errno()))
    finally:
        os.close(ruleset)
    return f"landlock ABI {abi}{task_note}"


def _own_task_dir() -> int:
    """An ``O_PATH`` fd on this process's ``/proc/<pid>/task``, kept open for the life of the process.

    The grant is this directory, not ``/proc``: beneath it are only this process's threads (those
    started later too, such as the CUDA driver's), and what may be written there (``comm``,
    ``oom_score_adj`` upwards, ``attr/*``, ``mem``) acts on this process alone, which it can do through
    syscalls anyway. Another process's directory, a child's included, stays read-only.

    ``<pid>`` is read from ``/proc/self``, not ``os.getpid()``: a procfs mounted from another PID
    namespace numbers processes its own way. A Landlock rule is tied to an inode, and procfs makes a
    new inode whenever a pid directory's dentry is looked up afresh, which happens once the kernel
    has dropped an unused one (memory pressure): the fd keeps the dentry, so every later path
    through ``/proc/self``, ``/proc/thread-self`` or ``/proc/<pid>`` reaches the inode granted.
    Should the candidate close it, the grant can lapse; that only denies more."""
    global _task_dir
    pid = os.readlink("/proc/self")
    if _task_dir is None or _task_dir[0] != pid:  # a fork's copy names the parent's directory
        _task_dir = (pid, os.open(f"/proc/{pid}/task", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC))
    return _task_dir[1]


def _readable(hidden: str) -> list[str]:
    """Every path that may be read: the top level but /dev, and on the way down to ``hidden`` each
    directory's other entries (symbolic links skipped: their targets are granted where they are)."""
    roots, here = [], "/"
    for part in Path(hidden).parts[1:]:
        try:
            names = os.listdir(here)
        except OSError:
            break
        roots += [os.path.join(here, n) for n in names if n != part and not os.path.islink(os.path.join(here, n))]
        here = os.path.join(here, part)
    return [r for r in roots if r != "/dev"]


def _rule(ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # gone, or unreachable: nothing to grant
    try:
        if not os.path.isdir(path):
            access &= _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE  # the rights a file can carry
        _add_rule(ruleset, fd, access)
    except OSError:
        pass  # a right this node cannot carry: left out, as a path that is gone
    finally:
        os.close(fd)


def _add_rule(ruleset: int, fd: int, access: int) -> None:
    attr = _PathBeneath(access, fd)
    if _libc.syscall(_SYS_ADD_RULE, ruleset, 1, ctypes.byref(attr), 0) != 0:  # LANDLOCK_RULE_PATH_BENEATH
        raise OSError(ctypes.get_errno(), "landlock_add_rule: " + os.strerror(ctypes.get_errno()))


def _drop_capabilities() -> str:
    for cap in range(64):
        if _libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() == errno.EINVAL:
            break  # past the last capability this kernel knows
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable (twice): all empty
    return "no capabilities" if _libc.capset(header, data) == 0 else "capabilities kept"


# seccomp: (audit arch, socket, connect, (ptrace, process_vm_readv, process_vm_writev)) per machine
# (ptrace, process_vm_readv/writev, io_uring_setup/enter/register: 425-427 on both)
_SYSCALLS = {"x86_64": (0xC000003E, 41, 42, (101, 310, 311, 425, 426, 427)),
             "aarch64": (0xC00000B7, 198, 203, (117, 270, 271, 425, 426, 427))}


def _seccomp(unix_socket: str | None = None) -> str:
    """EPERM for ptrace, ``process_vm_readv``/``writev``, io_uring and every syscall of another ABI
    (x32, i386); for sockets what ``unix_socket`` says (:data:`UNIX_SOCKET` where None; see the module
    docstring: a daemon's socket could be as bad as the fork server's)."""
    numbers = _SYSCALLS.get(os.uname().machine)
    if numbers is None:
        return "no seccomp (unknown machine)"
    mode = unix_socket or UNIX_SOCKET
    if mode == "deny":
        refuse = errno.EPERM
    elif mode in ("allow", "no-connect"):
        refuse = None
    elif isinstance(getattr(errno, mode, None), int) and mode.startswith("E"):
        refuse = getattr(errno, mode)
    else:
        raise ValueError(f"unix_socket: {mode!r} is none of deny, allow, no-connect or an errno name")
    arch, sock, connect, reach = numbers
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    allow, deny = 0x7FFF0000, 0x00050000 | errno.EPERM  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | errno
    prog = [(ld, 0, 0, 4), (jeq, 1, 0, arch), (ret, 0, 0, deny), (ld, 0, 0, 0), (jge, 0, 1, 0x40000000),
            (ret, 0, 0, deny)]
    for nr in reach:
        prog += [(jeq, 0, 1, nr), (ret, 0, 0, deny)]
    if mode == "no-connect":  # ENOENT: what a client sees where no daemon listens (seccomp cannot read the path)
        prog += [(jeq, 0, 1, connect), (ret, 0, 0, 0x00050000 | errno.ENOENT)]
    if refuse is not None:  # args[0] (offset 16, low half) == 1: AF_UNIX
        prog += [(jeq, 0, 3, sock), (ld, 0, 0, 16), (jeq, 0, 1, 1), (ret, 0, 0, 0x00050000 | refuse)]
    prog += [(ret, 0, 0, allow)]

    class Filter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(Filter))]

    filters = (Filter * len(prog))(*[Filter(*f) for f in prog])
    if _libc.prctl(22, 2, ctypes.byref(Prog(len(prog), filters)), 0, 0) != 0:  # PR_SET_SECCOMP, MODE_FILTER
        return f"no seccomp ({os.strerror(ctypes.get_errno())})"
    return "seccomp" if mode == "no-connect" else f"seccomp (Unix sockets: {mode})"


def _watch_sqlite() -> None:
    """Record the databases the candidate opens through ``sqlite3.connect``: SQLite reopens a file it
    may not write read-only, so a denied write to the store surfaces as a ``sqlite3`` error without
    a path."""
    import sqlite3
    original = sqlite3.connect

    def connect(database, *args, **kwargs):
        _databases.append(os.path.realpath(os.fsdecode(database)) if isinstance(database, (str, bytes, Path)) else "")
        return original(database, *args, **kwargs)

    sqlite3.connect = connect


# --- what a denial means ---------------------------------------------------------------------------

def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def protected_target(path: str) -> str | None:
    """What ``path`` is, where it is something a candidate has no business touching, else None."""
    path = os.path.realpath(path)
    store = _protected.get("store")
    if store and (path.startswith(store) or path.endswith((".sqlite", ".sqlite-wal", ".sqlite-journal"))):
        return "the results store"
    if _protected.get("keys") and _inside(path, _protected["keys"]):
        return "the digest key directory"
    if _protected.get("logs") and _inside(path, _protected["logs"]) and path != _protected.get("log"):
        return "another unit's log"
    parts = Path(path).parts
    if len(parts) > 2 and parts[1] == "proc" and parts[2].isdigit() and parts[2] != os.readlink("/proc/self"):
        return "another process"
    return None


def denied_hack(exc: BaseException) -> str | None:
    """A hack message where ``exc`` (or its cause or context) is confinement stopping the candidate
    from reaching the store, the key, the logs or another process; None otherwise."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.EPERM):
            for name in (exc.filename, exc.filename2):
                what = name is not None and protected_target(os.fsdecode(name))
                if what:
                    return f"the candidate tried to reach {what} ({os.fsdecode(name)}): denied by confinement"
        frames = traceback.extract_tb(exc.__traceback__)
        if (isinstance(exc, PermissionError) and exc.errno == errno.EPERM and frames
                and frames[-1].filename.endswith(f"{os.sep}socket.py")):
            return "the candidate tried to open a Unix socket (the fork server's?): denied by confinement"
        if (type(exc) is FileNotFoundError and exc.filename is None and frames
                and ".connect(" in (frames[-1].line or "")):  # the filter's ENOENT: a connect has no path
            return "the candidate tried to connect a socket (the fork server's?): denied by confinement"
        if type(exc).__module__ == "sqlite3":
            for db in _databases:
                what = db and protected_target(db)
                if what:
                    return f"the candidate tried to write {what} ({db}): denied by confinement ({exc})"
        exc = exc.__cause__ or exc.__context__
    return None
