"""The widgets, headless: buttons are clicked with `.click()`, sliders set with `.value = ...`."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from minisgl_edu.core import SamplingParams  # noqa: E402
from minisgl_edu.runtime import LocalServer  # noqa: E402
from minisgl_edu.widgets import KVPageMap, RequestTimeline, SchedulerStepper  # noqa: E402
from minisgl_edu.widgets.common import esc  # noqa: E402
from minisgl_edu.widgets.pagemap import page_counts, page_users  # noqa: E402

PROMPTS = [[100 + i for i in range(n)] for n in (9, 5, 14)]
PARAMS = SamplingParams(max_tokens=4, ignore_eos=True)


@pytest.fixture
def srv(tiny_model_dir):
    s = LocalServer(tiny_model_dir, device="cpu", page_size=4, num_pages=64, max_prefill_tokens=16)
    yield s
    s.stop()


def test_step_button_drives_three_requests_to_completion(srv):
    st = SchedulerStepper(srv, PROMPTS, PARAMS)
    first = st.model.snapshot.next_batch
    # Budget 16: both short prompts, and the first 2 tokens of the 14-token one (chunked prefill).
    assert first.phase == "prefill" and [(i.uid, i.num_tokens) for i in first.items] == [(0, 9), (1, 5), (2, 2)]
    assert "next batch #1 (prefill, 16 tokens)" in st.view.value
    clicks = 0
    while not st.model.done:
        st.step_button.click()
        clicks += 1
        assert clicks < 50
    results = [srv.result(u) for u in st.model.uids]
    assert [r.finish_reason for r in results] == ["length"] * 3
    assert all(len(r.token_ids) == 4 for r in results)
    assert st.model.history[0].batch_id == first.batch_id
    assert {it.uid for b in st.model.history for it in b.items} == {0, 1, 2}
    assert "next batch: none" in st.view.value
    for r in results:  # each request's text is shown, escaped
        assert esc(r.text) in st.view.value
    st.figure()


def test_run_and_reset_buttons(srv):
    st = SchedulerStepper(srv, PROMPTS, PARAMS)
    st.run_button.click()
    assert st.model.done
    tokens = [srv.result(u).token_ids for u in st.model.uids]
    steps = len(st.model.history)
    st.reset_button.click()
    assert not st.model.done and st.model.history == [] and st.model.snapshot.steps == 0
    st.run_button.click()
    # Reset empties the prefix cache, so the rerun schedules and generates exactly the same.
    assert [srv.result(u).token_ids for u in st.model.uids] == tokens and len(st.model.history) == steps


def test_pause_button_stops_the_background_loop(srv):
    st = SchedulerStepper(srv, PROMPTS, PARAMS)
    srv.start(paused=True)
    st.step_button.click()  # single step while paused
    assert st.model.snapshot.steps == 1
    st.run_button.click()  # resumes the loop; the view follows through on_step
    srv.run_until_idle(timeout=60)
    st.pause_button.click()
    assert srv.paused and all(srv.result(u).finished for u in st.model.uids)
    assert "next batch: none" in st.view.value


def test_view_during_a_background_run_shows_the_batch_that_just_ran(srv):
    """A step's own snapshot (what the background loop hands to on_step) has no next batch yet:
    the view must say what is running, not "nothing to run" while requests are still going."""
    from minisgl_edu.widgets.stepper import render_html

    for p in PROMPTS:
        srv.submit(p, PARAMS)
    snap = srv.step()
    assert snap.next_batch is None and snap.batch is not None and not snap.idle
    html = render_html(snap)
    assert f"just ran batch #{snap.batch.batch_id} (prefill, 16 tokens)" in html
    assert "nothing to run" not in html
    srv.run_until_idle()
    assert "next batch: none (nothing to run)" in render_html(srv.snapshot())


def test_page_map_colours_owners_marks_shared_prefix_and_frees(srv):
    pm = KVPageMap(srv)
    shared = list(range(200, 216))  # 16 tokens = 4 full pages shared by both requests
    a = srv.submit(shared + [1000, 1001], SamplingParams(max_tokens=3, ignore_eos=True))
    srv.run_until_idle()  # a finishes: its full pages go to the prefix cache
    b = srv.submit(shared + [2000], SamplingParams(max_tokens=8, ignore_eos=True))
    c = srv.submit(shared + [3000, 3001], SamplingParams(max_tokens=8, ignore_eos=True))
    pm.step_button.click()
    shared_step = pm.slider.value
    assert shared_step == pm.slider.max  # the view follows the newest step
    pages = pm.pages
    users = page_users(pages)
    both = [p for p, u in enumerate(users) if u == [b, c]]
    assert len(both) == 4 and all(pages.cached[p] for p in both)
    assert "C2" in pm.view.value and f"uid {b}: pages" in pm.view.value
    assert a not in pages.rows
    srv.run_until_idle()
    assert page_counts(pm.pages)["in use"] == 0 and pm.pages.rows == {}
    # The slider goes back in time: the step where b and c shared their prefix.
    pm.slider.value = shared_step
    assert page_users(pm.pages)[both[0]] == [b, c]
    pm.slider.value = pm.slider.max
    assert "no request holds a row" in pm.view.value
    pm.figure()


def test_request_timeline_follows_uid_choice(srv):
    u0 = srv.submit(PROMPTS[0], PARAMS)
    srv.run_until_idle()
    tl = RequestTimeline(srv, u0)
    assert tl.image.value[:4] == b"\x89PNG"
    assert "[DONE]" in tl.events_view.value
    u1 = srv.submit(PROMPTS[1], SamplingParams(max_tokens=30, ignore_eos=True))
    srv.step()
    srv.abort(u1)
    tl.refresh_button.click()
    assert list(tl.uid_dropdown.options) == [u0, u1]
    tl.uid_dropdown.value = u1
    assert "aborted" in tl.events_view.value and "[DONE]" not in tl.events_view.value


# ---------------------------------------------------------------- the timeline figure's labels


def text_boxes(fig):
    """The renderer's extents (display pixels) of every name in the plot, and of the lane names,
    title and axis label around it: what matplotlib actually draws, not an estimate."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    texts = list(ax.texts) + list(ax.get_yticklabels()) + [ax.title, ax.xaxis.label]
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts if t.get_text()]
    return boxes, ax.get_window_extent(renderer)


