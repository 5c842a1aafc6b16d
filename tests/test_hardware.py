import pytest

from mkbench.errors import BadInput
from mkbench.hardware import resolve_profile
from mkbench.plugins import build_registry

H100 = {"accelerator": "cuda", "vendor": "nvidia", "device_name": "NVIDIA H100 80GB HBM3"}
H200 = {"accelerator": "cuda", "vendor": "nvidia", "device_name": "NVIDIA H200"}
CPU = {"accelerator": None}


@pytest.fixture(scope="module")
def profiles():
    return build_registry().hardware


def test_auto_detects(profiles):
    assert resolve_profile("auto", profiles, H100).name == "h100"
    assert resolve_profile("auto", profiles, H200).name == "h200"
    assert resolve_profile("auto", profiles, CPU).name == "cpu"


def test_named_profile_must_match_device(profiles):
    assert resolve_profile("h100", profiles, H100).name == "h100"
    with pytest.raises(BadInput, match="--hw h100 expects .*H100.*but the device found is NVIDIA H200"):
        resolve_profile("h100", profiles, H200)
    with pytest.raises(BadInput, match="--hw h200 expects .*but the device found is no GPU"):
        resolve_profile("h200", profiles, CPU)


def test_unknown_gpu_has_no_profile(profiles):
    with pytest.raises(BadInput, match="no hardware profile matches the device found \\(NVIDIA A10\\)"):
        resolve_profile("auto", profiles, {"accelerator": "cuda", "vendor": "nvidia", "device_name": "NVIDIA A10"})


def test_profiles_cite_their_numbers():
    # every built-in YAML explains where its rates come from
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent / "hardware_profiles"
    for path in root.glob("*.yaml"):
        assert path.read_text().lstrip().startswith("#"), path


# --- the built-in profile set -------------------------------------------------------------------

import re  # noqa: E402
from pathlib import Path  # noqa: E402

import yaml  # noqa: E402

PROFILE_DIR = Path(__file__).resolve().parent.parent / "hardware_profiles"
NUMERIC_KEYS = ("memory_bandwidth_gbs", "l2_cache_mb", "compute_units")


def _cuda(vendor, name, gib):
    return {"accelerator": "cuda", "vendor": vendor, "device_name": name, "memory_gb": gib}


# Device names as torch (or JAX, for TPUs) reports them; memory_gb as the worker rounds
# total_memory / 2**30.
DETECTION_CASES = [
    (_cuda("nvidia", "NVIDIA H100 80GB HBM3", 79.1), "h100"),
    (_cuda("nvidia", "NVIDIA H100 PCIe", 79.6), "h100-pcie"),
    (_cuda("nvidia", "NVIDIA H200", 139.8), "h200"),
    (_cuda("nvidia", "NVIDIA B200", 178.4), "b200"),
    (_cuda("nvidia", "NVIDIA A100-SXM4-80GB", 79.2), "a100-80gb"),
    (_cuda("nvidia", "NVIDIA L40S", 44.4), "l40s"),
    (_cuda("nvidia", "NVIDIA GeForce RTX 4090", 23.6), "rtx4090"),
    (_cuda("nvidia", "NVIDIA GeForce RTX 5090", 31.4), "rtx5090"),
    (_cuda("amd", "AMD Instinct MI300X", 192.0), "mi300x"),
    (_cuda("amd", "AMD Instinct MI250X", 64.0), "mi250x"),
    (_cuda("amd", "AMD Instinct MI250X/MI250", 64.0), "mi250x"),
    ({"accelerator": "xpu", "vendor": "intel", "device_name": "Intel(R) Data Center GPU Max 1550"}, "max1550"),
    ({"accelerator": "tpu", "vendor": "google", "device_name": "TPU v5 lite"}, "tpu-v5e"),
    ({"accelerator": "tpu", "vendor": "google", "device_name": "TPU v5e"}, "tpu-v5e"),
    ({"accelerator": None}, "cpu"),
]

