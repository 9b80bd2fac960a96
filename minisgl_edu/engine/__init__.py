"""The engine: model + KV memory + attention backend + sampler, one forward pass at a time."""

from minisgl_edu.engine.config import EngineConfig
from minisgl_edu.engine.engine import Engine, ForwardOutput
from minisgl_edu.engine.sampler import Sampler

__all__ = ["Engine", "EngineConfig", "ForwardOutput", "Sampler"]
