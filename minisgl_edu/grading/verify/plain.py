"""The verify step written again as plain loops, independently of the package's, with one known
mistake (a key of mistakes.MISTAKES) made on purpose: the graders compare the student's result with
each mistake's to name the one it shows.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.verify.requests import _call, count_agreed
from minisgl_edu.kvcache.manager import pages_for
from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult


def _accept(drafts: list[int], targets: list[int], mistake: Optional[str]) -> tuple[int, list[int]]:
    """(drafts the model agreed with, the run before any cut)."""
    if mistake == "past_mismatch":
        agreed = [d for d, t in zip(drafts, targets) if d == t]
        n = len(agreed)
        return n, agreed + targets[n : n + 1]
    n = count_agreed(drafts, targets)
    run = list(drafts[:n])
    if mistake == "rejected_draft_kept" and n < len(drafts):
        return n, run + [drafts[n]]
    if mistake == "model_token_missing" or (mistake == "no_bonus" and n == len(drafts)):
        return n, run
    if mistake == "model_token_next" and n + 1 < len(targets):
        return n, run + [targets[n + 1]]
    if mistake == "model_token_last":
        return n, run + targets[-1:]
    return n, run + [targets[n]]


def _finish(
    req: VerifyRequest, output: list[int], new_from: int, model_token: bool, mistake: Optional[str], token=None
):
    """The finish check of the newest token of `output` (the request's tokens so far, this step's
    from `new_from`; `token`: the one checked, when `output` runs past it)."""
    eos = (output[-1] if token is None else token) in req.eos_ids and (
        not req.ignore_eos or mistake == "ignore_eos_ignored"
    )
    stop = False
    if req.stop and not (mistake == "ignore_eos_stops_off" and req.ignore_eos):
        if mistake == "stop_per_token":
            text = req.decode(output[-1:])
        elif mistake == "stop_new_only":
            text = req.decode(output[new_from:])
        elif mistake == "stop_window_chars":
            text = req.decode(output[-(max(len(s) for s in req.stop) + 4) :])
        elif mistake == "stop_window_bytes":
            text = req.decode(output[-max(len(s.encode("utf-8")) for s in req.stop) :])
        elif mistake == "stop_window_most_chars":
            text = req.decode(output[-(len(max(req.stop, key=len).encode("utf-8")) + 4) :])
        elif mistake == "stop_window_shorter":
            text = req.decode(output[-(min(len(s.encode("utf-8")) for s in req.stop) + 4) :])
        elif mistake == "stop_in_pieces":  # the output's tail and the new tokens decoded apart, then joined
            w = max(len(s.encode("utf-8")) for s in req.stop) + 4
            text = req.decode(output[:new_from][-w:]) + req.decode(output[new_from:][-w:])
        elif mistake == "stop_window_margin":  # room for two ignored end ids, not three
            text = req.decode(output[-(max(len(s.encode("utf-8")) for s in req.stop) + 2) :])
        else:  # the engine's window: a token stands for at least one byte of UTF-8
            text = req.decode(output[-(max(len(s.encode("utf-8")) for s in req.stop) + 4) :])
        found = all if mistake == "stop_all" else any  # all(): every stop string had to show
        stop = found(s in text for s in req.stop)
    if mistake == "finish_not_on_model_token" and model_token:
        eos = stop = False
    limit = req.max_new_tokens + (mistake == "length_one_past") - (mistake == "length_one_early")
    length = len(output) >= limit
    if mistake == "length_overshoot" or (mistake == "length_not_on_model_token" and model_token):
        length = False
    if mistake == "length_first" and length:
        return "length"
    if eos or stop:
        return "stop"
    return "length" if length else None


def _step(req: VerifyRequest, drafts: list[int], targets: list[int], mistake: Optional[str] = None) -> VerifyResult:
    """The verify step written again, independently of the package's, with `mistake` (a key of
    MISTAKES) made on purpose."""
    n, run = _accept(drafts, targets, mistake)
    tokens: list[int] = []
    reason = None
    for i, token in enumerate(run):
        if mistake == "ignored_eos_dropped" and req.ignore_eos and token in req.eos_ids:
            continue  # "the EOS is ignored": the end id left out of the tokens
        tokens.append(token)
        if mistake == "finish_on_last_only" and i < len(run) - 1:
            continue
        if mistake == "no_break" and reason is not None:
            continue  # finished already: the first reason stays, and the token is kept all the same
        if mistake == "whole_run":  # the checks see the run's later tokens too
            reason = _finish(req, req.output_ids + run, len(req.output_ids), i == n, mistake, token)
        else:
            reason = _finish(req, req.output_ids + tokens, len(req.output_ids), i == n, mistake)
        if reason is not None:
            if mistake == "finishing_token_dropped":  # checked before the append, and left without it
                tokens.pop()
            if mistake == "model_token_after_finish" and i < len(run) - 1:
                tokens.append(run[-1])  # "a step always gives the model's token", even after the finish
            if mistake != "no_break":  # no_break: the loop goes on to the end of the run
                break
    before = req.prompt_len + len(req.output_ids)
    total = before + len(tokens)
    uncut = before + len(run)
    kv_len = {
        "kv_counts_rejected": before + len(drafts),
        "kv_counts_newest": total,
        "kv_no_prompt": total - req.prompt_len - 1,
        "kv_uncut": uncut - 1,
        "kv_no_drafts": before,
    }.get(mistake, total - 1)
    keep = {
        "pages_none": len(req.pages),
        "pages_round_down": total // req.page_size,
        "pages_round_up": total // req.page_size + 1,
        "pages_newest": pages_for(total - 1, req.page_size),
        "pages_no_prompt": pages_for(total - req.prompt_len, req.page_size),
        "pages_uncut": pages_for(uncut, req.page_size),
        "pages_per_rejected_draft": len(req.pages) - pages_for(len(drafts) - n, req.page_size),
        "pages_of_four": pages_for(total, 4),
    }.get(mistake, pages_for(total, req.page_size))
    accepted = n + 1 if mistake == "bonus_accepted" and n == len(drafts) else n
    free = req.pages[keep:]
    if mistake == "pages_minus_zero" and not free:  # req.pages[-drop:] with drop == 0
        free = list(req.pages)
    return VerifyResult(accepted, tokens, reason, kv_len, free)


def answers_with(fn, req: VerifyRequest, drafts: list[int], targets: list[int], mistake: str) -> bool:
    """On this step the answer returns what the step with `mistake` returns, and that result is not the
    right one (so the step tells the mistake apart). The diagnoses ask their own small probes after it."""
    mistaken = _step(req, list(drafts), list(targets), mistake)
    if fn is None or mistaken == _step(req, list(drafts), list(targets)):
        return False
    try:
        return _call(fn, req, list(drafts), list(targets)) == mistaken
    except Exception:
        return False
