"""The tokenizer and detokenizer worker processes: one entry function, `tokenize_worker`.

Where this sits on the request path, twice:

    API server --TokenizeMsg--> [tokenizer] --UserMsg--> scheduler
    scheduler --DetokenizeMsg--> [detokenizer] --UserReply--> API server

Both roles run the same loop and the type of each message decides the work:

* `TokenizeMsg`  -> chat template + tokenize + validate -> `UserMsg` to the scheduler (several at
  once as one `BatchBackendMsg`). A prompt that can never run (longer than the context, token ids
  outside the vocabulary, a broken chat) gets an error `UserReply` straight back to the API
  server: the scheduler never sees it. Every accepted prompt also sends the API server a
  `UserReply` with no text that tells it the prompt length (for `usage.prompt_tokens`).
* `AbortMsg`     -> `AbortBackendMsg` to the scheduler, which frees the request's pages and slot.
* `DetokenizeMsg`-> one `IncrementalDetokenizer` per uid turns the new token into text -> a
  `UserReply`; the decoder is dropped when the request finishes (an abort also ends with a
  finished `DetokenizeMsg` from the scheduler), so the map does not grow.
* `SchedulerStatsMsg` -> passed on to the API server for /metrics.
* `ExitMsg`      -> return.
"""

from __future__ import annotations

import dataclasses
import logging
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from minisgl_edu.message import (
    AbortBackendMsg,
    AbortMsg,
    BatchBackendMsg,
    BatchFrontendMsg,
    DetokenizeMsg,
    ExitMsg,
    SchedulerStatsMsg,
    TokenizeMsg,
    UserMsg,
    UserReply,
    unwrap,
)
from minisgl_edu.message.stamps import stamp
from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer, TokenText
from minisgl_edu.tokenizer.template import encode_prompts

logger = logging.getLogger(__name__)


class TokenizeManager:
    """TokenizeMsg -> token ids, or the reason the prompt can never run."""

    def __init__(self, tokenizer: Any, max_seq_len: int, vocab_size: int) -> None:
        self.tokenizer = tokenizer
        self.max_seq_len = max_seq_len
        self.vocab_size = vocab_size

    def tokenize(self, msgs: list[TokenizeMsg]) -> list[Union[list[int], ValueError]]:
        """The token ids of each message's prompt, encoded together, or the ValueError that says
        to its client why it can never run."""
        try:
            encoded = encode_prompts(self.tokenizer, [m.text for m in msgs])
        except Exception as e:  # not a prompt we refuse: the tokenizer itself failed on one
            if len(msgs) > 1:
                return [r for m in msgs for r in self.tokenize([m])]  # so that it fails alone
            # The exception type only, not its text, which could quote the prompt.
            logger.error("tokenize_worker: %s while encoding a prompt", type(e).__name__)
            return [ValueError("the prompt could not be tokenized")]
        out: list[Union[list[int], ValueError]] = []
        for msg, ids in zip(msgs, encoded):
            try:
                out.append(ids if isinstance(ids, ValueError) else self._checked(msg, ids))
            except ValueError as e:
                out.append(e)
        return out

    def _checked(self, msg: TokenizeMsg, ids: list[int]) -> list[int]:
        if not ids:
            raise ValueError("the prompt is empty")
        if len(ids) >= self.max_seq_len:
            raise ValueError(
                f"This model's maximum context length is {self.max_seq_len} tokens, but the prompt has "
                f"{len(ids)} tokens (at least one token must be left for the output)."
            )
        bad = next((t for t in ids if not 0 <= t < self.vocab_size), None)
        if bad is not None:
            raise ValueError(f"token id {bad} is outside the vocabulary (0 .. {self.vocab_size - 1})")
        msg.sampling_params.validate()
        return ids


@dataclass
class _DetokState:
    decoder: IncrementalDetokenizer
    num_output_tokens: int = 0
    cached_tokens: int = 0
    # Kept until a reply goes out: the first token may not make text yet, and then no reply is
    # sent for it; the API server still gets the queue time, on the next reply.
    queue_seconds: Optional[float] = None
    logprobs: list[dict] = field(default_factory=list)  # entries of tokens whose text is not sent yet
    stamps: Optional[dict] = None  # the first token's path (message/stamps.py), until its text goes out


