"""Plot of a soak's samples (bench/pipeline/soak.ts): one panel per figure group, read from the
samples JSON the run wrote. Run by bench/pipeline/parts/soak-plot.sh with the pinned matplotlib of
scripts/lib/matplotlib.sh:

    soak-plot.py <samples.json> <out.png>
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

source, out = sys.argv[1], sys.argv[2]
with open(source) as f:
    run = json.load(f)
samples = run["samples"]
figures = run["figures"]
groups = []
for figure in figures:
    if figure["group"] not in groups:
        groups.append(figure["group"])

fig, axes = plt.subplots(len(groups), 1, figsize=(11, 3.2 * len(groups)), sharex=True)
minutes = [s["t"] / 60 for s in samples]
for ax, group in zip(axes, groups):
    right = None
    for figure in [f for f in figures if f["group"] == group]:
        values = [s["values"].get(figure["key"]) for s in samples]
        ys = [float("nan") if v is None else v for v in values]
        label = f'{figure["label"]} ({figure["unit"]})' if figure["unit"] else figure["label"]
        # Lag (events) and freshness (ms, s) differ by orders of magnitude: lag on its own axis.
        if group == "lag and freshness" and figure["key"] == "lag_events":
            right = right or ax.twinx()
            right.plot(minutes, ys, marker="x", linewidth=1, color="black", linestyle=":", label=label)
        else:
            ax.plot(minutes, ys, marker=".", linewidth=1, label=label)
    for event in run["events"]:
        ax.axvspan(event["from"] / 60, (event["to"] or event["from"]) / 60, color="grey", alpha=0.2)
        ax.annotate(event["name"], (event["from"] / 60, 1), xycoords=("data", "axes fraction"),
                    fontsize=7, va="top", color="dimgrey")
    ax.axvline(run["warmupSeconds"] / 60, color="orange", linestyle="--", linewidth=0.8)
    ax.set_title(group, fontsize=10, loc="left")
    ax.grid(True, alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    if right is not None:
        h2, l2 = right.get_legend_handles_labels()
        handles, labels = handles + h2, labels + l2
    ax.legend(handles, labels, fontsize=7, loc="upper left", bbox_to_anchor=(1.06 if right else 1.01, 1))
axes[-1].set_xlabel("minutes since the load started (dashed: end of warm-up; grey: rebuild, api restart)")
fig.suptitle(run["title"], fontsize=11)
fig.tight_layout()
fig.savefig(out, dpi=90)
