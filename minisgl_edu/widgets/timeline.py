"""One request's life as a timeline: api_server -> tokenizer -> scheduler -> detokenizer -> [DONE].

Where this sits on the request path: it reads the trace that every component writes as the
request passes (`LocalServer.trace(uid)`), so it covers the whole path. The picture is
`trace.plot_timeline`; the widget adds a uid picker and a Refresh button and shows the events
as text lines too.
"""

from __future__ import annotations

from typing import Any, Optional

from minisgl_edu.runtime import LocalServer
from minisgl_edu.trace import plot_timeline, summarize
from minisgl_edu.widgets.common import esc, figure_png


class RequestTimeline:
    def __init__(self, srv: LocalServer, uid: Optional[int] = None, max_tokens: int = 3) -> None:
        import ipywidgets as W

        self.srv = srv
        self.max_tokens = max_tokens
        uids = sorted(srv.results)
        self.uid_dropdown = W.Dropdown(options=uids, value=uid if uid is not None else (uids[0] if uids else None),
                                       description="uid")
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
        self.events_view.value = "<pre>" + "\n".join(esc(line).replace("&#9166;", "\\n")
                                                       for line in self.lines()) + "</pre>"

    def figure(self) -> Any:
        return plot_timeline(self.srv.trace(self.uid), title=f"request {self.uid}")

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
