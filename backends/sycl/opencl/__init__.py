"""The sycl backend's pyopencl path: candidates run through pyopencl on an OpenCL device (NVIDIA's
OpenCL driver on a GPU profile; PoCL or Intel's OpenCL CPU runtime on the ``cpu`` profile where no
SYCL queue works). ``runtime`` builds, runs and counts, ``timing`` times with OpenCL profiling
events. Imported only in the worker: importing ``runtime`` loads pyopencl and installs its watch.
"""
