"""The analyzer drawn for a report (``tiles referee analyze --png``): the day's leaderboard and the same
two charts as the play page — reward per batch, and mean n of the solved tiles over time — for the
day and, when one is chosen, a run.

Input is the API's own answers as plain dicts (``RunStore.leaderboard``, ``day_analysis``,
``run_analysis``: the models ``Leaderboard``, ``DayAnalysis``, ``RunAnalysis``), so the report and the
page draw the same numbers. matplotlib (the Agg backend, no display) draws; it is imported only here.
"""

from __future__ import annotations

import io

RUN_COLOUR, DAY_COLOUR = "#3d7be0", "#e0a800"  # the page's colours (static/play.js)


def series(day: dict, run: dict | None) -> dict[str, list[tuple[str, list[tuple[float, float]]]]]:
    """The charts' points as the page draws them: ``reward`` (batch ordinal → reward; the day's is the
    mean over its runs) and ``mean_n`` (seconds since start → mean n of the tiles solved in a batch,
    or in a time bucket for the day), each a list of (label, points)."""
    reward = [("day (mean of runs)", [(b["batch"], b["mean_reward"]) for b in day["batches"]])]
    mean_n = [("day", [(b["t"], b["mean_n"]) for b in day["time"] if b["mean_n"] is not None])]
    if run is not None:
        reward.append((f"run {run['run']}", [(b["batch"], b["reward"]) for b in run["batches"]]))
        mean_n.append((f"run {run['run']}", [(b["t"], b["mean_n"]) for b in run["batches"] if b["mean_n"] is not None]))
    return {"reward": reward, "mean_n": mean_n}


def report_png(day: dict, leaderboard: list[dict], run: dict | None = None, *, top: int = 10) -> bytes:
    """The report as PNG bytes: the leaderboard's ``top`` rows, then the two charts side by side."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 6.2), dpi=100, layout="constrained")
    grid = fig.add_gridspec(2, 2, height_ratios=[1, 1.5])
    _leaderboard(fig.add_subplot(grid[0, :]), day["day"], leaderboard[:top], None if run is None else run["run"])
    pts = series(day, run)
    _chart(fig.add_subplot(grid[1, 0]), "Reward per batch", "batch", "reward (Σ n²)", pts["reward"])
    _chart(
        fig.add_subplot(grid[1, 1]),
        f"Mean n of solved tiles over time (day: {day['bucket']:g} s buckets)",
        "seconds since start",
        "mean n",
        pts["mean_n"],
    )
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})  # no version stamp: same data, same bytes
    return buf.getvalue()


def _leaderboard(ax, day: str, rows: list[dict], run: str | None) -> None:
    ax.axis("off")
    ax.set_title(f"{day}: leaderboard", loc="left", fontsize=12, fontweight="bold")
    if not rows:
        ax.text(0.0, 0.5, "no runs yet", color="#888", transform=ax.transAxes)
        return
    cells = [
        [
            r["rank"],
            r["player"] if r["player"] is not None else "anonymous",
            r["run"],
            r["reward"],
            r["solved"],
            r["moves"],
        ]
        for r in rows
    ]
    table = ax.table(
        cellText=cells,
        colLabels=["#", "player", "run", "reward", "solved", "moves"],
        loc="upper left",
        cellLoc="left",
        colLoc="left",
    )
    table.auto_set_font_size(False)
    table.set_fontsize(9)
    for (i, _j), cell in table.get_celld().items():
        cell.set_edgecolor("#dddddd")
        if i > 0 and rows[i - 1]["run"] == run:
            cell.set_text_props(color=RUN_COLOUR, fontweight="bold")


def _chart(ax, title: str, xname: str, yname: str, lines: list[tuple[str, list[tuple[float, float]]]]) -> None:
    ax.set_title(title, loc="left", fontsize=11)
    ax.set_xlabel(xname)
    ax.set_ylabel(yname)
    ax.grid(True, color="#eeeeee")
    drawn = False
    for (label, points), colour in zip(lines, (DAY_COLOUR, RUN_COLOUR), strict=False):  # the day alone, or day and run
        if points:
            xs, ys = zip(*points, strict=True)
            ax.plot(xs, ys, marker="o", markersize=3, linewidth=2, color=colour, label=label)
            drawn = True
    if drawn:
        ax.legend(loc="best", fontsize=9)
        ax.set_ylim(bottom=0)
    else:
        ax.text(0.5, 0.5, "no solved tiles yet", color="#888", ha="center", transform=ax.transAxes)
