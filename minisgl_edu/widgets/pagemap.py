"""The KV page map: every page of the KV cache, coloured by the request that uses it.

Where this sits on the request path: beside the scheduler's `CacheManager`. Each step, the
scheduler reserves pages for the tokens it is about to compute and frees (or hands to the prefix
cache) the pages of finished requests. `CacheManager.snapshot()` says who owns each page; this
module draws it: a coloured cell per page used by a request, a "C" on pages kept in the prefix
cache (several requests may share one), a blank cell per free page, then each running request's
page-table row. `KVPageMap` keeps one picture per step so a slider can go back in time.

With speculative decoding, a verify step reserves pages for a request's drafts before they are
checked; the pages that held only rejected drafts go back to the free list at the end of the step
(`CacheManager.trim`). The map marks those with a red "x" in the step that gave them back.
"""

from __future__ import annotations

from typing import Any, Optional

from minisgl_edu.kvcache import PageMapSnapshot
from minisgl_edu.runtime import LocalServer, Snapshot
from minisgl_edu.widgets.common import esc, uid_colour

COLUMNS = 16


def page_users(pages: PageMapSnapshot) -> list[list[int]]:
    """For each page, the uids whose page-table row holds it (two or more: a shared prefix)."""
    users: list[list[int]] = [[] for _ in range(pages.num_pages)]
    for uid, row in sorted(pages.rows.items()):
        for p in row:
            users[p].append(uid)
    return users


def page_counts(pages: PageMapSnapshot) -> dict[str, int]:
    """How many pages are in use by a request, only cached, and free."""
    users = page_users(pages)
    used = sum(1 for u in users if u)
    cached_only = sum(1 for u, c in zip(users, pages.cached) if c and not u)
    return {"in use": used, "cached only": cached_only, "free": pages.num_pages - used - cached_only}


def freed_in(snap: Snapshot) -> dict[int, list[int]]:
    """The pages each request gave back in the step `snap` comes from (its rejected drafts')."""
    if snap.batch is None:
        return {}
    return {it.uid: list(it.freed_pages) for it in snap.batch.items if it.freed_pages}


def render_html(
    pages: PageMapSnapshot, max_pages: Optional[int] = None, freed: Optional[dict[int, list[int]]] = None
) -> str:
    """The page grid and the page-table rows; `freed`: uid -> pages it gave back this step."""
    users = page_users(pages)
    given_back = {p: uid for uid, ps in (freed or {}).items() for p in ps}
    n = pages.num_pages if max_pages is None else min(max_pages, pages.num_pages)
    cells = []
    for p in range(n):
        owner = users[p][0] if users[p] else None
        bg = uid_colour(owner) if owner is not None else ("#dddddd" if pages.cached[p] else "white")
        mark = "C" if pages.cached[p] else ""
        if len(users[p]) > 1:
            mark += str(len(users[p]))  # shared by this many requests
        title = f"page {p}: users {users[p]}{' cached' if pages.cached[p] else ''}"
        style = "border:1px solid #999"
        if p in given_back and not users[p]:  # free now (a later step may have handed it out again)
            mark, style = "&#10007;", "border:1px solid #d62728;color:#d62728;font-weight:bold"
            title = f"page {p}: given back by uid {given_back[p]} this step (its rejected drafts)"
        cells.append(
            f"<div title='{title}' style='width:22px;height:22px;background:{bg};{style};font-size:10px;"
            f"text-align:center;line-height:22px'>{mark}</div>"
        )
    grid = (
        f"<div style='display:grid;grid-template-columns:repeat({COLUMNS},24px);gap:1px'>" + "".join(cells) + "</div>"
    )
    rows = "".join(
        f"<div><span style='color:{uid_colour(uid)}'>&#9632;</span> uid {uid}: pages {esc(row)}</div>"
        for uid, row in sorted(pages.rows.items())
    )
    counts = page_counts(pages)
    head = f"<b>{pages.num_pages} pages x {pages.page_size} tokens</b> &nbsp; " + ", ".join(
        f"{k}: {v}" for k, v in counts.items()
    )
    more = f"<div>(first {n} pages shown)</div>" if n < pages.num_pages else ""
    back = ""
    if freed:
        listed = "; ".join(f"uid {uid}: pages {esc(ps)}" for uid, ps in sorted(freed.items()))
        back = f"<div>given back this step (rejected drafts), now free: {listed}</div>"
    return head + grid + more + back + "<h4>page table rows</h4>" + (rows or "<div>(no request holds a row)</div>")


