"""One request's life as a timeline: api_server -> tokenizer -> scheduler -> detokenizer -> [DONE].

Where this sits on the request path: it reads the trace that every component writes as the
request passes (`LocalServer.trace(uid)`), so it covers the whole path. `plot_timeline` draws it
with matplotlib (a static figure, readable in a notebook viewed on the web); `RequestTimeline`
adds a uid picker and a Refresh button and lists the events as text lines too.

The drawing has one band per component. Many events happen within a millisecond of each other
(the tokenizer receives, replies and sends on in one go) and some repeat once per token, so
writing every name at its time would print the names on top of each other. Instead:

* an event that repeats once per token (a decode step, a token, its `DetokenizeMsg` and
  `UserReply`) is drawn as a tick per occurrence on one row of its band, named once with a count
  (the last token's events say "(last)" and are drawn on their own);
* every other event is a dot with its name beside it;
* each name goes on the first row of its band where its box (measured with the renderer, the
  same text extents matplotlib draws with) touches no other name, so names never overlap; a band
  has as many rows as it needs and the figure grows to fit them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from minisgl_edu.runtime import LocalServer
from minisgl_edu.trace import COMPONENTS, TraceEvent, summarize
from minisgl_edu.widgets.common import esc, figure_png

FONT_PT = 7.5  # label size
ROW_PT = 12.0  # height of one row of labels (a label is about 9 pt tall: rows never touch)
GAP_PT = 3.0  # between a mark and its name
PAD_PT = 6.0  # least room between two names on one row
DOT_PT = 5.0  # marker size of a one-off event
WIDTH_IN = 10.0
MARGINS_IN = {"left": 1.1, "right": 0.25, "top": 0.4, "bottom": 0.5}  # room for lane names, title, time axis


def _repeats_per_token(e: TraceEvent) -> bool:
    """The events that come once per generated token, except the last token's (it says "finished")."""
    if e.event == "scheduled":
        return e.data.get("phase") == "decode"
    return e.event in ("token", "DetokenizeMsg sent", "UserReply sent") and not e.data.get("finished")


def _name(e: TraceEvent) -> str:
    if e.event == "scheduled":
        return f"scheduled ({e.data.get('phase')})"
    if e.event == "finished":
        return f"finished ({e.data.get('reason')})"
    if e.data.get("finished"):
        return f"{e.event} (last)"
    return e.event


@dataclass
class Mark:
    """What is drawn for one event, or for one repeating kind of event, in one band."""

    lane: str
    name: str
    times_ms: list[float] = field(default_factory=list)
    repeated: bool = False
    row: int = 0  # 0 = the top row of its band, set by `_place`

    @property
    def label(self) -> str:
        n = len(self.times_ms)
        return f"{self.name} ×{n}" if self.repeated and n > 1 else self.name


def timeline_marks(events: list[TraceEvent]) -> list[Mark]:
    """The events as marks, time in ms since the first event, in order of first appearance."""
    t0 = min((e.time for e in events), default=0.0)
    marks: list[Mark] = []
    runs: dict[tuple[str, str], Mark] = {}
    for e in events:
        ms = (e.time - t0) * 1000.0
        if _repeats_per_token(e):
            key = (e.component, _name(e))
            if key not in runs:
                runs[key] = Mark(e.component, _name(e), repeated=True)
                marks.append(runs[key])
            runs[key].times_ms.append(ms)
        else:
            marks.append(Mark(e.component, _name(e), [ms]))
    return marks


def _text_width_pt(text: str) -> float:
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.font_manager import FontProperties

    renderer = RendererAgg(10, 10, 72)  # at 72 dpi one pixel is one point
    width, _, _ = renderer.get_text_width_height_descent(text, FontProperties(size=FONT_PT), ismath=False)
    return width


def _place(marks: list[Mark], x_pt: Any) -> dict[str, int]:
    """Give every mark a row in its band so that no two names (nor a name and a run of ticks)
    share space: first fit, in order of time. Returns the number of rows of each band."""
    rows: dict[str, list[list[tuple[float, float]]]] = {}  # lane -> row -> occupied spans (pt)
    for m in sorted(marks, key=lambda m: m.times_ms[0]):
        span = (x_pt(m.times_ms[0]) - DOT_PT / 2, x_pt(m.times_ms[-1]) + GAP_PT + _text_width_pt(m.label))
        band = rows.setdefault(m.lane, [])
        for i, row in enumerate(band + [[]]):
            if all(span[1] + PAD_PT <= a or b + PAD_PT <= span[0] for a, b in row):
                if i == len(band):
                    band.append([])
                band[i].append(span)
                m.row = i
                break
    return {lane: len(r) for lane, r in rows.items()}


def _time_axis(marks: list[Mark], axes_width_pt: float) -> tuple[float, float]:
    """x limits (ms) with room on the right for the name of every mark.

    A name is written right of its mark; the axis is extended (the scale shrinks) until even the
    latest mark's name ends inside the plot.
    """
    end = max((t for m in marks for t in m.times_ms), default=0.0)
    x_min, x_max = -0.02 * max(end, 1.0), 1.02 * max(end, 1.0)
    for m in marks:
        room = axes_width_pt - GAP_PT - _text_width_pt(m.label) - PAD_PT
        if room <= 0:
            continue  # a name wider than the plot: nothing can make it fit
        # The mark must sit at most room/width of the way along the axis.
        x_max = max(x_max, x_min + (m.times_ms[-1] - x_min) * axes_width_pt / room)
    return x_min, x_max


