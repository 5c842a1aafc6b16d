"""The report's figures, drawn with matplotlib (Agg, no display) and returned as PNG bytes so the
HTML report can embed them and the Markdown report can link them."""

from __future__ import annotations

import io
import itertools
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from .rates import fast_p  # noqa: E402


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def series_label(row) -> str:
    return f"{row['hw']} / {row['backend']}" + ("" if row["method"] in (row["backend"], "reference")
                                                else f" / {row['method']}")


def correctness_heatmap(attempts: pd.DataFrame) -> bytes | None:
    if attempts.empty:
        return None
    a = attempts.assign(series=attempts.apply(series_label, axis=1))
    table = a.pivot_table(index="category", columns="series", values="correct", aggfunc="mean")
    fig, ax = plt.subplots(figsize=(1.2 + 1.1 * table.shape[1], 0.9 + 0.38 * table.shape[0]))
    im = ax.imshow(table.to_numpy(dtype=float), cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(table.shape[1]), table.columns, rotation=35, ha="right")
    ax.set_yticks(range(table.shape[0]), table.index)
    for (i, j), v in np.ndenumerate(table.to_numpy(dtype=float)):
        if not math.isnan(v):
            ax.text(j, i, f"{v:.0%}", ha="center", va="center", fontsize=8)
    fig.colorbar(im, ax=ax, label="share of tasks correct")
    ax.set_title("Correctness by category")
    return _png(fig)


def speedup_distributions(attempts: pd.DataFrame, column: str = "speedup_eager") -> bytes | None:
    a = attempts[~attempts["is_baseline"] & attempts["correct"] & attempts[column].notna()]
    if a.empty:
        return None
    a = a.assign(series=a.apply(series_label, axis=1))
    cats = sorted(a["category"].unique())
    series = sorted(a["series"].unique())
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(cats) * max(1, len(series) / 2)), 4.2))
    width = 0.8 / len(series)
    for k, s in enumerate(series):
        data = [a[(a["category"] == c) & (a["series"] == s)][column].astype(float).to_numpy() for c in cats]
        pos = [i + (k - (len(series) - 1) / 2) * width for i in range(len(cats))]
        keep = [(p, d) for p, d in zip(pos, data) if len(d)]
        if keep:
            bp = ax.boxplot([d for _, d in keep], positions=[p for p, _ in keep], widths=width * 0.9, patch_artist=True,
                            manage_ticks=False)
            color = plt.cm.tab10(k % 10)
            for box in bp["boxes"]:
                box.set_facecolor(color)
                box.set_alpha(0.5)
            # the points themselves: with a few tasks per category a box alone hides them
            jitter = np.random.default_rng(k).uniform(-0.3, 0.3, size=sum(len(d) for _, d in keep)) * width
            xs = np.concatenate([np.full(len(d), p) for p, d in keep]) + jitter
            ax.scatter(xs, np.concatenate([d for _, d in keep]), s=10, color=color, edgecolor="black", linewidth=0.3,
                       zorder=3)
            ax.plot([], [], color=color, lw=6, label=s)
    ax.set_yscale("log")
    ax.axhline(1.0, color="black", lw=0.8, ls="--")
    ax.set_xticks(range(len(cats)), cats, rotation=35, ha="right")
    ax.set_ylabel(f"speedup ({column.replace('speedup_', 'vs ')})")
    ax.set_title("Speedup of correct kernels per category (large shapes)")
    ax.legend(fontsize=8)
    return _png(fig)


def fast_p_curves(attempts: pd.DataFrame) -> bytes | None:
    a = attempts[~attempts["is_baseline"]]
    a = a[a.groupby(["hw", "backend", "method"])["timing"].transform(lambda t: (t == "timed").any())]  # speed only
    if a.empty:
        return None
    ps = np.linspace(0, 3, 121)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, column, title in zip(axes, ("speedup_eager", "speedup_compile"), ("over eager", "over torch.compile")):
        for k, (key, g) in enumerate(a.groupby(["hw", "backend", "method"])):
            label = series_label(dict(zip(["hw", "backend", "method"], key)))
            ax.plot(ps, [fast_p(g, p, column) for p in ps], label=label, color=plt.cm.tab10(k % 10))
        ax.set_xlabel("p (speedup threshold)")
        ax.set_title(f"fast_p {title}")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("share of tasks correct and faster than p")
    axes[0].legend(fontsize=8)
    return _png(fig)


def cross_hardware_scatter(attempts: pd.DataFrame, paired) -> bytes | None:
    hws = sorted(attempts["hw"].unique())
    pairs = list(itertools.combinations(hws, 2))[:3]
    frames = [(a, b, paired(attempts, a, b)) for a, b in pairs]
    frames = [f for f in frames if not f[2].empty]
    if not frames:
        return None
    fig, axes = plt.subplots(1, len(frames), figsize=(5 * len(frames), 4.6), squeeze=False)
    for ax, (ha, hb, df) in zip(axes[0], frames):
        for k, (cat, g) in enumerate(df.groupby("category")):
            ax.scatter(g["a"], g["b"], label=cat, color=plt.cm.tab20(k % 20), s=28)
        lo = min(df["a"].min(), df["b"].min()) / 1.3
        hi = max(df["a"].max(), df["b"].max()) * 1.3
        ax.plot([lo, hi], [lo, hi], color="black", lw=0.8, ls="--")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(f"speedup vs eager on {ha}")
        ax.set_ylabel(f"speedup vs eager on {hb}")
        ax.set_title(f"{ha} vs {hb} (same problem sizes only)")
        ax.legend(fontsize=7, ncol=2)
    return _png(fig)


def roofline_chart(attempts: pd.DataFrame, profiles: dict) -> bytes | None:
    a = attempts[attempts["correct"] & attempts["time_us"].notna() & (attempts["flops"] > 0) & (attempts["bytes"] > 0)]
    a = a[a["hw"].map(lambda h: h in profiles and profiles[h].device != "cpu")]
    if a.empty:
        return None
    hws = sorted(a["hw"].unique())
    fig, axes = plt.subplots(1, len(hws), figsize=(6 * len(hws), 4.6), squeeze=False)
    for ax, hw in zip(axes[0], hws):
        prof = profiles[hw]
        g = a[a["hw"] == hw]
        ai = g["flops"] / g["bytes"]
        perf = g["flops"] / (g["time_us"] * 1e-6) / 1e12
        xs = np.logspace(math.log10(max(ai.min() / 4, 1e-3)), math.log10(max(ai.max() * 4, 10)), 200)
        for dt, style in (("fp32", "-"), ("bf16", "--")):
            peak = prof.peak_tflops.get(dt)
            if peak:
                ax.plot(xs, np.minimum(peak, prof.memory_bandwidth_gbs * 1e9 * xs / 1e12), style, color="gray",
                        label=f"roof ({dt} {peak:g} TFLOP/s, {prof.memory_bandwidth_gbs:g} GB/s)")
        for k, (series, sg) in enumerate(g.groupby(["backend", "method"])):
            idx = sg.index
            ax.scatter(ai[idx], perf[idx], s=26, color=plt.cm.tab10(k % 10), label="/".join(dict.fromkeys(series)))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("arithmetic intensity (FLOP/byte)")
        ax.set_ylabel("achieved TFLOP/s")
        ax.set_title(f"Roofline: {prof.display_name}")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3, which="both")
    return _png(fig)
