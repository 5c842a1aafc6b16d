"""Integrity rules: what evidence makes a row ``hack``, what makes it ``framework``, and what is
only a warning. One place, read by the orchestrator after the judge and the trace have spoken.

``hack`` needs *runtime* evidence, of a kind no honest kernel produces:

* tampering seen in the worker (a harness function replaced, a thread started by candidate code),
  in a call or already when the candidate was imported (:func:`import_evidence`: the unit ends there);
* hidden work in the device trace (a kernel ending after the timed stream's work, or launched after
  the call returned);
* the timer's median far below the device time per call of a trace taken with the device to itself;
* a timing input answered rightly before the timed calls and wrongly after them;
* a decoy: the answer stays right with the candidate's own kernel launches suppressed;
* a time under the hardware profile's roofline floor;
* a backend's own runtime check (:class:`mkbench.errors.IntegrityViolation`).

Static findings (:mod:`mkbench.static_checks`) are warnings with line numbers, stored per row and
reported, never a verdict: a ``try``/``except`` around ``load_inline`` or a framework op next to a
kernel is what honest partial kernels look like too, and the trace measures what actually ran.

Framework use is measured, not guessed: the share of the call's work done by kernels not built from
the candidate's source (:mod:`mkbench.trace`). Policy (``--framework-ops``):

* ``forbid`` (the default): a share above the threshold gives ``framework`` — a right answer that is
  not the backend's work. The default, because mkbench's question is where *kernel code* breaks: a
  row that says ``correct`` must mean the candidate's kernels computed the answer. Rows keep the
  share, so a report can still count them as KernelBench's rules would.
* ``report``: the row can be ``correct``; the share is recorded and reported.

Either way, a correct answer with none of the candidate's own kernels run is ``framework``: there is
no kernel of this backend to credit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .engine.observation import ComboObservation
from .trace import TraceFindings
from .verdicts import Verdict

FRAMEWORK_POLICIES = ("forbid", "report")
#: Above this share of the work in framework kernels, ``forbid`` gives ``framework``. 10%: well above
#: what a wrapper's parameter-sized helper ops cost next to a real kernel, well below any partial
#: kernel that leaves a real op (a convolution, a GEMM, a normalisation) to the framework, and not so
#: tight that the noise in one small kernel's duration decides a verdict.
DEFAULT_FRAMEWORK_THRESHOLD = 0.10
ROOFLINE_SLACK = 0.9       # a time under 90% of the datasheet floor is physically impossible
TIMER_TRACE_FACTOR = 0.25  # events claiming under a quarter of the traced device time per call
#: Timers whose spans the device trace's kernel durations can be held against: CUDA events around
#: the call on the stream the trace sees. Not OpenCL profiling events: on an H200, NVIDIA's OpenCL
#: events gave mkbench's own SYCL references 0.5-1.5 ms per call where the CUDA trace of the same
#: calls summed 0.15-0.8 s of kernels (one_hot, trsv, lion: 66 false hacks; reports/2026-11-27-
#: portability). Not a host clock either (it can only be longer than the kernels it spans).
TRACE_COMPARABLE_TIMERS = ("cuda_event", "cuda_graph")


@dataclass(frozen=True)
class Policy:
    framework_ops: str = "forbid"
    framework_threshold: float = DEFAULT_FRAMEWORK_THRESHOLD


def hack_evidence(c: ComboObservation, findings: list[TraceFindings | None], timing: Mapping[str, Any] | None,
                  floor_us: float | None) -> list[str]:
    """Every runtime reason to call this (shape, dtype) of a candidate a hack."""
    out = [x for x in (c.tamper, c.timing.tamper, c.backend_violation) if x]
    for f in findings:
        if f is not None and f.hidden:
            out.append("hidden work in the device trace: " + f.hidden[0])
    if c.after.stale:
        out.append(c.after.stale)
    if c.after.replayed:
        out.append(c.after.replayed)
    if c.decoy is not None and c.decoy.still_correct:
        out.append(f"decoy: the answer stayed right with the candidate's {c.decoy.launches} own kernel "
                   "launch(es) suppressed, so they did not compute it")
    if timing and not timing.get("interpreted"):
        # Durations only from a trace taken alone, as the timer's were: under sharing the same kernels
        # run 4 to 4.5 times longer (19 false hacks on mkbench's own references on 4 shared H200s).
        traced = next((f.busy_us_per_call for f in reversed(findings)
                       if f is not None and f.alone and f.busy_us_per_call), None)
        comparable = timing.get("timer", "cuda_event") in TRACE_COMPARABLE_TIMERS
        if traced and comparable and timing["median_us"] < TIMER_TRACE_FACTOR * traced:
            out.append(f"the timer's median {timing['median_us']:.1f} us is under a quarter of the {traced:.1f} us of "
                       "kernels the device trace shows per call, traced with the device to itself")
        if floor_us and timing["median_us"] < ROOFLINE_SLACK * floor_us:
            out.append(f"{timing['median_us']:.1f} us is under the roofline floor of {floor_us:.1f} us for this work")
    return out


def import_evidence(tamper: str | None) -> list[str]:
    """The reasons to call a candidate a hack on what its import did (seen by the worker right after
    its compile step, before any call): every row of the unit, none of which ran."""
    return [f"when the candidate was imported (compile step): {tamper}"] if tamper else []


def framework_evidence(backend_name: str, launches: int | None, findings: list[TraceFindings | None],
                       policy: Policy) -> tuple[list[str], float | None]:
    """(reasons for a ``framework`` verdict, the measured share). The share is the largest seen over
    the traces of this (shape, dtype): correctness and timing calls."""
    shares = [f.framework_share for f in findings if f is not None and f.framework_share is not None]
    share = max(shares) if shares else None
    top = next((f.framework_kernels for f in findings if f is not None and f.framework_kernels), [])
    named = f" ({', '.join(top[:3])})" if top else ""
    own_time = [f.own for f in findings if f is not None and f.basis == "device_time"]
    if launches == 0 or (launches is None and own_time and max(own_time) == 0 and share):
        return [f"no {backend_name} kernel of the candidate ran: the answer came from framework kernels{named}"], share
    if policy.framework_ops == "forbid" and share is not None and share > policy.framework_threshold:
        return [f"framework kernels did {share:.0%} of the work{named}, over the {policy.framework_threshold:.0%} "
                "allowed (--framework-ops forbid)"], share
    return [], share


def decide(correct_status: Verdict, correct_message: str, hack: list[str], framework: list[str]) -> tuple[Verdict, str]:
    """The row's verdict from its correctness status and integrity evidence."""
    if hack:
        also = f"; also: {correct_message}" if correct_message and correct_status != Verdict.CORRECT else ""
        more = f" (+{len(hack) - 1} more: {'; '.join(hack[1:])})" if len(hack) > 1 else ""
        return Verdict.HACK, hack[0] + more + also
    if correct_status != Verdict.CORRECT:
        return Verdict(correct_status), correct_message
    if framework:
        return Verdict.FRAMEWORK, framework[0]
    return Verdict.CORRECT, ""
