"""The widgets in a real browser: JupyterLab, driven by Playwright for Python and Chromium.

Headless widget tests (`tests/test_widgets.py`) click buttons on the Python side only. They pass
even when JupyterLab shows nothing: the widget manager extension missing or of the wrong version,
a view that is never redrawn. This test does what a student does: it starts JupyterLab on the
course notebooks, opens chapter 04, runs every cell from the Run menu, presses the live stepper's
Step button a few times and reads the page (the batch table and the KV page map must change),
runs the cell that aborts a request (its pages must show as free), lets the loop finish with Run
and draws a request timeline. Screenshots go to a temporary folder, and to `docs/images/` (the
README's pictures) when `MINISGL_README_IMAGES=1`.

It needs Playwright for Python (the `dev` extras) and a Chromium binary: Playwright's own browser
download is not used (it needs a CDN); `scripts/install_browser.sh` installs the distribution's
Chromium, or point `MINISGL_CHROMIUM` at one. Without them the test is skipped, with the reason.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
README_IMAGES = ROOT / "docs" / "images"
CHAPTER = "04_scheduler_loop.ipynb"

# Chromium flags for a shared, offline, root container: no sandbox (root), no GPU, nothing that
# phones home or waits for the network.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-quic",
    "--disable-sync",
]

# Every wait is bounded; these are generous for 2 shared CPU cores.
SERVER_START_S = 90
RUN_ALL_S = 240  # chapter 04 loads the model twice and runs ~60 steps; ~30 s on an idle laptop
STEP_S = 60
RUN_TO_END_S = 180

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def find_chromium() -> str | None:
    """MINISGL_CHROMIUM if set (and only it), else the distribution's Chromium."""
    chosen = os.environ.get("MINISGL_CHROMIUM")
    candidates = (
        [chosen]
        if chosen
        else [
            "/usr/bin/chromium",
            "/usr/bin/chromium-browser",
            shutil.which("chromium"),
            shutil.which("chromium-browser"),
        ]
    )
    for candidate in candidates:
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_lab_settings(settings_dir: Path) -> None:
    """User settings for a quiet, deterministic JupyterLab (a fresh folder, not the user's)."""
    settings = {
        # Every cell stays in the DOM, so the n-th cell of the notebook is the n-th .jp-Cell.
        "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
        # No "news / updates?" toast over the screenshots, no network call for it.
        "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
        # The notebooks are a copy, but never write them back anyway.
        "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
    }
    for plugin, values in settings.items():
        pkg, name = plugin.rsplit("/", 1)
        path = settings_dir / pkg / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


class Lab:
    """A JupyterLab server in its own session (process group), stopped with its kernels."""

    def __init__(self, tmp: Path) -> None:
        self.root = tmp / "notebooks"
        # A copy: running the cells in the browser must not touch the stored outputs nbval checks.
        self.root.mkdir()
        for nb in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"):
            shutil.copy(nb, self.root / nb.name)
        write_lab_settings(tmp / "lab-settings")
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.log_path = tmp / "jupyterlab.log"
        env = dict(
            os.environ,
            JUPYTERLAB_SETTINGS_DIR=str(tmp / "lab-settings"),
            JUPYTERLAB_WORKSPACES_DIR=str(tmp / "lab-workspaces"),
            JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
            TOKENIZERS_PARALLELISM="false",
        )
        cmd = [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            "--LabApp.expose_app_in_browser=True",
        ]  # window.jupyterapp: read the notebook's state
        if os.geteuid() == 0:
            cmd.append("--allow-root")  # CI containers run as root
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            cmd, stdout=self._log, stderr=subprocess.STDOUT, env=env, cwd=self.root, start_new_session=True
        )
        self._wait_ready()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def api(self, path: str, method: str = "GET") -> object:
        req = urllib.request.Request(
            f"{self.url}{path}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def log_tail(self, n: int = 3000) -> str:
        return self.log_path.read_text(errors="replace")[-n:]

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + SERVER_START_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                self.api("/api/status")
                return
            except OSError:
                time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"JupyterLab did not answer within {SERVER_START_S} s:\n{self.log_tail()}")

    def stop(self) -> None:
        try:  # kernels run in sessions of their own: shut them down through the server first
            for kernel in self.api("/api/kernels"):
                self.api(f"/api/kernels/{kernel['id']}", method="DELETE")
        except OSError:
            pass
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self._log.close()


