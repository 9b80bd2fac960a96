"""The scheduler's connections to the rest of the system, behind one interface (`base.py`)."""

from minisgl_edu.scheduler.io.base import SchedulerIO
from minisgl_edu.scheduler.io.memory import QueueIO

__all__ = ["QueueIO", "SchedulerIO"]
