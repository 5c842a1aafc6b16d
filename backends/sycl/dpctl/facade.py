"""The pyopencl host API that candidates of the sycl backend are written against, rebuilt over a
SYCL queue (dpctl) for the SYCL path: the same candidate file runs unchanged through either path.

While :class:`installed` is open, ``import pyopencl`` and ``import pyopencl.array`` find the
modules of this file instead of pyopencl. They hold what the contract lets a candidate use:

* ``prog.<name>(queue, global_size, local_size, *args)``: a launch through ``SyclQueue.submit_async``
  of the kernel built from OPENCL_SOURCE, counted for the decoy check. Sizes are given in OpenCL's
  order (dimension 0 is ``get_global_id(0)``, the fastest-varying) and reversed for SYCL, whose
  last dimension is the fastest-varying. Buffers (``array.data``, or the array) go as USM pointers,
  numpy scalars as ctypes values of their width (half as raw bytes), ``LocalMemory(n)`` as
  ``dpctl.WorkGroupMemory(n)``.
* ``pyopencl.array``: ``Array``, ``empty``, ``empty_like``, ``zeros``, ``zeros_like`` and
  ``to_device``, C-contiguous arrays in USM device memory; ``reshape``/``ravel``/``view`` share
  that memory; ``fill`` runs the backend's fill kernel; ``get`` reads back to the host, and is
  recorded as a readback, as on the pyopencl path.
* ``queue.finish()``, ``queue.device`` (the properties launches are sized by), ``queue.context``,
  ``event.wait()``.

What the contract forbids raises :class:`~..common.Cheat` (verdict ``hack``) when called: array
arithmetic and compute methods, the rest of ``pyopencl.array`` and the library modules (``clmath``,
``elementwise``, ...), which run pyopencl's own kernels there, and queues, contexts or programs of
the candidate's own. Anything else of pyopencl is missing, with an error that says so.
"""

from __future__ import annotations

import ctypes
import importlib.abc
import math
import sys
import types
from typing import Any

import dpctl
import numpy as np

from ..checks import ARRAY_COMPUTE, LIBRARY_MODULES, OWN_RUNTIME
from ..common import OPEN, Cheat

SUPPORTED = ("pyopencl.LocalMemory, pyopencl.array.{Array, empty, empty_like, zeros, zeros_like, to_device}, "
             "prog.<kernel>(queue, global_size, local_size, *args), queue.finish(), event.wait()")

# numpy scalar -> the ctypes value dpctl passes by value; float16 has no ctypes type (see _scalar).
SCALAR_CTYPES = {np.dtype(np.int8): ctypes.c_int8, np.dtype(np.uint8): ctypes.c_uint8,
                 np.dtype(np.int16): ctypes.c_int16,
                 np.dtype(np.uint16): ctypes.c_uint16, np.dtype(np.int32): ctypes.c_int32,
                 np.dtype(np.uint32): ctypes.c_uint32,
                 np.dtype(np.int64): ctypes.c_int64, np.dtype(np.uint64): ctypes.c_uint64,
                 np.dtype(np.float32): ctypes.c_float, np.dtype(np.float64): ctypes.c_double}


def _not_here(name: str) -> AttributeError:
    return AttributeError(f"{name} is not part of the pyopencl API on the sycl backend's SYCL path "
                          f"(supported: {SUPPORTED}; see docs/backends/sycl.md)")


def _forbidden(name: str, why: str):
    def call(*args, **kwargs):
        raise Cheat(f"{name}: {why}")
    call.__name__ = name.rsplit(".", 1)[-1]
    return call


# --- queue, device, events ----------------------------------------------------------------

class Device:
    """``queue.device``: the properties a candidate may size its launches by."""

    def __init__(self, d: dpctl.SyclDevice):
        self.name = d.name
        self.max_work_group_size = d.max_work_group_size
        self.max_work_item_sizes = list(d.max_work_item_sizes3d)
        self.local_mem_size = d.local_mem_size
        self.max_compute_units = d.max_compute_units
        self.global_mem_size = d.global_mem_size
        self.global_mem_cache_size = d.global_mem_cache_size

    def __getattr__(self, name: str):
        raise _not_here(f"queue.device.{name}")


class Context:
    """``queue.context``: names the device; nothing can be created in it (no queues, programs or
    buffers of the candidate's own)."""

    def __init__(self, device: Device):
        self.devices = [device]


class Queue:
    """The ``queue`` argument: the runtime's in-order SYCL queue with profiling, which the timer
    brackets. Launches and allocations name it, as they name the pyopencl queue."""

    def __init__(self, rt):
        self._mkb_rt = rt
        self.device = Device(rt.device)
        self.context = Context(self.device)

    def finish(self) -> None:
        self._mkb_rt.wait()

    def flush(self) -> None:
        """Nothing to do: submissions reach the SYCL runtime at once."""

    def __getattr__(self, name: str):
        raise _not_here(f"queue.{name}")