def plot_timeline(events: list[TraceEvent], title: Optional[str] = None) -> Any:
    """Draw one request's trace: a band per component, time in ms since it was received.

    Returns the matplotlib Figure; its height follows the number of label rows needed.
    """
    import matplotlib.pyplot as plt

    marks = timeline_marks(events)
    lanes = [c for c in COMPONENTS if any(m.lane == c for m in marks)]
    lanes += sorted({m.lane for m in marks} - set(lanes))
    axes_width_pt = (WIDTH_IN - MARGINS_IN["left"] - MARGINS_IN["right"]) * 72
    x_min, x_max = _time_axis(marks, axes_width_pt)

    def x_pt(ms: float) -> float:
        return (ms - x_min) / (x_max - x_min) * axes_width_pt

    num_rows = _place(marks, x_pt)
    # y in rows, downwards from 0: band i's row r sits at -(top_i + r); a half row between bands.
    top, y = {}, 0.5
    for lane in lanes:
        top[lane] = y
        y += num_rows.get(lane, 1) + 0.5
    total_rows = y
    height_in = total_rows * ROW_PT / 72 + MARGINS_IN["top"] + MARGINS_IN["bottom"]
    fig = plt.figure(figsize=(WIDTH_IN, height_in))
    ax = fig.add_axes(
        [
            MARGINS_IN["left"] / WIDTH_IN,
            MARGINS_IN["bottom"] / height_in,
            1 - (MARGINS_IN["left"] + MARGINS_IN["right"]) / WIDTH_IN,
            total_rows * ROW_PT / 72 / height_in,
        ]
    )
    ax.set_xlim(x_min, x_max)
    ax.set_ylim(-total_rows, 0)
    colours = plt.get_cmap("tab10")
    gap_ms = GAP_PT / axes_width_pt * (x_max - x_min)
    for i, lane in enumerate(lanes):
        band_top, band_bottom = -(top[lane] - 0.5), -(top[lane] + num_rows.get(lane, 1) - 0.5)
        if i % 2 == 0:
            ax.axhspan(band_bottom, band_top, color="0.95", zorder=0, lw=0)
    for m in marks:
        col = colours(COMPONENTS.index(m.lane) if m.lane in COMPONENTS else 9)
        y = -(top[m.lane] + m.row)
        if m.repeated and len(m.times_ms) > 1:
            ax.plot(m.times_ms, [y] * len(m.times_ms), "|", color=col, markersize=8, markeredgewidth=1)
        else:
            ax.plot(m.times_ms, [y], "o", color=col, markersize=DOT_PT)
        ax.text(m.times_ms[-1] + gap_ms, y, m.label, fontsize=FONT_PT, ha="left", va="center")
    centres = [-(top[lane] + (num_rows.get(lane, 1) - 1) / 2) for lane in lanes]
    ax.set_yticks(centres, lanes)
    ax.tick_params(axis="y", length=0)
    ax.set_xlabel("ms since the request was received")
    if title:
        ax.set_title(title, fontsize=10)
    return fig


class RequestTimeline:
    def __init__(self, srv: LocalServer, uid: Optional[int] = None, max_tokens: int = 3) -> None:
        import ipywidgets as W

        self.srv = srv
        self.max_tokens = max_tokens
        uids = sorted(srv.results)
        self.uid_dropdown = W.Dropdown(
            options=uids, value=uid if uid is not None else (uids[0] if uids else None), description="uid"
        )
        self.refresh_button = W.Button(description="Refresh", icon="refresh")
        self.image = W.Image(format="png")
        self.events_view = W.HTML()
        self._quiet = False  # set while refresh() itself changes the dropdown
        self.uid_dropdown.observe(lambda change: self._quiet or self.refresh(), names="value")
        self.refresh_button.on_click(lambda _: self.refresh())
        self.widget = W.VBox([W.HBox([self.uid_dropdown, self.refresh_button]), self.image, self.events_view])
        self.refresh()

    @property
    def uid(self) -> Optional[int]:
        return self.uid_dropdown.value

    def lines(self) -> list[str]:
        return summarize(self.srv.trace(self.uid), self.max_tokens) if self.uid is not None else []

    def refresh(self) -> None:
        # New requests may have been submitted since: offer them too, keeping the current choice.
        uids = sorted(self.srv.results)
        if list(self.uid_dropdown.options) != uids:
            current = self.uid
            self._quiet = True
            try:
                self.uid_dropdown.options = uids
                self.uid_dropdown.value = current if current in uids else (uids[0] if uids else None)
            finally:
                self._quiet = False
        if self.uid is None or not self.srv.trace(self.uid):
            self.image.value = b""
            self.events_view.value = "<i>no events yet</i>"
            return
        self.image.value = figure_png(self.figure())
        # One event a line; a newline inside a token's text is shown as \n (esc would show it as ⏎).
        self.events_view.value = (
            "<pre>" + "\n".join(esc(line).replace("&#9166;", "\\n") for line in self.lines()) + "</pre>"
        )

    def figure(self) -> Any:
        return plot_timeline(self.srv.trace(self.uid), title=f"request {self.uid}")

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
