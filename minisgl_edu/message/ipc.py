"""ZeroMQ plumbing: where each process listens, and queues that speak in messages, not bytes.

Where this sits on the request path: on every arrow between two processes.

    API server  --PUSH tokenizer_i-->  tokenizer i      (TokenizeMsg, AbortMsg; i = uid % N)
    tokenizer i --PUSH scheduler-->    scheduler        (UserMsg / BatchBackendMsg, AbortBackendMsg)
    scheduler   --PUSH detokenizer-->  detokenizer      (DetokenizeMsg, SchedulerStatsMsg)
    detokenizer --PUSH frontend-->     API server       (UserReply, SchedulerStatsMsg)
    tokenizer i --PUSH frontend-->     API server       (UserReply: prompt length, or an error)

PUSH/PULL sockets are one-way pipes that keep order between one sender and one receiver, and
a PULL socket can collect from many senders. The receiving side binds, senders connect; ZeroMQ
lets a sender connect before the receiver has bound (it retries), so start-up order does not
matter. The sockets are `ipc://` files in one temporary directory per server, removed on exit.

Why route a uid always to the same tokenizer (uid % N)? Its `AbortMsg` then follows its
`TokenizeMsg` through the same pipe and cannot overtake it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Optional

import zmq
import zmq.asyncio

from minisgl_edu.message.codec import decode, encode


@dataclass(frozen=True)
class IpcAddresses:
    """The ZeroMQ addresses of one server instance."""

    tokenizers: list[str]  # one per tokenizer worker; the API server pushes to them
    scheduler: str
    detokenizer: str
    frontend: str  # the API server's inbox

    @classmethod
    def in_dir(cls, directory: str, num_tokenizers: int) -> IpcAddresses:
        def addr(name: str) -> str:
            return "ipc://" + os.path.join(directory, name)

        return cls(
            tokenizers=[addr(f"tokenizer-{i}") for i in range(num_tokenizers)],
            scheduler=addr("scheduler"),
            detokenizer=addr("detokenizer"),
            frontend=addr("frontend"),
        )


def _socket(ctx: zmq.Context, kind: int, addr: str, bind: bool) -> zmq.Socket:
    sock = ctx.socket(kind)
    # On close, drop unsent messages after 0.5 s instead of blocking exit forever when the peer is gone.
    sock.setsockopt(zmq.LINGER, 500)
    if bind:
        sock.bind(addr)
    else:
        sock.connect(addr)
    return sock


class ZmqPushQueue:
    """Send messages (blocking ZeroMQ, for the worker processes)."""

    def __init__(self, ctx: zmq.Context, addr: str, bind: bool = False) -> None:
        self.socket = _socket(ctx, zmq.PUSH, addr, bind)

    def put(self, msg: Any) -> None:
        self.socket.send(encode(msg), copy=False)

    def close(self) -> None:
        self.socket.close()


class ZmqPullQueue:
    """Receive messages (blocking ZeroMQ, for the worker processes)."""

    def __init__(self, ctx: zmq.Context, addr: str, bind: bool = True) -> None:
        self.socket = _socket(ctx, zmq.PULL, addr, bind)

    def get(self, timeout: Optional[float] = None) -> Optional[Any]:
        """The next message, or None if nothing arrived within `timeout` seconds."""
        if timeout is not None and not self.socket.poll(int(timeout * 1000)):
            return None
        return decode(self.socket.recv(copy=False).bytes)

    def get_all_nowait(self) -> list[Any]:
        msgs = []
        while self.socket.poll(0):
            msgs.append(decode(self.socket.recv(copy=False).bytes))
        return msgs

    def close(self) -> None:
        self.socket.close()


class ZmqAsyncPushQueue:
    """Send messages from asyncio code (the API server) without blocking the event loop."""

    def __init__(self, ctx: zmq.asyncio.Context, addr: str, bind: bool = False) -> None:
        self.socket = _socket(ctx, zmq.PUSH, addr, bind)

    async def put(self, msg: Any) -> None:
        await self.socket.send(encode(msg), copy=False)

    def close(self) -> None:
        self.socket.close()


class ZmqAsyncPullQueue:
    """Receive messages in asyncio code (the API server's `listen`)."""

    def __init__(self, ctx: zmq.asyncio.Context, addr: str, bind: bool = True) -> None:
        self.socket = _socket(ctx, zmq.PULL, addr, bind)

    async def get(self) -> Any:
        frame = await self.socket.recv(copy=False)
        return decode(frame.bytes)

    def close(self) -> None:
        self.socket.close()
