"""Which confinement variant lets a CUDA worker start (follows device call 7, reports/2026-11-27-engine).

    python3 reports/2026-11-27-confinement/cuda_probe.py            # every variant, each in a fresh process
    python3 reports/2026-11-27-confinement/cuda_probe.py VARIANT    # one variant, in this process

Each variant applies one confinement set-up of mkbench.sandbox, then makes the CUDA calls a worker
makes (torch: device count, a tensor, a reduction; Triton: one kernel compiled and launched) and
prints one line: the variant, what the sandbox said, OK or the first failure. Output, per-variant
logs and strace traces go to $OUT (default ./probe-out). Where strace is installed, seccomp-default
and landlock-old also run under it (PROBE_STRACE names others), and the denied calls are printed.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

OUT = os.path.abspath(os.environ.get("OUT") or "probe-out")
# PROBE_DEVICE=cpu: a self-check of this script on a machine without a GPU (Triton's interpreter)
DEVICE = os.environ.get("PROBE_DEVICE", "cuda")
TIMEOUT_S, STRACE_TIMEOUT_S = 60, 120  # strace slows the child down
BEST_SOCKET = "no-connect"  # all-new's Unix socket rule (see README.md)
# name -> what it applies; "landlock" entries: (grant own /proc/<pid>/task, whole /proc writable)
VARIANTS = {
    "none": {},
    "landlock-old": {"landlock": (False, False)},
    "landlock-new": {"landlock": (True, False)},
    "landlock-proc-rw": {"landlock": (False, True)},
    "seccomp-default": {"seccomp": "deny"},
    "seccomp-no-socket-rule": {"seccomp": "allow"},
    "seccomp-socket-EACCES": {"seccomp": "EACCES"},
    "seccomp-socket-EAFNOSUPPORT": {"seccomp": "EAFNOSUPPORT"},
    "seccomp-no-connect": {"seccomp": "no-connect"},
    "all-default": {"confine": {}},
    "all-new": {"confine": {"unix_socket": BEST_SOCKET}},
    "all-allow": {"confine": {"unix_socket": "allow"}},
}
STRACE = ["strace", "-f", "-e", "trace=socket,connect,openat,memfd_create,write"]


# --- one variant, in this (fresh) process ----------------------------------------------------------

def _caches(variant: str) -> list[str]:
    """Fresh scratch and JIT cache folders for this variant, named in the environment as the runner
    names them for a worker (core/engine/runner.py unit_env), so that Triton compiles under the rules."""
    from mkbench import sandbox
    root = os.path.join(OUT, "scratch", variant)
    shutil.rmtree(root, ignore_errors=True)
    paths = {"TMPDIR": os.path.join(root, "tmp")}
    paths.update({var: os.path.join(root, var.lower()) for var in sandbox.CACHE_VARS})
    for var, path in paths.items():
        os.makedirs(path, exist_ok=True)
        os.environ[var] = path
    return list(paths.values())


def _apply(variant: str) -> str:
    from mkbench import sandbox
    from mkbench.store_digest import key_dir
    spec = VARIANTS[variant]
    writable = _caches(variant)
    said = []
    if "landlock" in spec or "seccomp" in spec:
        sandbox._libc.prctl(sandbox._PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)  # as confine() does first
    if "landlock" in spec:
        task, whole_proc = spec["landlock"]
        keys = os.path.realpath(key_dir())
        said.append(sandbox._landlock(writable + (["/proc"] if whole_proc else []), None, keys, proc_task=task))
    if "seccomp" in spec:
        said.append(sandbox._seccomp(spec["seccomp"]))
    if "confine" in spec:
        cfg = dict(spec["confine"], scratch_root=os.environ["TMPDIR"], write=writable)
        said.append(sandbox.confine(cfg, None))  # forks: from here on this is the worker, below its reaper
    return " + ".join(said)


def _add(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):  # made a Triton kernel in _cuda
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask), mask=mask)


def _cuda() -> str:
    """The first CUDA calls a worker makes; raises on the first that fails. torch and Triton are
    imported here, after the rules (the previous probe's order; a worker has them imported before,
    by the fork server, but the driver starts at the first CUDA call either way)."""
    global tl
    import torch
    n = torch.cuda.device_count()
    x = torch.ones(4, device=DEVICE) * 2
    total = x.sum().item()

    import triton
    import triton.language as tl  # _add's global, looked up when Triton compiles it

    a = torch.arange(1000, device=DEVICE, dtype=torch.float32)
    out = torch.empty_like(a)
    triton.jit(_add)[(triton.cdiv(1000, 256),)](a, a, out, 1000, BLOCK=256)
    if not torch.equal(out, a * 2):
        raise AssertionError("Triton add: wrong result")
    return f"{n} GPU(s), sum {total}, Triton add correct (torch {torch.__version__}, triton {triton.__version__})"


def run_variant(variant: str) -> None:
    said, step, result = "", "apply", {}
    try:
        said = _apply(variant)
        step = "cuda"
        result = {"ok": True, "detail": _cuda()}
    except BaseException as exc:  # noqa: BLE001 - the point is to see it
        result = {"ok": False, "detail": f"{step}: {type(exc).__name__}: {str(exc)[:300]}"}
    print("RESULT " + json.dumps({"variant": variant, "said": said, **result}), flush=True)
    os._exit(0)  # no interpreter teardown (a half-made CUDA context can hang there)


# --- the driver: every variant in a fresh process ---------------------------------------------------

def _child(variant: str, prefix: list[str], timeout: int, log: str) -> tuple[dict | None, str]:
    env = dict(os.environ, OUT=OUT)
    env.pop("TRITON_INTERPRET", None)  # the real GPU path, whatever the caller's shell had set
    if DEVICE == "cpu":
        env["TRITON_INTERPRET"] = "1"
    start = time.monotonic()
    # a session of its own: on a timeout the whole of it goes (strace's tracees, a confined worker's reaper)
    proc = subprocess.Popen([*prefix, sys.executable, os.path.abspath(__file__), variant], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        note = f"rc {proc.returncode}"
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        note = f"TIMEOUT after {timeout} s"
    with open(log, "w") as f:
        f.write(f"# {variant}: {note}, {time.monotonic() - start:.1f} s\n# stdout\n{out}\n# stderr\n{err}\n")
    lines = [ln for ln in out.splitlines() if ln.startswith("RESULT ")]
    tail = " | ".join(err.strip().splitlines()[-3:])[:300]
    return (json.loads(lines[-1][7:]) if lines else None), f"{note}; stderr: {tail}"


def _line(variant: str, result: dict | None, note: str) -> str:
    if result is None:
        return f"{variant}: (no result) {note}"
    return f"{variant}: {result['said']!r}: " + ("OK " if result["ok"] else "FAILED ") + result["detail"]


def main() -> None:
    from mkbench import sandbox
    os.makedirs(OUT, exist_ok=True)
    lines = [f"# python {sys.version.split()[0]}, kernel {os.uname().release} {os.uname().machine}, uid {os.getuid()}, "
             f"landlock ABI {sandbox.landlock_abi()}, support: {sandbox.support()}, OUT={OUT}"]
    print(lines[0], flush=True)
    names = sys.argv[2:] or list(VARIANTS)  # `cuda_probe.py all v1 v2`: only those
    strace = shutil.which("strace")
    traced = [v for v in os.environ.get("PROBE_STRACE", "seccomp-default,landlock-old").split(",") if v in VARIANTS]
    for variant in traced if strace else []:
        trace = os.path.join(OUT, f"strace-{variant}.txt")
        result, note = _child(variant, [*STRACE, "-o", trace], STRACE_TIMEOUT_S,
                              os.path.join(OUT, f"strace-{variant}.log"))
        try:
            with open(trace, errors="replace") as f:
                denied = [ln.rstrip() for ln in f if "EPERM" in ln or "EACCES" in ln]
        except OSError as exc:
            denied = [f"(no trace: {exc})"]
        shown = [f"[strace] {_line(variant, result, note)}", f"  {len(denied)} calls denied, the last 25:"]
        shown += [f"    {ln}" for ln in denied[-25:]]
        lines += shown
        print("\n".join(shown), flush=True)
    if not strace:
        lines.append("# strace not installed: no traces")
        print(lines[-1], flush=True)
    for variant in names:
        result, note = _child(variant, [], TIMEOUT_S, os.path.join(OUT, f"{variant}.log"))
        lines.append(_line(variant, result, note))
        print(lines[-1], flush=True)
    with open(os.path.join(OUT, "cuda-probe.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] != "all":
        if sys.argv[1] not in VARIANTS:
            sys.exit(f"unknown variant {sys.argv[1]!r}; one of: {', '.join(VARIANTS)}")
        run_variant(sys.argv[1])
    else:
        main()