def plot_page_map(
    pages: PageMapSnapshot,
    ax: Any = None,
    max_pages: Optional[int] = None,
    title: str = "",
    freed: Optional[dict[int, list[int]]] = None,
) -> Any:
    """The page grid as a matplotlib figure: colour = owner, grey = cached only, hatch = cached,
    a red x = given back this step (`freed`: uid -> pages, speculative decoding's rejected drafts)."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch, Rectangle

    users = page_users(pages)
    given_back = {p for ps in (freed or {}).values() for p in ps}
    n = pages.num_pages if max_pages is None else min(max_pages, pages.num_pages)
    nrows = -(-n // COLUMNS)
    if ax is None:
        fig, ax = plt.subplots(figsize=(7, 0.4 * nrows + 1.3))
    else:
        fig = ax.figure
    for p in range(n):
        x, y = p % COLUMNS, nrows - 1 - p // COLUMNS
        owner = users[p][0] if users[p] else None
        colour = uid_colour(owner) if owner is not None else ("#dddddd" if pages.cached[p] else "white")
        edge = "#d62728" if p in given_back and not users[p] else "0.6"
        ax.add_patch(
            Rectangle((x, y), 0.92, 0.92, facecolor=colour, edgecolor=edge, hatch="//" if pages.cached[p] else None)
        )
        if len(users[p]) > 1:
            ax.text(x + 0.46, y + 0.46, str(len(users[p])), ha="center", va="center", fontsize=7)
        elif p in given_back and not users[p]:
            ax.text(x + 0.46, y + 0.46, "x", ha="center", va="center", fontsize=8, color="#d62728", weight="bold")
    ax.set_xlim(0, COLUMNS)
    ax.set_ylim(0, nrows)
    ax.set_aspect("equal")
    ax.axis("off")
    handles = [Patch(color=uid_colour(u), label=f"uid {u}") for u in sorted(pages.rows)]
    handles.append(Patch(facecolor="white", edgecolor="0.6", hatch="//", label="in prefix cache"))
    if given_back:
        handles.append(Patch(facecolor="white", edgecolor="#d62728", label="x: given back this step"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
    ax.set_title(
        title or f"KV pages (page size {pages.page_size}); a number = shared by that many requests", fontsize=9
    )
    fig.tight_layout()
    return fig


class KVPageMap:
    """The page map of a `LocalServer`, refreshed after every step, with a slider over past steps."""

    def __init__(self, srv: LocalServer, max_pages: Optional[int] = 128) -> None:
        import ipywidgets as W

        self.srv = srv
        self.max_pages = max_pages
        self.history: list[PageMapSnapshot] = [srv.snapshot().pages]
        self.freed: list[dict[int, list[int]]] = [{}]  # per entry of history: pages given back in that step
        self.step_button = W.Button(description="Step", icon="step-forward")
        self.refresh_button = W.Button(description="Refresh", icon="refresh")
        self.slider = W.IntSlider(value=0, min=0, max=0, description="after step")
        self.view = W.HTML()
        self.step_button.on_click(lambda _: srv.step())  # on_step below records and redraws
        # Not a step: nothing was given back since the last picture.
        self.refresh_button.on_click(lambda _: self._record(srv.snapshot(), step=False))
        self.slider.observe(lambda change: self._draw(), names="value")
        srv.on_step.append(self._record)
        self.widget = W.VBox([W.HBox([self.step_button, self.refresh_button, self.slider]), self.view])
        self._draw()

    def _record(self, snap: Snapshot, step: bool = True) -> None:
        self.history.append(snap.pages)
        self.freed.append(freed_in(snap) if step else {})
        at_end = self.slider.value == self.slider.max
        self.slider.max = len(self.history) - 1
        if at_end:
            self.slider.value = self.slider.max  # follow the newest step unless the user looks back
        self._draw()

    @property
    def pages(self) -> PageMapSnapshot:
        """The snapshot the slider points at."""
        return self.history[self.slider.value]

    def _draw(self) -> None:
        self.view.value = render_html(self.pages, self.max_pages, self.freed[self.slider.value])

    def figure(self) -> Any:
        return plot_page_map(self.pages, max_pages=self.max_pages, freed=self.freed[self.slider.value])

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