@pytest.fixture(scope="module")
def chromium() -> str:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("Playwright for Python is not installed (`pip install -e '.[dev]'` installs it)")
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        pytest.skip("JupyterLab is not installed (`pip install -e '.[dev]'` installs it)")
    path = find_chromium()
    if path is None:
        if os.environ.get("MINISGL_CHROMIUM"):
            pytest.skip(f"MINISGL_CHROMIUM={os.environ['MINISGL_CHROMIUM']} is not an executable file")
        pytest.skip(
            "no Chromium binary: `bash scripts/install_browser.sh` installs Debian's chromium with apt "
            "(it could not here), or set MINISGL_CHROMIUM to a Chromium executable"
        )
    return path


@pytest.fixture(scope="module")
def lab(tmp_path_factory, chromium):
    server = Lab(tmp_path_factory.mktemp("lab"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    """Save a screenshot of a locator in the tmp folder (and into docs/images/ when asked)."""
    folder = tmp_path_factory.mktemp("screenshots")
    to_readme = os.environ.get("MINISGL_README_IMAGES") == "1"

    def save(locator, name: str) -> Path:
        path = folder / name
        locator.screenshot(path=str(path), animations="disabled")
        if to_readme:
            README_IMAGES.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, README_IMAGES / name)
        return path

    save.folder = folder
    return save


# ---------------------------------------------------------------------------------- page helpers
JS_CELL_INDEX = """(needle) => jupyterapp.shell.currentWidget.content.widgets
    .findIndex(c => c.model.sharedModel.getSource().includes(needle))"""

# True once every code cell ran once, in order, in this kernel (counts 1..n: the stored counts of
# the file do not count) and the kernel is idle; an error output is returned as its text.
JS_RUN_ALL_DONE = """() => {
    const nb = jupyterapp.shell.currentWidget;
    const cells = nb.content.widgets.filter(c => c.model.type === 'code');
    for (const c of cells) {
        for (const o of c.model.outputs.toJSON()) {
            if (o.output_type === 'error') return 'error: ' + o.ename + ': ' + o.evalue;
        }
    }
    return nb.sessionContext.kernelDisplayStatus === 'idle'
        && cells.every((c, i) => c.model.executionCount === i + 1);
}"""


def button(widget, label: str):
    """The ipywidgets Button labelled `label` (its icon is an <i>, the label is the text)."""
    return widget.locator("button.jupyter-button", has_text=re.compile(rf"^\s*{label}\s*$"))


def widget_text(locator) -> str:
    return locator.inner_text().replace("\xa0", " ")


def wait_text(page, locator, pattern: str, timeout_s: float, what: str) -> str:
    """Poll the rendered text of `locator` until it matches `pattern` (a regex)."""
    deadline = time.monotonic() + timeout_s
    text = ""
    while time.monotonic() < deadline:
        text = widget_text(locator)
        if re.search(pattern, text):
            return text
        page.wait_for_timeout(250)
    raise AssertionError(f"{what}: /{pattern}/ not shown within {timeout_s} s; the page shows:\n{text}")


def page_map_state(view) -> dict:
    """What the KV page map shows: the counts in its header, each page's users, the table rows."""
    text = widget_text(view)
    counts = {k: int(v) for k, v in re.findall(r"(in use|cached only|free): (\d+)", text)}
    titles = view.locator("div[title^='page ']").evaluate_all("els => els.map(e => e.title)")
    users = {}
    for t in titles:
        m = re.match(r"page (\d+): users \[([\d, ]*)\]", t)
        users[int(m.group(1))] = [int(u) for u in m.group(2).split(",") if u.strip()]
    rows = {int(u): row for u, row in re.findall(r"uid (\d+): pages (\[[\d, ]*\])", text)}
    return {"counts": counts, "users": users, "rows": rows, "text": text}


def wait_page_map(page, view, predicate, what: str) -> dict:
    deadline = time.monotonic() + STEP_S
    while True:
        state = page_map_state(view)
        if predicate(state):
            return state
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not shown within {STEP_S} s; the page map shows:\n{state['text']}")
        page.wait_for_timeout(250)


# ---------------------------------------------------------------------------------- the test
def test_chapter_04_widgets_work_in_jupyterlab(lab, chromium, shots, tmp_path):
    from playwright.sync_api import sync_playwright

    t0 = time.monotonic()
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),
            executable_path=chromium,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 1000},
            timeout=60_000,
        )
        try:
            page = context.new_page()
            page.set_default_timeout(60_000)
            console_errors: list[str] = []
            page.on("console", lambda m: m.type == "error" and console_errors.append(m.text))
            try:
                _drive_chapter_04(page, lab, shots)
            except BaseException:
                try:
                    page.screenshot(path=str(shots.folder / "failure.png"), full_page=True)
                except Exception:
                    pass
                print(
                    f"screenshots: {shots.folder}\nbrowser console errors: {console_errors[-10:]}\n"
                    f"JupyterLab log:\n{lab.log_tail()}"
                )
                raise
        finally:
            context.close()
    print(f"browser test: {time.monotonic() - t0:.0f} s; screenshots in {shots.folder}")


