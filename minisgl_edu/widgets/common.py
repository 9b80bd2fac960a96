"""Small helpers the widgets share: one colour per uid, figure to PNG bytes, HTML escaping."""

from __future__ import annotations

import html
import io
from typing import Any

# tab10 as hex, so HTML tables and matplotlib figures give a request the same colour.
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]


def uid_colour(uid: int) -> str:
    return PALETTE[uid % len(PALETTE)]


def esc(text: Any) -> str:
    return html.escape(str(text)).replace("\n", "&#9166;")  # show newlines as a visible ⏎


def figure_png(fig: Any) -> bytes:
    """Render a matplotlib figure to PNG bytes (for an ipywidgets.Image) and close it."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    return buf.getvalue()


def table(header: list[str], rows: list[list[Any]], raw: bool = False) -> str:
    """A small HTML table; cells are escaped unless `raw` (already HTML)."""
    cell = (lambda v: str(v)) if raw else esc
    head = "".join(f"<th style='text-align:left;padding:0 8px'>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td style='padding:0 8px'>{cell(v)}</td>" for v in r) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"