def assert_readable(fig):
    boxes, axes_box = text_boxes(fig)
    for i, (a, box_a) in enumerate(boxes):
        for b, box_b in boxes[i + 1 :]:
            width = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
            height = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
            assert width <= 0 or height <= 0, f"{a!r} and {b!r} overlap: {box_a} {box_b}"
    names = {t.get_text() for t in fig.axes[0].texts}
    for name, box in boxes:
        if name in names:  # inside the plot: none is cut off at an edge
            assert (
                axes_box.x0 <= box.x0 and box.x1 <= axes_box.x1 and axes_box.y0 <= box.y0 and box.y1 <= axes_box.y1
            ), name


def test_timeline_names_never_overlap_on_a_real_trace(srv):
    from minisgl_edu.widgets.timeline import plot_timeline, timeline_marks

    done = srv.submit(PROMPTS[2], SamplingParams(max_tokens=30, ignore_eos=True))
    cut = srv.submit(PROMPTS[0], SamplingParams(max_tokens=30, ignore_eos=True))
    for _ in range(5):
        srv.step()
    srv.abort(cut)
    srv.run_until_idle()
    for uid in (done, cut):
        events = srv.trace(uid)
        fig = plot_timeline(events, title=f"request {uid}")
        assert_readable(fig)
        # Every event is named: one name per one-off event, one per repeating kind with its count.
        labels = [t.get_text() for t in fig.axes[0].texts]
        assert len(labels) == len(timeline_marks(events))
        matplotlib.pyplot.close(fig)
    assert "token ×30" in [m.label for m in timeline_marks(srv.trace(done))]


def test_timeline_names_never_overlap_when_everything_happens_at_once():
    from minisgl_edu.trace import TraceEvent
    from minisgl_edu.widgets.timeline import plot_timeline

    # The worst case for labels: a dozen long names at one instant in one lane, a run of ticks
    # across the whole time axis, and names at both ends of it.
    events = [TraceEvent(0, "tokenizer", f"a rather long event name number {i}", 100.0) for i in range(12)]
    events += [TraceEvent(0, "scheduler", "token", 100.0 + 0.01 * i, {"token": i}) for i in range(80)]
    events += [
        TraceEvent(0, "scheduler", "finished", 100.8, {"reason": "length"}),
        TraceEvent(0, "api_server", "received", 100.0),
        TraceEvent(0, "api_server", "[DONE]", 100.8),
    ]
    fig = plot_timeline(events, title="everything at once")
    assert_readable(fig)
    assert len({round(t.get_position()[1], 3) for t in fig.axes[0].texts}) >= 12  # they stack in rows
    matplotlib.pyplot.close(fig)


# ---------------------------------------------------------------- speculative decoding: a verify batch


