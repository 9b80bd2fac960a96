"""`--shell`: chat with the model in this terminal, on the same engine processes as the server.

Where this sits on the request path: in place of the HTTP layer. The shell talks to the backend
directly, exactly like an HTTP handler does: `new_user()` for a uid, a `TokenizeMsg` with the
whole conversation (so the chat template sees the history), then the `UserReply`s that `listen`
delivers for that uid, printed as they arrive.

Commands: `/reset` forgets the conversation, `/exit` (or Ctrl+D) quits. Ctrl+C while the model
is answering stops that answer (an `AbortMsg`, as when an HTTP client disconnects); Ctrl+C at the
prompt quits.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from typing import Any, Optional

from minisgl_edu.core import SamplingParams
from minisgl_edu.message import TokenizeMsg

HELP = "Type a message. /reset forgets the conversation, /exit quits. Ctrl+C stops an answer."


def _start_stdin_reader(loop: asyncio.AbstractEventLoop, lines: asyncio.Queue) -> None:
    """Put each line typed (None at end of input) into `lines`, without blocking the event loop.

    The event loop watches the stdin file descriptor itself (`add_reader`), so no thread sits in
    a blocking `input()` that could hang, or crash, the interpreter when the shell quits.
    """
    fd = sys.stdin.fileno()
    buffer = bytearray()

    def on_readable() -> None:
        chunk = os.read(fd, 4096)
        if not chunk:  # end of input (Ctrl+D, or a closed pipe)
            loop.remove_reader(fd)
            if buffer:
                lines.put_nowait(buffer.decode(errors="replace"))
            lines.put_nowait(None)
            return
        buffer.extend(chunk)
        while b"\n" in buffer:
            line, _, rest = bytes(buffer).partition(b"\n")
            buffer[:] = rest
            lines.put_nowait(line.decode(errors="replace"))

    loop.add_reader(fd, on_readable)


async def _answer(state: Any, history: list[dict], params: SamplingParams) -> str:
    """Send the conversation, print the reply as it streams, return its text."""
    from minisgl_edu.server.generate import Generation, next_reply

    uid = state.new_user()
    gen = Generation(uid)
    pieces: list[str] = []
    try:
        await state.send_one(TokenizeMsg(uid=uid, text=list(history), sampling_params=params))
        while True:
            reply = await next_reply(state, gen)
            if reply.error:
                print(f"\n[error] {reply.error}", flush=True)
                return ""
            pieces.append(reply.incremental_output)
            print(reply.incremental_output, end="", flush=True)
            if reply.finished:
                print(flush=True)
                return "".join(pieces)
    finally:
        if gen.done:
            state.finish_user(uid)
        else:
            state.abort_user(uid)


async def shell_loop(state: Any, params: SamplingParams, prompt: str = "> ") -> None:
    loop = asyncio.get_running_loop()
    lines: asyncio.Queue = asyncio.Queue()
    _start_stdin_reader(loop, lines)
    history: list[dict] = []
    current: Optional[asyncio.Task] = None
    quit_event = asyncio.Event()

    def on_sigint() -> None:
        if current is not None and not current.done():
            current.cancel()  # stop this answer, keep the shell
        else:
            quit_event.set()

    loop.add_signal_handler(signal.SIGINT, on_sigint)
    loop.add_signal_handler(signal.SIGTERM, quit_event.set)
    print(HELP, flush=True)
    try:
        while not quit_event.is_set():
            print(prompt, end="", flush=True)
            get_line = asyncio.ensure_future(lines.get())
            quit_wait = asyncio.ensure_future(quit_event.wait())
            await asyncio.wait({get_line, quit_wait}, return_when=asyncio.FIRST_COMPLETED)
            quit_wait.cancel()
            if not get_line.done():
                get_line.cancel()
                break
            line = get_line.result()
            if line is None or line.strip() == "/exit":
                break
            text = line.strip()
            if not text:
                continue
            if text == "/reset":
                history.clear()
                print("(conversation cleared)", flush=True)
                continue
            if state.dead_worker is not None:
                print(f"[error] {state.dead_worker}", flush=True)
                break
            history.append({"role": "user", "content": text})
            current = asyncio.ensure_future(_answer(state, history, params))
            try:
                answer = await current
            except asyncio.CancelledError:
                if quit_event.is_set():
                    break
                print("\n(stopped)", flush=True)
                history.pop()  # the question without an answer would confuse the next turn
                continue
            finally:
                current = None
            if answer:
                history.append({"role": "assistant", "content": answer})
            else:
                history.pop()
    finally:
        loop.remove_reader(sys.stdin.fileno())
        loop.remove_signal_handler(signal.SIGINT)
        loop.remove_signal_handler(signal.SIGTERM)
        print(flush=True)


def run_shell(args: Any, addrs: Any, workers: list, params: Optional[SamplingParams] = None) -> int:
    """Chat until /exit; exit code 1 if a worker died meanwhile."""
    from minisgl_edu.server.frontend import FrontendState

    # Greedy by default: the same question gives the same answer, which is what a demo wants.
    params = params or SamplingParams(max_tokens=256, temperature=0.0)

    async def main() -> int:
        state = FrontendState(addrs, workers, workers[0].info.get("stats"))
        died: list[str] = []

        def on_death(message: str) -> None:
            died.append(message)
            print(f"\n[minisgl] error: {message}; shutting down", file=sys.stderr, flush=True)
            shell.cancel()

        async with state.serving(on_death):
            shell = asyncio.create_task(shell_loop(state, params))
            with contextlib.suppress(asyncio.CancelledError):
                await shell
        return 1 if died else 0

    return asyncio.run(main())
