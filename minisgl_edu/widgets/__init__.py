"""Widgets for the course: each draws a snapshot of a `LocalServer` and has a static figure.

    SchedulerStepper(srv, prompts)   Step / Run / Pause / Reset, the next batch, queues, texts
    KVPageMap(srv)                   the KV pages coloured by owner, prefix-cache pages marked
    RequestTimeline(srv, uid)        one request's trace across the components

ipywidgets and matplotlib are imported only when a widget is created.
"""

from minisgl_edu.widgets.pagemap import KVPageMap, plot_page_map
from minisgl_edu.widgets.stepper import SchedulerStepper, StepperModel, plot_schedule
from minisgl_edu.widgets.timeline import RequestTimeline, plot_timeline

__all__ = [
    "KVPageMap",
    "RequestTimeline",
    "SchedulerStepper",
    "StepperModel",
    "plot_page_map",
    "plot_schedule",
    "plot_timeline",
]