# Devices that resemble a profiled one but differ in rates or memory: no profile may claim them.
UNPROFILED_DEVICES = [
    _cuda("nvidia", "NVIDIA H100 NVL", 93.1),
    _cuda("nvidia", "NVIDIA GH200 480GB", 94.5),
    _cuda("nvidia", "NVIDIA H200 NVL", 139.8),
    _cuda("nvidia", "NVIDIA GB200", 184.0),
    _cuda("nvidia", "NVIDIA A100-SXM4-40GB", 39.4),
    _cuda("nvidia", "NVIDIA A100 80GB PCIe", 79.2),
    _cuda("nvidia", "NVIDIA A100-PCIE-40GB", 39.4),
    _cuda("nvidia", "NVIDIA L40", 44.4),
    _cuda("nvidia", "NVIDIA GeForce RTX 4090 D", 23.6),
    _cuda("nvidia", "NVIDIA GeForce RTX 4090 Laptop GPU", 15.6),
    _cuda("nvidia", "NVIDIA GeForce RTX 5090 D", 31.4),
    _cuda("amd", "AMD Instinct MI325X", 256.0),
    {"accelerator": "tpu", "vendor": "google", "device_name": "TPU v5"},
    {"accelerator": "tpu", "vendor": "google", "device_name": "TPU v5p"},
    {"accelerator": "tpu", "vendor": "google", "device_name": "TPU v6 lite"},
]


def _probe_id(probe):
    return probe.get("device_name") or "no-accelerator"


@pytest.fixture(scope="module")
def builtin_profiles():
    """Only this package's own profiles (installed third-party plugins may add more)."""
    reg = build_registry()
    return {n: p for n, p in reg.hardware.items() if reg.origin[("hardware profile", n)] == "builtin_hardware"}


def test_builtin_profiles_load_cleanly():
    reg = build_registry()
    assert reg.problems == []
    builtin = {n for n in reg.hardware if reg.origin[("hardware profile", n)] == "builtin_hardware"}
    assert len(builtin) >= 13, sorted(builtin)
    expected = {"h100", "h100-pcie", "h200", "b200", "a100-80gb", "l40s", "rtx4090", "rtx5090",
                "mi300x", "mi250x", "max1550", "tpu-v5e", "cpu"}
    assert expected <= builtin, expected - builtin


@pytest.mark.parametrize("path", sorted(PROFILE_DIR.glob("*.yaml")), ids=lambda p: p.name)
def test_profile_file_is_named_after_its_profile(path, profiles):
    name = yaml.safe_load(path.read_text())["name"]
    assert path.stem == name
    assert name in profiles


@pytest.mark.parametrize("path", sorted(PROFILE_DIR.glob("*.yaml")), ids=lambda p: p.name)
def test_every_number_is_cited(path):
    """Each numeric spec sits on its own line with a comment saying where it comes from, and the
    file names its sources (a datasheet, a whitepaper or an explicit 'Source' line)."""
    text = path.read_text()
    data = yaml.safe_load(text)
    keys = list(NUMERIC_KEYS) + list(data["peak_tflops"])
    for key in keys:
        lines = [ln for ln in text.splitlines() if re.match(rf"\s*{key}:\s*[0-9.]+", ln)]
        assert len(lines) == 1, f"{path.name}: expected one block-style line for {key}, got {lines}"
        assert "#" in lines[0], f"{path.name}: {key} has no citation comment: {lines[0]!r}"
    lowered = text.lower()
    assert any(w in lowered for w in ("datasheet", "data sheet", "whitepaper", "source")), path.name
    if data["device"] != "cpu":
        # a vendor document with a year, e.g. "NVIDIA A100 Tensor Core GPU datasheet (2021)"
        assert re.search(r"\((?:v[\d.]+, )?20\d\d\)", text), f"{path.name}: no dated source"
        # dense vs sparse and what compute_units counts are stated
        assert "dense" in lowered, path.name
        assert "compute_units counts" in lowered, path.name


@pytest.mark.parametrize("probe,expected", DETECTION_CASES, ids=[_probe_id(c[0]) for c in DETECTION_CASES])
def test_auto_detection(profiles, builtin_profiles, probe, expected):
    assert resolve_profile("auto", profiles, probe).name == expected
    # detection is unambiguous: no other built-in profile claims the same device
    assert [p.name for p in builtin_profiles.values() if p.matches(probe)] == [expected]
    assert resolve_profile(expected, profiles, probe).name == expected


@pytest.mark.parametrize("probe", UNPROFILED_DEVICES, ids=_probe_id)
def test_lookalike_devices_are_not_claimed(profiles, probe):
    with pytest.raises(BadInput, match="no hardware profile matches the device found"):
        resolve_profile("auto", profiles, probe)


