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
