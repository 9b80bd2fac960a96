"""The widgets, headless: buttons are clicked with `.click()`, sliders set with `.value = ...`."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from minisgl_edu.core import SamplingParams  # noqa: E402
from minisgl_edu.runtime import LocalServer  # noqa: E402
from minisgl_edu.widgets.common import esc  # noqa: E402
from minisgl_edu.widgets import KVPageMap, RequestTimeline, SchedulerStepper  # noqa: E402
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
