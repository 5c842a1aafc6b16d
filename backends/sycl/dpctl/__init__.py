"""The sycl backend's SYCL path: candidates run through a SYCL queue (dpctl on Intel's SYCL runtime)
on the ``cpu`` profile, their pyopencl host code against ``facade``. ``runtime`` builds, runs and
counts, ``timing`` times with SYCL event profiling. Imported only in the worker. (``import dpctl``
in these modules is the dpctl distribution: imports are absolute.)
"""
