"""The scheduler: waiting queue, prefill and decode batches, finish and abort."""

from minisgl_edu.scheduler.config import SchedulerConfig
from minisgl_edu.scheduler.finish import check_finish
from minisgl_edu.scheduler.io import QueueIO, SchedulerIO
from minisgl_edu.scheduler.record import StepRecord
from minisgl_edu.scheduler.scheduler import Scheduler, SchedulerStats

__all__ = ["QueueIO", "Scheduler", "SchedulerConfig", "SchedulerIO", "SchedulerStats", "StepRecord", "check_finish"]
