"""What the CUDA and HIP backends share: both hold C++ device code in a Python candidate file, both
are compiled with nvcc where no GPU is present and with NVRTC (through CuPy) on an NVIDIA GPU.

* ``sources``: the entry-point check and the static source rule (which strings of a candidate are
  its CUDA / HIP sources, ``#line`` directives that make compiler messages name the candidate's
  file and line), and ``kernel_names``, the ``__global__`` functions those sources define;
* ``nvcc``: finding nvcc, the target of a hardware profile, compile-only builds;
* ``nvrtc``: torch's stream as a CuPy stream, CuPy's compile errors;
* ``launches``: the launch counter behind the decoy check;
* ``checks``: static integrity findings (Python launch idioms lifted, compute inside the sources).

What differs stays with each backend: CuPy/``load_inline`` for CUDA; the HIP-on-CUDA mapping
header, hiprtc/hipcc and the loader for HIP.
"""

from .sources import kernel_names

__all__ = ["kernel_names"]