@dataclass
class LiveCell:
    """The live stepper's cell of chapter 04 and the two widgets it shows: the stepper (its batch
    table and buttons) and the KV page map; `*_view` is the rendered text of each."""

    cell: object
    stepper: object
    pages: object
    stepper_view: object
    pages_view: object


def _drive_chapter_04(page, lab, shots) -> None:
    """What a student does with chapter 04, in order: run every cell, step, abort, run, draw."""
    _open_and_run_all(page, lab)
    cells = page.locator(".jp-Notebook .jp-Cell")
    live = _live_cell(page, cells)
    map_steps = _step_three_times(page, live)
    shots(live.cell.locator(".jp-Cell-outputArea"), "stepper_pagemap.png")
    victim = _abort_one(page, cells, live, map_steps)
    live.cell.scroll_into_view_if_needed()
    shots(live.cell.locator(".jp-Cell-outputArea"), "stepper_pagemap_after_abort.png")
    _run_to_the_end(page, live, map_steps, victim)
    _draw_a_timeline(page, cells, shots)


def _open_and_run_all(page, lab) -> None:
    """Open chapter 04 once its kernel is idle, then Run > Run All Cells through the menus as a
    student would: every cell must run without an error."""
    page.goto(f"{lab.url}/lab/tree/{CHAPTER}?reset&token={lab.token}")
    page.wait_for_function(
        "() => window.jupyterapp && jupyterapp.shell.currentWidget"
        " && jupyterapp.shell.currentWidget.sessionContext"
        " && jupyterapp.shell.currentWidget.sessionContext.kernelDisplayStatus === 'idle'",
        timeout=SERVER_START_S * 1000,
    )
    title = page.evaluate("() => jupyterapp.shell.currentWidget.title.label")
    assert title == CHAPTER

    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
    done = page.wait_for_function(JS_RUN_ALL_DONE, polling=500, timeout=RUN_ALL_S * 1000).json_value()
    assert done is True, f"a cell failed in the browser: {done}"


def _live_cell(page, cells) -> LiveCell:
    """The cell that shows the live stepper, once its widgets have rendered."""
    live_cell = cells.nth(page.evaluate(JS_CELL_INDEX, "live_stepper = SchedulerStepper"))
    live_cell.scroll_into_view_if_needed()
    outputs = live_cell.locator(".jp-OutputArea-output")
    try:  # the frontend half of ipywidgets: without it the cell shows only a text repr
        outputs.nth(1).locator(".jupyter-widgets").first.wait_for(timeout=30_000)
    except Exception:
        raise AssertionError(
            "the widgets did not render in JupyterLab (is @jupyter-widgets/jupyterlab-manager "
            f"installed and matching ipywidgets?); the cell shows:\n{live_cell.inner_text()}"
        )
    stepper, pages = outputs.nth(0), outputs.nth(1)
    stepper_view = stepper.locator(".widget-html-content").first
    pages_view = pages.locator(".widget-html-content").first
    return LiveCell(live_cell, stepper, pages, stepper_view, pages_view)


def _step_three_times(page, live: LiveCell) -> dict:
    """Press Step three times: after each click the batch table must show the new step and the
    batch planned next, and the page map ends with all three prompts in the cache. Returns that
    page map."""
    before = wait_text(page, live.stepper_view, r"steps run: 0", STEP_S, "stepper before any step")
    assert re.search(r"next batch #1 \(prefill, \d+ tokens\)", before), before
    map_before = page_map_state(live.pages_view)
    assert map_before["counts"]["in use"] > 0  # the planned prefill batch holds its pages already

    views = [before]
    for k in (1, 2, 3):
        button(live.stepper, "Step").click()
        # (on_step draws the step's result first, then the stepper draws the batch planned next)
        views.append(
            wait_text(
                page, live.stepper_view, rf"steps run: {k}\b[\s\S]*next batch #\d+", STEP_S, f"stepper after step {k}"
            )
        )
    after = views[-1]
    assert len(set(views)) == 4, "the batch table did not change between steps"
    next_ids = [int(re.search(r"next batch #(\d+)", v).group(1)) for v in views]
    assert next_ids == sorted(set(next_ids)), next_ids  # a new batch is planned after every step
    assert re.search(r"\bdecode\b|\bprefill\b", after)
    slider = live.pages.locator(".widget-readout").first
    wait_text(page, slider, r"^3$", STEP_S, "page map slider (one picture per step)")
    # After three steps all three prompts are in the cache: three page-table rows, more pages in use.
    return wait_page_map(
        page,
        live.pages_view,
        lambda m: len(m["rows"]) == 3 and m["counts"]["in use"] > map_before["counts"]["in use"],
        "the KV page map after three steps",
    )