class DetokenizeManager:
    """DetokenizeMsg -> UserReply, keeping one incremental decoder per running uid."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.decode_map: dict[int, _DetokState] = {}
        self.token_text = TokenText(tokenizer)  # each token's own text and bytes, for logprobs

    def detokenize(self, msg: DetokenizeMsg) -> Optional[UserReply]:
        state = self.decode_map.get(msg.uid)
        if state is None:
            state = self.decode_map[msg.uid] = _DetokState(IncrementalDetokenizer(self.tokenizer, msg.stop))
        # max(): the scheduler's abort message does not repeat the prefix hit.
        state.cached_tokens = max(state.cached_tokens, msg.cached_tokens)
        if msg.queue_seconds is not None:
            state.queue_seconds = msg.queue_seconds
        if msg.stamps is not None:
            state.stamps = msg.stamps
        text = ""
        if msg.next_token >= 0:  # -1: no token (rejected or aborted)
            state.num_output_tokens += 1
            text = state.decoder.add(msg.next_token)
            if msg.logprob is not None:
                state.logprobs.append(self.token_text.logprob_entry(msg.next_token, msg.logprob, msg.top_logprobs))
        if msg.finished:
            text += state.decoder.finish()
            del self.decode_map[msg.uid]
        elif not text:
            return None  # nothing to show yet (half a character, or maybe a stop string)
        reply = UserReply(
            uid=msg.uid,
            incremental_output=text,
            finished=msg.finished,
            finish_reason=msg.finish_reason,
            num_output_tokens=state.num_output_tokens,
            error=msg.error,
            cached_tokens=state.cached_tokens,
            queue_seconds=state.queue_seconds,
            logprobs=state.logprobs,
            stamps=state.stamps,
        )
        state.queue_seconds = state.stamps = None  # sent once
        state.logprobs = []
        return reply


class TokenizeWorker:
    """The loop of one tokenizer or detokenizer process: receive, dispatch by type, send."""

    def __init__(
        self,
        recv,
        send_frontend,
        send_backend,
        tokenize: Optional[TokenizeManager],
        detokenize: Optional[DetokenizeManager],
    ) -> None:
        self.recv = recv
        self.send_frontend = send_frontend
        self.send_backend = send_backend  # None in the detokenizer
        self.tokenize_manager = tokenize
        self.detokenize_manager = detokenize

    def run(self, idle_check=lambda: True) -> None:
        while True:
            msg = self.recv.get(timeout=0.5)
            if msg is None:
                if not idle_check():
                    return
                continue
            # Take everything that is already waiting: one send per burst instead of one per message.
            msgs = unwrap(msg) + [m for x in self.recv.get_all_nowait() for m in unwrap(x)]
            if not self.handle(msgs):
                return

    def handle(self, msgs: list[Any]) -> bool:
        """Process a burst of messages; False when an ExitMsg asks the loop to end."""
        now = time.monotonic()
        for msg in msgs:  # the path to a first token: this worker took it now (message/stamps.py)
            stamps = getattr(msg, "stamps", None)
            stamp(stamps, "tokenizer_recv" if isinstance(msg, TokenizeMsg) else "detokenizer_recv", now)
        to_backend: list[Any] = []
        to_frontend: list[Any] = []
        keep_going = True
        # The burst's prompts are encoded together (one call of the tokenizer), then handled in order.
        prompts = [m for m in msgs if isinstance(m, TokenizeMsg)]
        encoded = iter(self.tokenize_manager.tokenize(prompts) if prompts else [])
        for msg in msgs:
            try:
                if isinstance(msg, TokenizeMsg):
                    self._tokenize(msg, next(encoded), to_backend, to_frontend)
                elif isinstance(msg, AbortMsg):
                    to_backend.append(AbortBackendMsg(uid=msg.uid))
                elif isinstance(msg, DetokenizeMsg):
                    reply = self.detokenize_manager.detokenize(msg)
                    if reply is not None:
                        to_frontend.append(reply)
                elif isinstance(msg, SchedulerStatsMsg):
                    to_frontend.append(msg)
                elif isinstance(msg, ExitMsg):
                    keep_going = False
                else:
                    # The type only: a message can hold a prompt, and prompts stay out of logs.
                    logger.error("tokenize_worker: unexpected message of type %s", type(msg).__name__)
            except Exception as e:
                # One bad message must not take the process (and so the whole server) down.
                # Log the exception type only, not its text, which could quote the prompt.
                logger.error("tokenize_worker: %s failed on a %s", type(e).__name__, type(msg).__name__)
                uid = getattr(msg, "uid", None)
                if isinstance(msg, TokenizeMsg):
                    to_frontend.append(
                        UserReply(
                            uid=msg.uid,
                            incremental_output="",
                            finished=True,
                            finish_reason="abort",
                            error="the prompt could not be tokenized",
                        )
                    )
                elif isinstance(msg, DetokenizeMsg) and uid is not None:
                    self.detokenize_manager.decode_map.pop(uid, None)
                    if msg.finished:  # end the request for the client; else later tokens start afresh
                        to_frontend.append(
                            UserReply(
                                uid=uid,
                                incremental_output="",
                                finished=True,
                                finish_reason=msg.finish_reason,
                                error=msg.error,
                            )
                        )
        now = time.monotonic()
        for out in to_backend:
            stamp(getattr(out, "stamps", None), "tokenizer_sent", now)
        for out in to_frontend:
            stamp(getattr(out, "stamps", None), "detokenizer_sent", now)
        # Frontend first: the prompt-length reply should reach the API server before the tokens.
        if to_frontend:
            self.send_frontend.put(to_frontend[0] if len(to_frontend) == 1 else BatchFrontendMsg(data=to_frontend))
        if to_backend:
            self.send_backend.put(to_backend[0] if len(to_backend) == 1 else BatchBackendMsg(data=to_backend))
        return keep_going

    def _tokenize(
        self, msg: TokenizeMsg, ids: Union[list[int], ValueError], to_backend: list, to_frontend: list
    ) -> None:
        if isinstance(ids, ValueError):
            to_frontend.append(
                UserReply(uid=msg.uid, incremental_output="", finished=True, finish_reason="abort", error=str(ids))
            )
            return
        # (n > 1) one request per answer; the others wait for the first one's prompt pages
        for k, uid in enumerate([msg.uid, *msg.more_uids]):
            to_frontend.append(UserReply(uid=uid, incremental_output="", finished=False, num_prompt_tokens=len(ids)))
            params, leader = msg.sampling_params, None
            if k:
                leader = msg.uid
                if params.seed is not None:  # n different answers, still reproducible (as vLLM: seed + k)
                    params = dataclasses.replace(params, seed=params.seed + k)
            stamps = msg.stamps if k == 0 else None  # the first answer's path stands for the n
            to_backend.append(
                UserMsg(uid=uid, input_ids=ids, sampling_params=params, prompt_leader=leader, stamps=stamps)
            )


def tokenize_worker(
    *,
    name: str,
    model_dir: str,
    recv_addr: str,
    frontend_addr: str,
    backend_addr: Optional[str],
    ready_conn: Any,
) -> None:
    """Process entry for `minisgl-tokenizer-i` (backend_addr set) and `minisgl-detokenizer-0` (None)."""
    from minisgl_edu.process import frozen_heap, init_worker, parent_alive

    init_worker(name)
    import zmq

    from minisgl_edu.message.ipc import ZmqPullQueue, ZmqPushQueue

    ctx = zmq.Context()
    sockets = []
    try:
        from minisgl_edu.models import ModelConfig, load_tokenizer

        tokenizer = load_tokenizer(model_dir)
        recv = ZmqPullQueue(ctx, recv_addr, bind=True)
        send_frontend = ZmqPushQueue(ctx, frontend_addr)
        sockets = [recv, send_frontend]
        if backend_addr is not None:
            config = ModelConfig.from_dir(model_dir)
            send_backend = ZmqPushQueue(ctx, backend_addr)
            sockets.append(send_backend)
            worker = TokenizeWorker(
                recv,
                send_frontend,
                send_backend,
                TokenizeManager(tokenizer, config.max_position_embeddings, config.vocab_size),
                None,
            )
        else:
            worker = TokenizeWorker(recv, send_frontend, None, None, DetokenizeManager(tokenizer))
    except BaseException:
        ready_conn.send({"name": name, "ok": False, "error": traceback.format_exc()})
        raise
    ready_conn.send({"name": name, "ok": True})
    ready_conn.close()
    try:
        with frozen_heap():
            worker.run(idle_check=parent_alive)
    finally:
        for s in sockets:
            s.close()
        ctx.term()