def test_verify_marks_of_a_run_cut_by_a_finish():
    """Accepted, rejected, the model's own token, and drafts accepted after the request finished."""
    from minisgl_edu.runtime import BatchItemView
    from minisgl_edu.widgets.stepper import verify_marks

    item = BatchItemView(0, 40, 5, True, draft=[5, 6, 7, 8], accepted=[5, 6], tokens=[5, 6, 9])
    assert verify_marks(item) == [(5, "accepted"), (6, "accepted"), (7, "rejected"), (8, "rejected"), (9, "model")]
    every = BatchItemView(0, 40, 3, True, draft=[5, 6], accepted=[5, 6], tokens=[5, 6, 9])
    assert verify_marks(every) == [(5, "accepted"), (6, "accepted"), (9, "model")]  # the bonus token
    # EOS (6) inside the accepted run: the request stops there; 7 was accepted but never sent.
    cut = BatchItemView(0, 40, 5, True, draft=[5, 6, 7, 8], accepted=[5, 6, 7], tokens=[5, 6])
    assert verify_marks(cut) == [(5, "accepted"), (6, "accepted"), (7, "after finish"), (8, "rejected")]


def test_stepper_and_page_map_show_a_scripted_verify_step(tiny_model_dir, monkeypatch):
    """One request's first decode step carries four drafts: the model's next two tokens, then two
    wrong ones. The stepper shows them before the step, then which were accepted and rejected,
    the model's own token and the page given back; the page map marks that page, now free."""
    import minisgl_edu.scheduler.speculator as speculator_module
    from minisgl_edu.widgets.stepper import render_html

    prompt, params = PROMPTS[0], SamplingParams(max_tokens=8, ignore_eos=True)
    with LocalServer(tiny_model_dir, device="cpu", page_size=1, num_pages=64) as plain:
        ref = plain.generate(prompt, params).token_ids  # the tokens without speculation
    wrong = [(ref[3] + 1) % 49152, (ref[3] + 2) % 49152]
    script = {len(prompt) + 1: [ref[1], ref[2], *wrong]}  # tokens known -> drafts; none otherwise
    monkeypatch.setattr(speculator_module, "propose_ngram", lambda tokens, k, n_max, n_min: script.get(len(tokens), []))

    srv = LocalServer(tiny_model_dir, device="cpu", page_size=1, num_pages=64, speculative_algorithm="ngram")
    st = SchedulerStepper(srv, [prompt], params)
    pm = KVPageMap(srv)
    st.step_button.click()  # the prefill; the next batch verifies the drafts
    planned = st.model.snapshot.next_batch
    assert planned.phase == "verify" and planned.items[0].draft == script[len(prompt) + 1]
    assert "next batch #2 (verify, 5 tokens)" in st.view.value
    piece = {t: esc(repr(srv.tokenizer.decode([t]))) for t in ref + wrong}
    assert all(piece[t] in st.view.value for t in script[len(prompt) + 1])  # the drafts, before the check
    row_before = list(st.model.snapshot.pages.rows[0])
    free_before = st.model.snapshot.free_pages

    st.step_button.click()  # the verify step
    ran = st.model.history[-1]
    assert ran.phase == "verify" and ran.items[0].tokens == ref[1:4]
    html = st.view.value
    assert "batch #2 just ran: a verify batch" in html
    for t in ref[1:3]:
        assert f"title='accepted (token {t})'" in html and piece[t] in html
    for t in wrong:
        assert f"title='rejected (token {t})'" in html
    assert f"title='model (token {ref[3]})'" in html
    # Positions len(prompt)..+4 were reserved; three tokens were kept, so the last page goes back.
    freed = ran.items[0].freed_pages
    assert freed == row_before[len(prompt) + 4 :] and len(freed) == 1
    assert f"<td style='padding:0 8px'>{freed}</td>" in html
    snap = srv.snapshot()
    assert freed[0] not in snap.pages.rows[0]
    assert f"given back this step (rejected drafts), now free: uid 0: pages {freed}" in pm.view.value
    assert f"page {freed[0]}: given back by uid 0 this step" in pm.view.value
    assert pm.freed[-1] == {0: freed} and snap.free_pages == free_before + 1

    st.run_button.click()  # no more drafts: plain decode steps to the end, the same tokens
    assert srv.result(0).token_ids == ref
    assert "just ran: a verify batch" not in render_html(srv.snapshot())
    fig = st.figure()
    assert "2/4" in [t.get_text() for t in fig.axes[0].texts]  # the verify cell: 2 of 4 accepted
    matplotlib.pyplot.close(fig)
    pm.slider.value = 2  # back to the verify step: its page is marked again
    assert f"page {freed[0]}: given back by uid 0 this step" in pm.view.value
    matplotlib.pyplot.close(pm.figure())
    srv.stop()
