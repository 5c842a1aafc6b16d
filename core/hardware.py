"""Hardware profiles (YAML): peak rates for the roofline, detection rules, per-hardware skips."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .errors import BadInput

PEAK_KEYS = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8")
# "cuda" covers torch.cuda on NVIDIA and ROCm; "xpu" is Intel's torch device; "tpu" is reached through JAX.
DEVICES = ("cuda", "xpu", "tpu", "cpu")


@dataclass(frozen=True)
class HardwareProfile:
    name: str
    display_name: str
    vendor: str
    architecture: str
    device: str
    memory_bandwidth_gbs: float
    peak_tflops: dict[str, float]
    l2_cache_mb: float
    compute_units: int
    backends: tuple[str, ...]
    detect: dict[str, Any]
    skip_shape_roles: tuple[str, ...] = ()
    skip_tasks: tuple[str, ...] = ()
    baselines: tuple[str, ...] = ("eager", "torch_compile")
    source: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def matches(self, probe: dict[str, Any]) -> bool:
        """Whether a worker's device probe satisfies this profile's detection rule."""
        rule = self.detect
        if rule.get("no_accelerator"):
            return not probe.get("accelerator")
        if probe.get("accelerator") != self.device:
            return False
        if "vendor" in rule and rule["vendor"] != probe.get("vendor"):
            return False
        pattern = rule.get("device_name_regex")
        if pattern and not re.search(pattern, probe.get("device_name", "")):
            return False
        if "min_memory_gb" in rule and probe.get("memory_gb", 0) < rule["min_memory_gb"]:
            return False
        return True

    def expected_device(self) -> str:
        rule = self.detect
        if rule.get("no_accelerator"):
            return "no accelerator"
        return f"a {self.device} device matching /{rule.get('device_name_regex', '.*')}/ (vendor {self.vendor})"


def _fail(path: Path, fieldname: str, why: str) -> BadInput:
    return BadInput(f"{path}: field '{fieldname}' {why}")


def _num(path: Path, data: dict, key: str, required: bool = True) -> float | None:
    if key not in data:
        if required:
            raise _fail(path, key, "is missing")
        return None
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise _fail(path, key, f"must be a positive number, got {value!r}")
    return float(value)


def _str(path: Path, data: dict, key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise _fail(path, key, "is missing" if key not in data else f"must be a non-empty string, got {value!r}")
    return value


def _str_list(path: Path, data: dict, key: str, default=()) -> tuple[str, ...]:
    value = data.get(key, list(default))
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(path, key, f"must be a list of strings, got {value!r}")
    return tuple(value)


def parse_profile(path: str | Path, data: Any) -> HardwareProfile:
    path = Path(path)
    if not isinstance(data, dict):
        raise BadInput(f"{path}: a hardware profile must be a YAML mapping, got {type(data).__name__}")
    name = _str(path, data, "name")
    if not re.fullmatch(r"[a-z0-9][a-z0-9_\-]*", name):
        raise _fail(path, "name", f"must be lower-case letters, digits, '-' or '_', got {name!r}")
    device = _str(path, data, "device")
    if device not in DEVICES:
        raise _fail(path, "device", f"must be one of {DEVICES}, got {device!r}")
    peaks = data.get("peak_tflops")
    if not isinstance(peaks, dict) or not peaks:
        raise _fail(path, "peak_tflops", "must be a mapping of dtype to TFLOP/s")
    for key, value in peaks.items():
        if key not in PEAK_KEYS:
            raise _fail(path, f"peak_tflops.{key}", f"is not a known dtype ({', '.join(PEAK_KEYS)})")
        _num(path, peaks, key)
    detect = data.get("detect")
    if not isinstance(detect, dict) or not detect:
        raise _fail(path, "detect", "must be a mapping with device_name_regex or no_accelerator")
    if "device_name_regex" in detect:
        try:
            re.compile(detect["device_name_regex"])
        except (re.error, TypeError) as exc:
            raise _fail(path, "detect.device_name_regex", f"is not a valid regex: {exc}") from None
    elif not detect.get("no_accelerator"):
        raise _fail(path, "detect", "needs device_name_regex or no_accelerator: true")
    if not isinstance(detect.get("priority", 0), int):
        raise _fail(path, "detect.priority", f"must be an integer, got {detect['priority']!r}")
    unknown = set(detect) - {"device_name_regex", "no_accelerator", "vendor", "min_memory_gb", "priority"}
    if unknown:
        raise _fail(path, f"detect.{sorted(unknown)[0]}", "is not a known detection rule")
    skip = data.get("skip", {}) or {}
    if not isinstance(skip, dict):
        raise _fail(path, "skip", "must be a mapping")
    known = {"name", "display_name", "vendor", "architecture", "device", "memory_bandwidth_gbs",
             "peak_tflops", "l2_cache_mb", "compute_units", "backends", "detect", "skip", "baselines"}
    return HardwareProfile(
        name=name,
        display_name=_str(path, data, "display_name"),
        vendor=_str(path, data, "vendor"),
        architecture=_str(path, data, "architecture"),
        device=device,
        memory_bandwidth_gbs=_num(path, data, "memory_bandwidth_gbs"),
        peak_tflops={k: float(v) for k, v in peaks.items()},
        l2_cache_mb=_num(path, data, "l2_cache_mb"),
        compute_units=int(_num(path, data, "compute_units")),
        backends=_str_list(path, data, "backends"),
        detect=dict(detect),
        skip_shape_roles=_str_list(path, skip, "shape_roles"),
        skip_tasks=_str_list(path, skip, "tasks"),
        baselines=_str_list(path, data, "baselines", ("eager", "torch_compile")),
        source=str(path),
        extra={k: v for k, v in data.items() if k not in known},
    )


def load_profile(path: str | Path) -> HardwareProfile:
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark else ""
        raise BadInput(f"{path}{where}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
    except OSError as exc:
        raise BadInput(f"{path}: cannot read: {exc.strerror}") from None
    return parse_profile(path, data)


def load_profile_dir(root: str | Path) -> list[HardwareProfile]:
    return [load_profile(p) for p in sorted(Path(root).glob("*.yaml"))]


def resolve_profile(requested: str, profiles: dict[str, HardwareProfile], probe: dict[str, Any]) -> HardwareProfile:
    """``auto`` picks the matching profile; a named profile must match the device present."""
    found = probe.get("device_name") if probe.get("accelerator") else "no GPU (CPU only)"
    if requested == "auto":
        matches = [p for p in profiles.values() if p.matches(probe)]
        if not matches:
            raise BadInput(f"--hw auto: no hardware profile matches the device found ({found}); add a profile or pass "
                           "--hw")
        # Explicit priority first (a plugin's extra CPU profile must not displace `cpu`), then the
        # most specific rule (e.g. 'H100 PCIe' over 'H100').
        return max(matches, key=lambda p: (p.detect.get("priority", 0), len(p.detect.get("device_name_regex", ""))))
    if requested not in profiles:
        raise BadInput(f"unknown hardware profile {requested!r} (known: {', '.join(sorted(profiles))})")
    profile = profiles[requested]
    if not profile.matches(probe):
        raise BadInput(f"--hw {requested} expects {profile.expected_device()}, but the device found is {found}")
    return profile


PEAK_KEY = {"float64": "fp64", "float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "int8": "int8"}


def roofline_times_us(row: dict[str, Any], hw: HardwareProfile) -> tuple[float, float] | None:
    """(memory time, math time) in microseconds: this row's bytes at the profile's peak bandwidth and
    its FLOPs at the peak rate of the precision its math runs in (the task's ``math_peak``, recorded
    in the row's ``extra``, e.g. int8 for an int8 x int8 matmul with bfloat16 output; otherwise the
    row's dtype); None where the row counts neither."""
    extra = row.get("extra")
    key = (extra.get("math_peak") if isinstance(extra, dict) else None) or PEAK_KEY.get(row["dtype"], "fp32")
    peak = hw.peak_tflops.get(key) or hw.peak_tflops.get("fp32")
    if not row.get("bytes") and not row.get("flops"):
        return None
    t_mem = (row.get("bytes") or 0.0) / (hw.memory_bandwidth_gbs * 1e9)
    t_math = (row.get("flops") or 0.0) / (peak * 1e12) if peak else 0.0
    return t_mem * 1e6, t_math * 1e6


def roofline_floor_us(row: dict[str, Any], hw: HardwareProfile) -> float | None:
    """The least time the profile's peak bandwidth and FLOP rate allow for this row's work."""
    times = roofline_times_us(row, hw)
    return None if times is None else max(times)