def test_h100_sxm_profile_refuses_pcie(profiles):
    pcie = _cuda("nvidia", "NVIDIA H100 PCIe", 79.6)
    with pytest.raises(BadInput, match="--hw h100 expects .*but the device found is NVIDIA H100 PCIe"):
        resolve_profile("h100", profiles, pcie)
    with pytest.raises(BadInput, match="--hw h100-pcie expects .*but the device found is NVIDIA H100 80GB HBM3"):
        resolve_profile("h100-pcie", profiles, H100)


def test_a100_profile_refuses_40gb(profiles):
    with pytest.raises(BadInput, match="--hw a100-80gb expects"):
        resolve_profile("a100-80gb", profiles, _cuda("nvidia", "NVIDIA A100-SXM4-40GB", 39.4))
    # the memory rule holds even if a driver reported the 80 GB name for a smaller part
    with pytest.raises(BadInput, match="--hw a100-80gb expects"):
        resolve_profile("a100-80gb", profiles, _cuda("nvidia", "NVIDIA A100-SXM4-80GB", 39.4))


def test_vendor_and_device_kind_must_match(profiles):
    # an AMD name under an NVIDIA vendor tag (or a TPU kind on a CUDA device) is not accepted
    with pytest.raises(BadInput):
        resolve_profile("mi300x", profiles, _cuda("nvidia", "AMD Instinct MI300X", 192.0))
    with pytest.raises(BadInput):
        resolve_profile("tpu-v5e", profiles, {"accelerator": "cuda", "vendor": "google", "device_name": "TPU v5 lite"})


@pytest.mark.parametrize("name", ["h100", "h100-pcie", "h200", "b200", "a100-80gb", "l40s", "rtx4090",
                                  "rtx5090", "mi300x", "mi250x", "max1550", "tpu-v5e"])
def test_profile_rates_are_consistent(profiles, name):
    """Dense rates only: tensor/matrix rates never below the next-wider type and at most 2x it per
    halving of the width (a sparse figure stored by mistake would break the dense ladder)."""
    p = profiles[name].peak_tflops
    ladder = [k for k in ("tf32", "bf16", "fp8") if k in p]
    for narrow, wide in zip(ladder[1:], ladder):
        assert p[wide] <= p[narrow] <= 2.05 * p[wide], (name, wide, narrow, p)
    if "fp16" in p and "bf16" in p:
        assert p["fp16"] == p["bf16"], (name, p)
    if "int8" in p and "fp8" in p:
        # equal, or int8 at twice the rate where fp8 is listed with FP32 accumulation (GeForce)
        assert p["fp8"] <= p["int8"] <= 2 * p["fp8"], (name, p)
    vendors = {"nvidia": ("cuda",), "amd": ("cuda",), "intel": ("xpu",), "google": ("tpu",)}
    assert profiles[name].device in vendors[profiles[name].vendor]


# --- the roofline's FLOP rate: the precision the math runs in (Task.math_peak) ------------------------

def test_roofline_uses_the_tasks_math_peak_not_the_output_dtype():
    # seen on one H200 (reports/2026-11-28-main-job-1gpu): mkbench's own w8a8_matmul reference, large
    # shape, bfloat16 output, timed at 1726.4 us was called hack, "under the roofline floor of 2222.6
    # us": its 2.2 TFLOP of int8 products were counted at the bfloat16 rate (989 TFLOP/s), not int8's
    from mkbench.hardware import roofline_floor_us
    from mkbench.task import load_task_file

    hw = build_registry().hardware["h200"]
    task = load_task_file(Path(__file__).resolve().parents[1] / "tasks" / "quantization" / "w8a8_matmul.py")
    shape = task.shape("large")
    row = {"dtype": "bfloat16", "flops": task.flops(shape), "bytes": 0.0}
    assert roofline_floor_us(row, hw) == pytest.approx(2222.6, abs=0.1)  # the rate that accused it
    floor = roofline_floor_us({**row, "extra": {"math_peak": task.math_peak}}, hw)
    assert task.math_peak == "int8" and floor == pytest.approx(task.flops(shape) / hw.peak_tflops["int8"] / 1e6)
    assert floor < 1726.4


def test_math_peak_must_name_a_profile_peak():
    from mkbench.task import Shape, Task

    with pytest.raises(BadInput, match="math_peak must be one of"):
        Task(name="t", category="matmul", description="d", reference=lambda x: x, make_inputs=lambda s, d, g: (),
             shapes=[Shape("small", {}, "small")], contract=None, flops=lambda s: 0.0, bytes=lambda s, d: 0.0,
             math_peak="int4")
