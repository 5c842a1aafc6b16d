"""The execution engine: plan -> prepare (CPU pool) -> evaluate (device lanes) -> rows -> store.

* :mod:`.plan`: units of work from the options, the registry and the hardware profile;
* :mod:`.prepare`: what is done once per candidate on a CPU, in a process pool (reading the file
  safely, static findings, own-kernel names, builds that need no device);
* :mod:`.lane` and :mod:`.device`: one device's lanes, each a trusted judge process
  (:mod:`.judge_client`) plus one candidate worker at a time (:mod:`.session`) driven through the
  step protocol (:mod:`.steps`), with exclusive timing and a memory budget;
* :mod:`.local` and :mod:`.ray_executor`: executors over one host's devices, or a Ray cluster's;
* :mod:`.observation` and :mod:`.rows`: frozen observations -> result rows (the pure
  :func:`.rows.decide`), verdicts decided by :mod:`mkbench.integrity`;
* :mod:`.runner`: resume, run ownership, the store, progress.
"""
