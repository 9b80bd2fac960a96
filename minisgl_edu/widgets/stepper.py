"""The scheduler stepper: run the scheduler one iteration at a time and watch the batches.

Where this sits on the request path: on top of `LocalServer`, i.e. around `Scheduler.step()`.
`StepperModel` is the logic (submit the demo prompts, plan, step, run, reset) and keeps the
history of batches; `SchedulerStepper` only draws the model's latest `Snapshot` and wires the
buttons to it. `render_html` and `plot_schedule` are pure functions of snapshots, so everything
here works without a browser (tests click the buttons with `button.click()`).

With speculative decoding on, a step may run a "verify" batch: the requests that guessed their
next tokens carry them as drafts. The view then shows, for the batch that just ran, which drafts
the model accepted, which it rejected, the model's own token and the pages given back
(`verify_marks`); the next batch lists each request's drafts before they are checked.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from minisgl_edu.core import SamplingParams
from minisgl_edu.runtime import BatchItemView, BatchView, LocalServer, Snapshot
from minisgl_edu.widgets.common import esc, table, uid_colour


class StepperModel:
    """Drives a `LocalServer` one step at a time; always shows the batch that comes next."""

    def __init__(self, srv: LocalServer, prompts: Sequence[Any] = (), params: Optional[SamplingParams] = None) -> None:
        self.srv = srv
        self.prompts = list(prompts)
        self.params = params
        self.history: list[BatchView] = []  # every batch that ran, in order
        self.uids: list[int] = []
        srv.on_step.append(self._on_step)  # also sees the steps of the background loop
        self._submit_prompts()
        self.snapshot = srv.plan()

    def _submit_prompts(self) -> None:
        self.uids = [self.srv.submit(p, self.params) for p in self.prompts]

    def _on_step(self, snap: Snapshot) -> None:
        if snap.batch is not None:
            self.history.append(snap.batch)
        self.snapshot = snap

    @property
    def done(self) -> bool:
        return self.snapshot.idle

    def step(self) -> Snapshot:
        """Run the batch shown as "next", then let the scheduler choose the one after it."""
        self.srv.step()
        self.snapshot = self.srv.plan()
        return self.snapshot

    def run(self, max_steps: int = 10_000) -> Snapshot:
        for _ in range(max_steps):
            if self.done:
                break
            self.step()
        return self.snapshot

    def reset(self) -> Snapshot:
        """Abort everything, empty the cache, submit the demo prompts again."""
        self.srv.reset()
        self.history.clear()
        self._submit_prompts()
        self.snapshot = self.srv.plan()
        return self.snapshot


def _piece(batch: BatchView, token: int) -> str:
    """A token as the view shows it: its text quoted (spaces and newlines visible), else its id."""
    text = batch.token_text.get(token)
    return repr(text) if text is not None else f"#{token}"


def _batch_rows(batch: BatchView) -> list[list[Any]]:
    """One row per item, with the item's own phase: a mixed batch has both, a verify batch may
    have requests with drafts and requests without."""
    rows = []
    for it in batch.items:
        if it.draft:
            phase = "verify"
            drafts = " ".join(_piece(batch, t) for t in it.draft)
            what = f"position {it.start}, then {len(it.draft)} drafts at {it.start + 1}..{it.end - 1}: {drafts}"
        elif it.is_decode:
            phase, what = "decode", f"position {it.start}"
        else:
            phase, what = "prefill", f"prompt tokens {it.start}..{it.end - 1}"
        rows.append([it.uid, phase, it.num_tokens, what])
    return rows


def verify_marks(item: BatchItemView) -> list[tuple[int, str]]:
    """What became of each draft of a request in a verify batch that ran, then the model's token.

    Each draft is "accepted" (the model's own choice at that position was the draft), "rejected"
    (the first draft it disagreed with, and every draft after it, which was computed after a
    wrong token), or "after finish" (accepted, but the request finished on an earlier token of
    the run, so the client never gets it). Last, ("model") the model's own token at the first
    position it disagreed, or after the last draft when it accepted them all; absent when the
    request finished inside the accepted run.
    """
    n = len(item.accepted)
    marks = []
    for j, token in enumerate(item.draft):
        if j >= n:
            marks.append((token, "rejected"))
        else:
            marks.append((token, "accepted" if j < len(item.tokens) else "after finish"))
    if len(item.tokens) > n:
        marks.append((item.tokens[n], "model"))
    return marks


_MARK_STYLE = {
    "accepted": ("&#10003; ", "background:#c7e9c0"),
    "rejected": ("&#10007; ", "background:#fcbba1;text-decoration:line-through"),
    "after finish": ("&#10003; ", "background:#eeeeee;color:#777"),
    "model": ("", "border:1px solid #1f77b4;font-weight:bold"),
}


def _mark_html(batch: BatchView, token: int, status: str) -> str:
    sign, style = _MARK_STYLE[status]
    return (
        f"<span title='{status} (token {token})' style='{style};padding:0 3px;margin-right:2px'>"
        f"{sign}{esc(_piece(batch, token))}</span>"
    )


def verify_html(batch: BatchView) -> str:
    """The outcome of a verify batch that ran: per request that drafted, its drafts marked
    accepted or rejected, the model's own token, the tokens kept and the pages given back."""
    rows = []
    for it in batch.items:
        if not it.draft:
            continue
        marks = verify_marks(it)
        drafts = "".join(_mark_html(batch, t, status) for t, status in marks if status != "model")
        model = "".join(_mark_html(batch, t, status) for t, status in marks if status == "model")
        finished = batch.finished.get(it.uid)
        kept = f"{len(it.tokens)}" + (f" (finished: {esc(finished)})" if finished else "")
        freed = esc(it.freed_pages) if it.freed_pages else "none"
        rows.append([it.uid, f"{len(it.accepted)} of {len(it.draft)}: {drafts}", model or "-", kept, freed])
    legend = (
        "<div style='font-size:90%'>&#10003; accepted: the model's own choice at that position was the "
        "draft; &#10007; rejected: it was not (the drafts after it were computed after a wrong token); "
        "boxed: the model's own token, which the same forward pass gives for free</div>"
    )
    return (
        f"<h4>batch #{batch.batch_id} just ran: a verify batch (drafts checked in one forward pass)</h4>"
        + table(["uid", "drafts accepted", "model's token", "tokens this step", "pages given back"], rows, raw=True)
        + legend
    )


def render_html(snap: Snapshot) -> str:
    """The stepper's view of one snapshot: next batch, queues, and every request's text so far."""
    parts = [f"<b>steps run: {snap.steps}</b> &nbsp; free KV pages: {snap.free_pages} / {snap.pages.num_pages}"]
    if snap.batch is not None and snap.batch.has_drafts:
        parts.append(verify_html(snap.batch))
    b = snap.next_batch
    if b is not None:
        parts.append(f"<h4>next batch #{b.batch_id} ({b.phase}, {b.num_tokens} tokens)</h4>")
    elif snap.batch is not None and not snap.idle:
        # A snapshot from the running background loop: the next batch is not chosen yet (the loop
        # chooses it at its next step), so show the batch that just ran instead of "none".
        b = snap.batch
        parts.append(
            f"<h4>running: just ran batch #{b.batch_id} ({b.phase}, {b.num_tokens} tokens); "
            f"the next one is chosen at the next step</h4>"
        )
    else:
        parts.append("<h4>next batch: none (nothing to run)</h4>")
    if b is not None:
        parts.append(table(["uid", "phase", "tokens this step", "computes"], _batch_rows(b)))
    parts.append(
        f"<p>waiting queue (head first): {snap.waiting or '[]'} &nbsp; running: {snap.running or '[]'}"
        f" &nbsp; messages in flight: {snap.queues}</p>"
    )
    rows = []
    for uid, r in sorted(snap.requests.items()):
        dot = f"<span style='color:{uid_colour(uid)}'>&#9632;</span> {uid}"
        rows.append(
            [
                dot,
                esc(r.status),
                r.prompt_tokens,
                r.cached_tokens,
                r.output_tokens,
                esc(r.finish_reason or ""),
                esc(r.text),
            ]
        )
    parts.append(table(["uid", "status", "prompt", "cached", "output", "finish", "text so far"], rows, raw=True))
    return "\n".join(parts)


def plot_schedule(history: list[BatchView], ax: Any = None) -> Any:
    """Which request ran in which step: a row per uid, a cell per step, dark = prefill, light = decode.

    Prefill cells carry the number of prompt tokens computed, so chunked prefill shows as several
    dark cells in a row. A mixed batch is a column with both (decoding goes on beside the chunks).
    A decode cell of a request that verified drafts carries "accepted/drafts" (speculative decoding).
    Returns the matplotlib Figure.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    uids = sorted({it.uid for b in history for it in b.items})
    if ax is None:
        fig, ax = plt.subplots(figsize=(min(2 + 0.35 * max(len(history), 1), 14), 0.5 * max(len(uids), 1) + 1.2))
    else:
        fig = ax.figure
    y = {u: i for i, u in enumerate(reversed(uids))}
    for step, b in enumerate(history, start=1):
        for it in b.items:
            prefill = not it.is_decode
            ax.add_patch(
                Rectangle(
                    (step - 0.45, y[it.uid] - 0.4), 0.9, 0.8, color=uid_colour(it.uid), alpha=1.0 if prefill else 0.35
                )
            )
            if prefill:
                ax.text(step, y[it.uid], str(it.num_tokens), ha="center", va="center", fontsize=7, color="white")
            elif it.draft:
                ax.text(step, y[it.uid], f"{len(it.accepted)}/{len(it.draft)}", ha="center", va="center", fontsize=6)
    ax.set_xlim(0.3, len(history) + 0.7)
    ax.set_ylim(-0.6, len(uids) - 0.4)
    ax.set_yticks([y[u] for u in uids], [f"uid {u}" for u in uids])
    label = "step (one batch each): dark = prefill (prompt tokens written in), light = decode"
    if any(b.has_drafts for b in history):
        label += "\nn/k in a decode cell: a verify of k drafts that accepted n"
    ax.set_xlabel(label)
    fig.tight_layout()
    return fig


class SchedulerStepper:
    """Buttons Step / Run / Pause / Reset over a `StepperModel`, and an HTML view of its snapshot.

    Without a background loop, Run steps until every request is done (the cell is busy
    meanwhile). After `srv.start(paused=True)`, Run resumes the background loop, Pause stops it
    between two steps and Step runs single steps while paused: the view follows live.
    """

    def __init__(self, srv: LocalServer, prompts: Sequence[Any] = (), params: Optional[SamplingParams] = None) -> None:
        import ipywidgets as W

        self.model = StepperModel(srv, prompts, params)
        self.step_button = W.Button(description="Step", icon="step-forward")
        self.run_button = W.Button(description="Run", icon="play")
        self.pause_button = W.Button(description="Pause", icon="pause")
        self.reset_button = W.Button(description="Reset", icon="refresh")
        self.view = W.HTML()
        self.step_button.on_click(lambda _: self._do(self.model.step))
        self.run_button.on_click(lambda _: self._run())
        self.pause_button.on_click(lambda _: self._pause())
        self.reset_button.on_click(lambda _: self._do(self.model.reset))
        srv.on_step.append(lambda snap: self.refresh())  # live updates, from the background loop too
        self.widget = W.VBox(
            [W.HBox([self.step_button, self.run_button, self.pause_button, self.reset_button]), self.view]
        )
        self.refresh()

    def _do(self, action: Any) -> None:
        action()
        self.refresh()

    def _run(self) -> None:
        srv = self.model.srv
        if srv.background:
            srv.resume()
        else:
            self._do(self.model.run)

    def _pause(self) -> None:
        if self.model.srv.background:
            self.model.srv.pause()
            # Show the batch that comes next (and anything that changed outside a step, an abort).
            self.model.snapshot = self.model.srv.plan()
            self.refresh()

    def refresh(self) -> None:
        self.view.value = render_html(self.model.snapshot)

    def figure(self) -> Any:
        """A static picture of the batches so far (for a notebook read without a kernel)."""
        return plot_schedule(self.model.history)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