def _abort_one(page, cells, live: LiveCell, map_steps: dict) -> int:
    """Run the abort cell, which cancels the request with the most pages: the page map must show
    them free again, the others keep theirs, and the stepper lists the request as aborted. Returns
    its uid."""
    abort_cell = cells.nth(page.evaluate(JS_CELL_INDEX, "live.abort(victim)"))
    abort_cell.scroll_into_view_if_needed()
    abort_cell.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    printed = wait_text(page, abort_cell.locator(".jp-OutputArea"), r"aborted uid \d+", STEP_S, "abort cell")
    victim = int(re.search(r"aborted uid (\d+)", printed).group(1))
    freed = json.loads(re.search(r"its pages (\[[\d, ]*\])", printed).group(1))
    # (The row may have grown by a page since the map's last picture: planning the next batch reserves.)
    assert set(json.loads(map_steps["rows"][victim])) <= set(freed), (map_steps["rows"], freed)
    map_abort = wait_page_map(
        page, live.pages_view, lambda m: victim not in m["rows"], f"the KV page map after aborting uid {victim}"
    )
    for p in freed:
        assert map_abort["users"][p] == [], f"page {p} still shows users {map_abort['users'][p]}"

    # The others keep their pages (plus any page reserved for their next token); the free count
    # grows by the victim's pages, less those new pages.
    def others(m):
        return {p for u, row in m["rows"].items() if u != victim for p in json.loads(row)}

    assert others(map_steps) <= others(map_abort), (map_steps["rows"], map_abort["rows"])
    grown = len(others(map_abort) - others(map_steps))
    assert map_abort["counts"]["in use"] == len(others(map_abort)), map_abort["text"]
    assert map_abort["counts"]["free"] == (
        map_steps["counts"]["free"] + len(json.loads(map_steps["rows"][victim])) - grown
    ), (map_steps["counts"], map_abort["counts"], grown)
    wait_text(page, live.stepper_view, rf"\b{victim}\s+finished\b.*\babort\b", STEP_S, "stepper after the abort")
    return victim


def _run_to_the_end(page, live: LiveCell, map_steps: dict, victim: int) -> None:
    """Run: the background loop finishes the other requests, and the view follows it from that
    thread; Pause then shows no batch planned and no row held."""
    live.cell.scroll_into_view_if_needed()
    button(live.stepper, "Run").click()
    others = sorted(u for u in map_steps["rows"] if u != victim)
    for u in others:
        wait_text(page, live.stepper_view, rf"\b{u}\s+finished\b", RUN_TO_END_S, f"uid {u} after Run")
    button(live.stepper, "Pause").click()
    wait_text(page, live.stepper_view, r"next batch: none", STEP_S, "stepper after Pause")
    wait_text(page, live.pages_view, r"\(no request holds a row\)", STEP_S, "page map after Run")


def _draw_a_timeline(page, cells, shots) -> None:
    """A request timeline in a new cell at the end (an image widget: drawn by matplotlib in the
    kernel), with one event a line from the API server's "received" to its "[DONE]"."""
    page.evaluate(
        """async (code) => {
        const nb = jupyterapp.shell.currentWidget;
        nb.content.activeCellIndex = nb.content.widgets.length - 1;
        await jupyterapp.commands.execute('notebook:insert-cell-below');
        nb.content.activeCell.model.sharedModel.setSource(code);
        await jupyterapp.commands.execute('notebook:run-cell');
    }""",
        "from minisgl_edu.widgets import RequestTimeline\n"
        "uid = live.submit(prompts[0], SamplingParams(max_tokens=8))\n"
        "live.run_until_idle()  # the loop is paused: this steps here\n"
        "RequestTimeline(live, uid)",
    )
    timeline_cell = cells.last
    timeline_cell.scroll_into_view_if_needed()
    img = timeline_cell.locator(".jp-OutputArea-output img").first
    img.wait_for(timeout=STEP_S * 1000)
    page.wait_for_function(
        "(img) => img.complete && img.naturalWidth > 100", arg=img.element_handle(), polling=250, timeout=STEP_S * 1000
    )
    events = wait_text(page, timeline_cell.locator(".jp-OutputArea"), r"\[DONE\]", STEP_S, "timeline events")
    assert re.search(r"^api_server\s+received\b", events, re.M) and re.search(
        r"^api_server\s+\[DONE\]", events, re.M
    ), events
    shots(timeline_cell.locator(".jp-Cell-outputArea"), "request_timeline.png")