class Event:
    """What a launch returns."""

    def __init__(self, event: dpctl.SyclEvent):
        self._mkb_event = event

    def wait(self) -> None:
        self._mkb_event.wait()


def _runtime_of(queue):
    if not isinstance(queue, Queue):
        raise TypeError(f"expected the queue passed to kernel_function, got {type(queue).__name__}")
    return queue._mkb_rt


# --- memory ----------------------------------------------------------------------------------

class Buffer:
    """``array.data``: a USM device allocation, passed to kernels as a pointer."""

    def __init__(self, memory, nbytes: int):
        self._mkb_memory = memory
        self.size = nbytes


class LocalMemory:
    """``pyopencl.LocalMemory(nbytes)``: a ``__local`` kernel argument of that many bytes."""

    def __init__(self, size: int):
        if int(size) <= 0:
            raise ValueError(f"LocalMemory needs a positive size, got {size}")
        self.size = int(size)


class _Flags:
    c_contiguous = True
    forc = True

    def __init__(self, ndim: int):
        self.f_contiguous = ndim <= 1


class Array:
    """A C-contiguous array in USM device memory (``pyopencl.array.Array``'s subset)."""

    def __init__(self, queue, shape, dtype, order: str = "C"):
        if order != "C":
            raise TypeError("arrays on the SYCL path are C-contiguous only (order='C')")
        rt = _runtime_of(queue)
        shape = _shape(shape)
        dtype = np.dtype(dtype)
        nbytes = math.prod(shape) * dtype.itemsize
        self._mkb_init(queue, shape, dtype, Buffer(rt.allocate(nbytes), nbytes))

    def _mkb_init(self, queue, shape, dtype, data: Buffer) -> None:
        self.queue, self.shape, self.dtype, self.data = queue, shape, dtype, data
        self.base_data, self.offset = data, 0

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def strides(self) -> tuple[int, ...]:
        return tuple(math.prod(self.shape[k + 1:]) * self.dtype.itemsize for k in range(self.ndim))

    @property
    def flags(self) -> _Flags:
        return _Flags(self.ndim)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def _mkb_view(self, shape, dtype) -> "Array":
        view = object.__new__(Array)
        view._mkb_init(self.queue, shape, dtype, self.data)
        return view

    def reshape(self, *shape, order: str = "C") -> "Array":
        if order != "C":
            raise TypeError("arrays on the SYCL path are C-contiguous only (order='C')")
        shape = _shape(shape[0] if len(shape) == 1 else shape)
        if -1 in shape:
            known = math.prod(s for s in shape if s != -1)
            shape = tuple(self.size // known if s == -1 and known else s for s in shape)
        if math.prod(shape) != self.size:
            raise ValueError(f"cannot reshape an array of size {self.size} into shape {shape}")
        return self._mkb_view(shape, self.dtype)

    def ravel(self) -> "Array":
        return self._mkb_view((self.size,), self.dtype)

    def view(self, dtype=None) -> "Array":
        dtype = self.dtype if dtype is None else np.dtype(dtype)
        if dtype.itemsize != self.dtype.itemsize:
            raise TypeError(f"view as {dtype} needs an item size of {self.dtype.itemsize} bytes on the SYCL path")
        return self._mkb_view(self.shape, dtype)

    def fill(self, value, queue=None, wait_for=None) -> "Array":
        """Every element set to ``value`` by the backend's fill kernel (allowed, as pyopencl's is)."""
        if self.size:
            self.queue._mkb_rt.fill(self.data._mkb_memory, np.array(value, self.dtype), self.size)
        return self

    def get(self, queue=None, ary=None, async_=None) -> np.ndarray:
        """The contents on the host: a readback, which a call that also launches its own kernels
        may not do (recorded in the watch, as on the pyopencl path)."""
        for w in OPEN:
            w.readbacks.append("read of a buffer into host memory")
        host = self.queue._mkb_rt.download(self.data._mkb_memory, self.shape, self.dtype)
        if ary is not None:
            ary[...] = host
            return ary
        return host

    def __getitem__(self, key):
        raise _not_here("Array indexing and slicing")

    def __setitem__(self, key, value):
        raise _not_here("Array item assignment")

    def __repr__(self) -> str:
        return f"<pyopencl.array.Array on a SYCL queue: shape={self.shape} dtype={self.dtype}>"


def _compute_refused(name: str):
    def method(self, *args, **kwargs):
        raise Cheat(f"Array.{name}: pyopencl.array computation runs pyopencl's own kernels, not the candidate's")
    method.__name__ = name
    return method


for _name in sorted(ARRAY_COMPUTE) + [f"__{op}__" for op in (
        "add", "radd", "iadd", "sub", "rsub", "isub", "mul", "rmul", "imul", "truediv", "rtruediv", "itruediv",
        "floordiv", "rfloordiv", "mod", "rmod", "pow", "rpow", "neg", "pos", "abs", "and", "rand", "or", "ror",
        "xor", "rxor", "lt", "le", "gt", "ge", "matmul", "rmatmul", "invert")]:
    setattr(Array, _name, _compute_refused(_name))


def _shape(shape) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def empty(queue, shape, dtype, order: str = "C", allocator=None) -> Array:
    if allocator is not None:
        raise TypeError("allocators are not supported on the SYCL path: arrays live in USM device memory")
    return Array(queue, shape, dtype, order)


def empty_like(ary: Array, queue=None, allocator=None) -> Array:
    if not isinstance(ary, Array):
        raise TypeError(f"empty_like needs an array, got {type(ary).__name__}")
    return empty(queue or ary.queue, ary.shape, ary.dtype, allocator=allocator)


def zeros(queue, shape, dtype, order: str = "C", allocator=None) -> Array:
    return empty(queue, shape, dtype, order, allocator).fill(0)


def zeros_like(ary: Array) -> Array:
    return empty_like(ary).fill(0)


def to_device(queue, ary, allocator=None) -> Array:
    """An upload of a host numpy array (small constants: the inputs arrive on the device)."""
    host = np.ascontiguousarray(ary)
    out = empty(queue, host.shape, host.dtype, allocator=allocator)
    _runtime_of(queue).upload_into(out.data._mkb_memory, host)
    return out


# --- the program and its kernels --------------------------------------------------------------

class Kernel:
    """``prog.<name>``: a kernel built from OPENCL_SOURCE, launched through the SYCL queue."""

    def __init__(self, rt, kernel, name: str):
        self._mkb_rt, self._mkb_kernel = rt, kernel
        self.function_name = name
        self.num_args = kernel.num_args

    def __call__(self, queue, global_size, local_size, *args, global_offset=None, wait_for=None, g_times_l=False,
                 allow_empty_ndrange=False):
        rt = self._mkb_rt
        if queue is not rt.facade_queue:
            raise TypeError(f"prog.{self.function_name}: launch on the queue passed to kernel_function")
        if global_offset is not None or g_times_l:
            raise _not_here("global_offset / g_times_l")
        if len(args) != self.num_args:
            raise TypeError(f"prog.{self.function_name} takes {self.num_args} kernel arguments, got {len(args)}")
        gsize = _sizes(global_size)
        lsize = None if local_size is None else _sizes(local_size)
        if lsize is not None and len(lsize) != len(gsize):
            raise ValueError(f"prog.{self.function_name}: global size {gsize} and local size {lsize} differ in "
                             "dimensions")
        if lsize is not None and any(g % l for g, l in zip(gsize, lsize)):
            raise ValueError(f"prog.{self.function_name}: the global size {gsize} must be a multiple of the local size "
                             f"{lsize}")
        converted = [self._arg(i, a) for i, a in enumerate(args)]
        if 0 in gsize:
            if not allow_empty_ndrange:
                raise ValueError(f"prog.{self.function_name}: empty global size {gsize} (allow_empty_ndrange=True "
                                 "skips it)")
            return Event(dpctl.SyclEvent())
        for w in OPEN:
            w.own += 1
        return Event(rt.submit(self._mkb_kernel, converted, gsize, lsize, self.function_name))

    def _arg(self, i: int, a):
        if isinstance(a, Array):
            a = a.data
        if isinstance(a, Buffer):
            return a._mkb_memory
        if isinstance(a, LocalMemory):
            return self._mkb_rt.local_memory(a.size)
        if isinstance(a, np.generic):
            return _scalar(a)
        raise TypeError(f"argument {i} of prog.{self.function_name} is {type(a).__name__}: pass buffers as array.data, "
                        "scalars as numpy scalars of the parameter's type (np.int32(n), np.float32(x), np.int64(n)), "
                        "local memory as pyopencl.LocalMemory(nbytes)")


def _scalar(v: np.generic):
    ctype = SCALAR_CTYPES.get(v.dtype)
    if ctype is not None:
        return ctype(v.item())
    if v.dtype == np.float16:
        return dpctl.RawKernelArg(np.asarray(v).tobytes())
    raise TypeError(f"a numpy {v.dtype} scalar has no OpenCL C kernel-argument type")


def _sizes(size) -> tuple[int, ...]:
    sizes = _shape(size)
    if not 1 <= len(sizes) <= 3:
        raise ValueError(f"launch sizes have 1 to 3 dimensions, got {sizes}")
    return sizes


class Program:
    """``prog``: ``prog.<name>`` is the kernel of that name, created once. The backend's own
    attributes carry a ``_mkb_`` prefix, so no kernel name is shadowed."""

    def __init__(self, rt, program, names: list[str]):
        self._mkb_rt, self._mkb_program, self._mkb_names = rt, program, names
        self._mkb_kernels: dict[str, Kernel] = {}

    def __getattr__(self, name: str) -> Kernel:
        if name.startswith("__") or name.startswith("_mkb_"):
            raise AttributeError(name)
        kernel = self._mkb_kernels.get(name)
        if kernel is None:
            if not self._mkb_program.has_sycl_kernel(name):
                raise AttributeError(f"OPENCL_SOURCE defines no kernel {name!r} (it defines: "
                                     f"{', '.join(self._mkb_names) or 'none'})")
            kernel = self._mkb_kernels[name] = Kernel(self._mkb_rt, self._mkb_program.get_sycl_kernel(name), name)
        return kernel


# --- the modules a candidate imports ------------------------------------------------------------

class _Module(types.ModuleType):
    """A facade module: its names, then what ``missing(name)`` gives for any other."""

    def __init__(self, name: str, names: dict[str, Any], missing):
        super().__init__(name, __doc__)
        self.__dict__.update(names)
        self._mkb_missing = missing

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._mkb_missing(name)


def _library_function(module: str):
    return lambda name: _forbidden(f"{module}.{name}", "pyopencl's library kernels compute, not the candidate's")


def _cl_missing(name: str):
    if name in OWN_RUNTIME:
        return _forbidden(f"pyopencl.{name}", OWN_RUNTIME[name])
    raise _not_here(f"pyopencl.{name}")


array_module = _Module("pyopencl.array", {"Array": Array, "empty": empty, "empty_like": empty_like, "zeros": zeros,
                                          "zeros_like": zeros_like, "to_device": to_device},
                       lambda name: _forbidden(f"pyopencl.array.{name}",
                                               "pyopencl.array functions run pyopencl's own kernels, "
                                                                          "not the candidate's"))
library_modules = {m: _Module(m, {}, _library_function(m)) for m in LIBRARY_MODULES}
cl_module = _Module("pyopencl", {"LocalMemory": LocalMemory, "array": array_module,
                                 **{m.rsplit(".", 1)[1]: mod for m, mod in library_modules.items()}}, _cl_missing)
cl_module.__path__ = []  # a package, so that `import pyopencl.<other>` asks the finder below
MODULES = {"pyopencl": cl_module, "pyopencl.array": array_module, **library_modules}


class _RefuseOtherSubmodules(importlib.abc.MetaPathFinder):
    """``import pyopencl.<anything else>`` fails with the reason, not with 'pyopencl is not a package'."""

    def find_spec(self, name, path=None, target=None):
        if name.startswith("pyopencl.") and name not in MODULES:
            raise ImportError(f"{name} is not available on the sycl backend's SYCL path (supported: {SUPPORTED})")
        return None


_FINDER = _RefuseOtherSubmodules()


class installed:
    """Context manager: inside it ``import pyopencl...`` finds this file's modules and nothing else
    of pyopencl; whatever ``sys.modules`` held under pyopencl's names (pyopencl itself and its
    submodules, in a process that also runs the pyopencl path) is back after it."""

    def __enter__(self) -> "installed":
        self.saved = {name: module for name, module in sys.modules.items() if _is_pyopencl(name)}
        for name in self.saved:
            del sys.modules[name]
        sys.modules.update(MODULES)
        sys.meta_path.insert(0, _FINDER)
        return self

    def __exit__(self, *exc) -> None:
        sys.meta_path.remove(_FINDER)
        for name in [n for n in sys.modules if _is_pyopencl(n)]:
            del sys.modules[name]
        sys.modules.update(self.saved)


def _is_pyopencl(name: str) -> bool:
    return name == "pyopencl" or name.startswith("pyopencl.")


# What counts launches and readbacks, as imported: a candidate that replaces them is caught.
_COUNTING = {"Kernel.__call__": (Kernel, "__call__", Kernel.__call__), "Array.get": (Array, "get", Array.get)}


def watch_intact() -> str | None:
    """Why launches can no longer be counted (a candidate replaced the counting methods), or None."""
    for label, (owner, name, original) in _COUNTING.items():
        if owner.__dict__.get(name) is not original:
            return f"{label} was replaced: kernel launches can no longer be counted"
    return None
