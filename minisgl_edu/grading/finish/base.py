"""Exercise 1 — finishing: `check_finish(req, eos_ids, decode) -> "stop" | "length" | None`.

The scheduler calls it after appending each new token (`Scheduler.finish_fn`), with `decode` the
real tokenizer's decode (`Scheduler._decode_tail`). The unit cases build requests by hand and use
that same tokenizer, because the stop-string mistakes only show on real tokens: a stop string
spans several tokens, a token can hold more than the stop string, and a CJK character takes two
or three tokens. The last case plugs the function into the real engine and compares.
"""

from __future__ import annotations

import copy
from typing import Optional

from minisgl_edu.core import Req, SamplingParams
from minisgl_edu.grading.core import Case, Mistake
from minisgl_edu.grading.finish.diagnoses import CASE_SENSITIVE, COUNT_GATE, count_gate, folds_case
from minisgl_edu.grading.finish.scenes import (
    DROPS_END_IDS,
    EOS,
    LATER_STOP_UNDOES,
    PLAIN,
    RETURNS_A_REASON,
    SPLIT,
    _decode,
    _ids,
    _req,
    decoded_in_parts,
    dropped_end_ids,
    finish_case,
    later_stop_undoes,
    noting_decode,
    params_changed,
)
from minisgl_edu.grading.harness import reference_run, run_requests
from minisgl_edu.scheduler.finish import check_finish as reference


def _expect(fn, req: Req, want: Optional[str], why: str, eos_ids: set[int] = EOS, hint: str = "") -> None:
    calls: list[list[int]] = []
    params = copy.deepcopy(req.sampling_params)
    got = fn(req, set(eos_ids), noting_decode(calls))
    changed = params_changed(params, req)
    if changed:
        raise Mistake(
            f"your check_finish changed req.sampling_params ({changed}): it only decides whether the request "
            "is finished. The parameters are the client's, and the scheduler sends list(sampling_params.stop) "
            "to the detokenizer with every token, which cuts the text at those strings",
            "only read req: leave req.sampling_params as it is (the detokenizer reads the stop list after you)",
        )
    if got == want and type(got) is type(want):
        return
    shown = _decode(req.output_ids)
    joined = [t for ids in calls for t in ids]
    if "stop" in (want, got) and dropped_end_ids(req, eos_ids, calls):
        why += (
            f"; your check decoded {len(joined)} tokens with the ids of eos_ids taken out, so the text it searched "
            "is not the output's"
        )
        hint = DROPS_END_IDS
    elif want == "stop" and got is None and decoded_in_parts(req, calls):
        why = (
            f"the last {len(joined)} output tokens decoded together hold a stop string, but your check decoded them "
            f"in {len(calls)} parts ({' + '.join(str(len(ids)) for ids in calls)} tokens) and joined the texts: a "
            "character whose bytes are split between two parts decodes to '\ufffd' in each, so the stop string "
            "never shows"
        )
        hint = SPLIT
    elif want == "stop" and got in (None, "length") and count_gate(fn, req, eos_ids):
        held = next(s for s in req.sampling_params.stop if s in shown)
        why = (
            f"the output holds the stop string {held!r} ({len(held)} characters) after {len(req.output_ids)} tokens; "
            f"put {count_gate(fn, req, eos_ids)} tokens that decode to nothing (special tokens) in front of the same "
            "output and your check finds it: it skips the stop strings while the output has few tokens"
        )
        hint = COUNT_GATE
    elif want == "stop" and got in (None, "length") and len(req.sampling_params.stop) > 1:
        matched = later_stop_undoes(fn, req, eos_ids)
        if matched:
            why = (
                f"stop={req.sampling_params.stop!r}: the output holds {matched!r}; your check finds it when it is "
                "the only stop string, but not when another that the output does not hold comes after it in the "
                "list: a stop string that matches finishes the request whatever the strings after it say"
            )
            hint = LATER_STOP_UNDOES
    raise Mistake(
        f"{why}: your check_finish returned {got!r}, expected {want!r} "
        f"(output {shown!r}, {len(req.output_ids)} of max {req.max_new_tokens} tokens, eos_ids {sorted(eos_ids)})",
        RETURNS_A_REASON if isinstance(got, bool) else hint,
    )


def _completes(ids: list[int], stop: str) -> tuple[int, int]:
    """(done, need): the stop string first shows in the decode of ids[:done], and the last `need` of
    those tokens are the fewest whose decode still holds it (the window a check must decode)."""
    done = next(i for i in range(1, len(ids) + 1) if stop in _decode(ids[:i]))
    need = next(w for w in range(1, done + 1) if stop in _decode(ids[done - w : done]))
    return done, need


def _spans(text: str, stop: str) -> int:
    """How many tokens of `text` the first occurrence of `stop` overlaps (setup checks)."""
    ids, start = _ids(text), text.index(stop)
    n, pos = 0, 0
    for i in range(len(ids)):
        end = len(_decode(ids[: i + 1]))
        if end > start and pos < start + len(stop):
            n += 1
        pos = end
    return n


def case_eos(fn):
    assert _decode([PLAIN]) == " ok", "setup: token 10907 should be ' ok'"
    _expect(fn, _req([PLAIN, PLAIN, 2]), "stop", "the newest token 2 is in eos_ids {0, 2} (a set: every id counts)")
    _expect(fn, _req([PLAIN, PLAIN, 0]), "stop", "the newest token 0 is in eos_ids {0, 2} (a set: every id counts)")
    _expect(
        fn,
        _req([2, PLAIN, PLAIN]),
        None,
        "only the newest token counts (an old EOS would have stopped it then)",
        hint="test req.output_ids[-1] only, not every output token",
    )
    _expect(fn, _req([PLAIN, PLAIN, PLAIN]), None, "no EOS, no stop string, room left")


def case_eos_argument(fn):
    other = {1, PLAIN}  # another model's end ids: here ' ok' ends the answer, and 2 is ordinary text
    _expect(
        fn,
        _req([2, 2, PLAIN]),
        "stop",
        "eos_ids is {1, 10907} here (a model whose end ids are not SmolLM2's): use the eos_ids argument, "
        "the scheduler passes the ids of the model it serves",
        eos_ids=other,
    )
    _expect(
        fn,
        _req([PLAIN, 2]),
        None,
        "eos_ids is {1, 10907} here, so token 2 is ordinary text: use the eos_ids argument, "
        "not the default model's ids",
        eos_ids=other,
    )
    _expect(fn, _req([PLAIN, 2]), None, "eos_ids is empty (a model with no end id): no token is EOS", eos_ids=set())


def case_length(fn):
    _expect(
        fn,
        _req([PLAIN] * 3, max_new=3),
        "length",
        "3 of max 3 tokens",
        hint="the max_new_tokens-th token is the last: 'length' once len(req.output_ids) == req.max_new_tokens "
        "(>=, not >)",
    )
    # The prompt does not count: 'length' after 1 output token of max 3 behind a prompt of 4 tokens, and
    # not behind a prompt of 1, is a length taken over prompt and output together.
    short = _req([PLAIN], max_new=3, prompt="Hi")
    if fn(_req([PLAIN], max_new=3), set(EOS), _decode) == "length" and fn(short, set(EOS), _decode) is None:
        raise Mistake(
            f"1 of max 3 tokens behind the prompt 'Count for me.' ({len(_ids('Count for me.'))} tokens): your "
            "check_finish returned 'length', expected None; behind a 1-token prompt it returned None. Your length "
            "counts the prompt's tokens too: max_new_tokens limits the output only",
            "req.max_new_tokens counts the generated tokens only: compare len(req.output_ids), not the prompt and "
            "the output together (req.all_ids)",
        )
    _expect(
        fn,
        _req([PLAIN] * 2, max_new=3),
        None,
        "2 of max 3 tokens: one more token is allowed",
        hint="'length' only once len(req.output_ids) reaches req.max_new_tokens, not a token before",
    )


def case_clamped(fn):
    _expect(
        fn,
        _req([PLAIN] * 3, max_new=3, max_tokens=100),
        "length",
        "sampling_params.max_tokens is 100, but the scheduler clamped this request to "
        "req.max_new_tokens = 3 (what fits in the context): compare with req.max_new_tokens",
    )


def case_order(fn):
    _expect(
        fn,
        _req([PLAIN, PLAIN, 2], max_new=3),
        "stop",
        "the newest token is EOS and also the last one allowed: the model ended the answer itself, "
        "so 'stop' wins over 'length' (test EOS before the length)",
    )
    ids = _ids("one two three")
    _expect(
        fn,
        _req(ids, max_new=len(ids), stop=["three"]),
        "stop",
        "the stop string 'three' completes on the last allowed token: 'stop' wins over 'length'",
        hint="test the stop strings before the length too",
    )


def case_ignore_eos(fn):
    _expect(fn, _req([PLAIN, 2], ignore_eos=True), None, "ignore_eos is set: an EOS token must not stop it")
    _expect(
        fn,
        _req([PLAIN, 2], max_new=2, ignore_eos=True),
        "length",
        "ignore_eos still ends at max_new_tokens",
        hint="the length limit holds whatever ignore_eos says",
    )
    ids = _ids("one two three")
    _expect(
        fn,
        _req(ids, ignore_eos=True, stop=["two three"]),
        "stop",
        "ignore_eos turns off only the EOS test: stop strings still stop",
    )
    out = _ids("one two") + [PLAIN]
    assert _decode(out) == "one two ok", "setup: 'one two' and ' ok' should decode to 'one two ok'"
    _expect(
        fn,
        _req(out, ignore_eos=True, stop=["two ok"]),
        "stop",
        "eos_ids is {1, 10907} here (another model's end ids) and ignore_eos is set: token 10907 is ' ok', ordinary "
        "text for this tokenizer, so it stays in the output with its text, and 'one two ok' holds the stop string "
        "'two ok'",
        eos_ids={1, PLAIN},
        hint="under ignore_eos an end id stays in the output: the text is what decode gives for the output ids as "
        "they are",
    )


def case_stop_across_tokens(fn):
    text, stop = "one two three", "two three"
    assert _spans(text, stop) >= 2, "setup: the stop string must span two tokens"
    ids = _ids(text)
    _expect(
        fn,
        _req(ids, stop=[stop]),
        "stop",
        f"the output now ends with the stop string {stop!r}, which spans the last {_spans(text, stop)} tokens: "
        "decode a window of recent tokens, not only the newest one",
    )
    _expect(
        fn,
        _req(ids, stop=["xyz", stop]),
        "stop",
        "every string in sampling_params.stop counts, not only the first",
        hint="loop over every string of sampling_params.stop",
    )
    _expect(fn, _req(ids[:-1], stop=[stop]), None, "'one two' does not contain 'two three' yet")
    _expect(
        fn,
        _req(_ids(stop), stop=[stop]),
        "stop",
        f"the output is {stop!r}, the stop string itself from its first character",
        hint="a stop string at the very start of the decoded text counts too: find() gives 0 there (test `s in tail`)",
    )
    try:
        _expect(
            fn,
            _req(_ids("Four score and"), stop=["four"]),
            None,
            "the output 'Four score and' begins with 'Four', capital F, and the stop string is 'four': a stop "
            "string matches only as it is written, so this output does not hold it",
        )
    except Mistake as e:
        if folds_case(fn):
            e.hint = CASE_SENSITIVE
        raise


def case_stop_inside_token(fn):
    text, stop = "one two three", "two th"
    ids = _ids(text)
    assert not _decode(ids).endswith(stop) and stop in _decode(ids), "setup: the stop string must end inside a token"
    _expect(
        fn,
        _req(ids, stop=[stop]),
        "stop",
        f"the newest token ' three' completes the stop string {stop!r} and goes on past it: look for the "
        "stop string anywhere in the decoded tail, not only at its end",
    )


WINDOW_IN_CHARACTERS = (
    "count the stop string's bytes, len(s.encode()), not its characters, len(s): your window holds a stop "
    "string of one-byte characters (a token each), not '北京', 2 characters but 6 bytes in UTF-8, and the "
    "byte-level tokenizer can spend a token on each byte; decode len(s.encode()) tokens plus a margin"
)


def _window_fits_characters(fn) -> bool:
    """The answer finds '1+2+3+4+5+6+7' (13 characters, one token each) at the end of the output: a
    window of at least len(s) tokens there. With '北京' (2 characters, 6 bytes) missed, its window
    grows with the characters of the stop string, not its bytes."""
    ids = _ids("x 1+2+3+4+5+6+7")
    try:
        return fn(_req(ids, stop=["1+2+3+4+5+6+7"]), set(EOS), _decode) == "stop"
    except Exception:
        return False


def case_stop_multibyte(fn):
    text, stop = "我爱北京", "北京"
    ids = _ids(text)
    n = _spans(text, stop)
    assert n > len(stop), "setup: the stop string must take more tokens than it has characters"
    try:
        _expect(
            fn,
            _req(ids, stop=[stop]),
            "stop",
            f"the stop string {stop!r} has {len(stop)} characters ({len(stop.encode())} bytes in UTF-8) but takes "
            f"{n} tokens (each CJK character is two or three byte tokens): the decode window needs a margin beyond "
            "len(stop) tokens",
        )
    except Mistake as e:
        if not e.hint and _window_fits_characters(fn):  # else the case's hint: a window too short
            e.hint = WINDOW_IN_CHARACTERS
        raise


def case_stop_emoji_margin(fn):
    text, stop = "x 🦀🦀!!", "🦀🦀!"
    ids = _ids(text)
    done, need = _completes(ids, stop)
    assert need == len(stop) + 4 and not _decode(ids[:done]).endswith(stop), (
        "setup: the stop string must need a window of exactly len(stop) + 4 tokens and end inside the newest token"
    )
    _expect(
        fn,
        _req(ids[: done - 1], stop=[stop]),
        None,
        f"{_decode(ids[: done - 1])!r} does not contain {stop!r} yet (its '!' comes with the next token)",
    )
    _expect(
        fn,
        _req(ids[:done], stop=[stop]),
        "stop",
        f"the newest token '!!' completes {stop!r} ({len(stop)} characters) and carries one more '!'; the stop "
        f"string spans the last {need} tokens: an emoji is four bytes in UTF-8 and the byte-level tokenizer can "
        "spend a token on each, so count the window in bytes (len(s.encode())), not in characters",
    )
    flag = _ids("Paris 🇫🇷, France")
    _expect(
        fn,
        _req(flag[:7], stop=["🇫🇷"]),
        "stop",
        "the flag '🇫🇷' is 2 characters (two regional indicators, four bytes each) and takes the last 6 tokens: "
        "count the window in bytes, not in characters",
    )
    for text, stop in (("go 🚀🚀🚀 now", "🚀🚀🚀"), ("Paris 🇫🇷🇩🇪 Berlin", "🇫🇷🇩🇪")):
        ids = _ids(text)
        done, need = _completes(ids, stop)
        assert need > len(stop) + 4, f"setup: {stop!r} must need more than len(stop) + 4 tokens"
        _expect(
            fn,
            _req(ids[:done], stop=[stop]),
            "stop",
            f"{stop!r} is {len(stop)} characters, {len(stop.encode())} bytes in UTF-8, and spans the last {need} "
            "tokens: a window of len(stop) plus a few tokens misses it, and the request never stops. A token "
            "stands for at least one byte, so a window of len(s.encode()) tokens (plus a margin) always holds it",
            hint="count the window in bytes, len(s.encode()), not in characters: a few tokens more than len(s) is too few",
        )


IGNORED_EOS_MARGIN = (
    "an EOS that ignore_eos keeps stays in req.output_ids and decodes to no text (decode skips special "
    "tokens): it adds a token to the stop string's span but no byte, so size the window len(s.encode()) plus "
    "a margin of a few tokens (up to three ignored EOS ids may sit inside a stop string)"
)


def _widest_decode(fn, req: Req) -> int:
    """The most ids the answer passed to one call of decode on `req` (0 when it raised)."""
    calls: list[list[int]] = []
    try:
        fn(req, set(EOS), noting_decode(calls))
    except Exception:
        pass
    return max((len(ids) for ids in calls), default=0)


def case_ignored_eos_in_stop(fn):
    ids = _ids("x 北京")
    out = ids[:4] + [2] + ids[4:5] + [0] + ids[5:]  # an ignored EOS between the characters, one inside 京
    assert _decode(out) == "x 北京" and _completes(out, "北京") == (8, 7), "setup: '北京' must span 7 tokens"
    _expect(
        fn,
        _req(out[:-1], stop=["北京"], ignore_eos=True),
        None,
        f"{_decode(out[:-1])!r} does not hold '北京' yet (the last byte of 京 comes with the next token)",
    )
    req = _req(out, stop=["北京"], ignore_eos=True)
    bytes_only = _widest_decode(fn, _req(out, stop=["北京"], ignore_eos=True)) == len("北京".encode())
    _expect(
        fn,
        req,
        "stop",
        "ignore_eos is set, and two EOS ids (2 and 0) sit among the tokens of the stop string '北京' (6 bytes in "
        "UTF-8): they stay in the output and decode to '' (decode skips special tokens), so the stop string "
        "spans the last 7 tokens, more than its bytes",
        hint=IGNORED_EOS_MARGIN + (": your window of exactly len(s.encode()) tokens leaves none" if bytes_only else ""),
    )
    _three_ignored_eos_in_stop(fn)


def _three_ignored_eos_in_stop(fn):
    """Three ignored EOS ids inside '1+2', whose every byte is its own token: the stop string spans
    3 + 3 = 6 tokens, the most the contract allows for 3 bytes. A window of len(s.encode()) + 2 tokens
    misses its first byte."""
    ids = _ids("x 1+2")
    out = ids[:3] + [2, 0] + ids[3:4] + [2] + ids[4:]  # '1', EOS, EOS, '+', EOS, '2'
    assert _decode(out) == "x 1+2" and _completes(out, "1+2") == (8, 6), "setup: '1+2' must span 6 tokens"
    req = _req(out, stop=["1+2"], ignore_eos=True)
    widest = _widest_decode(fn, _req(out, stop=["1+2"], ignore_eos=True))
    short = 3 <= widest < 6
    _expect(
        fn,
        req,
        "stop",
        "ignore_eos is set, and three EOS ids (2, 0, 2) sit among the tokens of the stop string '1+2' (3 bytes, "
        "one token each): they decode to '', so the stop string spans the last 6 tokens, its 3 bytes plus 3",
        hint=IGNORED_EOS_MARGIN
        + (
            f": your window of len(s.encode()) + {widest - 3} tokens leaves a margin too small for three ignored "
            "EOS ids (it needs + 3 at least)"
            if short
            else ""
        ),
    )


def case_longest_stop_sets_window(fn):
    text, long = "one two three four five six seven", "two three four five six seven"
    ids = _ids(text)
    assert len(ids) == 7 and _spans(text, long) == 6, "setup: the long stop string must span 6 tokens"
    for stops in (["!", long], [long, "!"]):
        _expect(
            fn,
            _req(ids, stop=stops),
            "stop",
            f"stop={stops!r}: the output now ends with the second stop string, which spans {_spans(text, long)} "
            "tokens: every stop string must fit in what you decode, so size the window by the longest one",
        )
    _expect(fn, _req(ids[:-1], stop=["!", long]), None, "'seven' has not come yet")
    _window_not_whole(fn)


WHOLE_OUTPUT = (
    "decode a window of the newest tokens, sized by the longest stop string, never the whole output: the "
    "check runs after every token, and decoding all of it each time costs time that grows with the answer"
)


def _window_not_whole(fn) -> None:
    """A 120-token output and a one-character stop string: the contract's "must not decode the
    whole output each time" read plainly, the whole output in one call of `decode` fails."""
    output = _ids(" ok" * 120)
    calls: list[list[int]] = []
    fn(_req(output, max_new=500, stop=["!"]), set(EOS), noting_decode(calls))
    widest = max((len(ids) for ids in calls), default=0)
    if widest >= len(output):
        raise Mistake(
            f"after the {len(output)}th token, with stop=['!'] (one character), your check passed all "
            f"{widest} output ids to decode: the whole output, at every token",
            WHOLE_OUTPUT,
        )


def case_stop_in_prompt(fn):
    _expect(
        fn,
        _req(_ids(" Sure"), prompt="Say STOP when done.", stop=["STOP"]),
        None,
        "'STOP' is only in the prompt: a stop string ends the *generated* text, decode req.output_ids only",
    )


ENGINE_PROMPTS = [
    [{"role": "user", "content": "Answer yes or no: is the sky blue?"}],  # ends on EOS after a few tokens
    [{"role": "user", "content": "What is the capital of France?"}],  # cut by max_tokens
    [{"role": "user", "content": "What is 2+2? Reply with just the number."}],  # "2 + 2 = 4": stop string
]
ENGINE_PARAMS = [
    SamplingParams(max_tokens=10),
    SamplingParams(max_tokens=4),
    SamplingParams(max_tokens=10, stop=["2 ="]),
]


def case_real_engine(fn):
    fn(_req([PLAIN]), set(EOS), _decode)  # an unfinished stub fails here, before the engine runs
    got = run_requests(ENGINE_PARAMS, ENGINE_PROMPTS, setup=lambda s: setattr(s, "finish_fn", fn))
    ref = reference_run("finish", ENGINE_PARAMS, ENGINE_PROMPTS)
    assert [ref.reasons[u] for u in range(3)] == ["stop", "length", "stop"], "setup: unexpected reference finishes"
    for uid in range(len(ENGINE_PROMPTS)):
        assert got.reasons.get(uid) == ref.reasons[uid], (
            f"request {uid}: finish_reason {got.reasons.get(uid)!r}, expected {ref.reasons[uid]!r} "
            f"(after {len(got.tokens.get(uid, []))} tokens; the reference stopped after {len(ref.tokens[uid])})"
        )
        assert got.tokens[uid] == ref.tokens[uid], f"request {uid}: different tokens from the reference"


CASES = [
    Case("EOS ids finish with 'stop'", case_eos, "compare req.output_ids[-1] with the set eos_ids"),
    Case("eos_ids is the model's set", case_eos_argument, "the scheduler passes the served model's end ids"),
    Case("max_tokens finishes with 'length'", case_length, "len(req.output_ids) against req.max_new_tokens"),
    Case("the clamped limit", case_clamped, "req.max_new_tokens, not sampling_params.max_tokens"),
    Case("stop beats length", case_order, "EOS first, then stop strings, then the length"),
    Case("ignore_eos", case_ignore_eos, "req.sampling_params.ignore_eos turns off the EOS test only"),
    Case(
        "stop string across tokens",
        case_stop_across_tokens,
        "decode(req.output_ids[-window:]) and look for each stop string",
    ),
    Case("stop string inside a token", case_stop_inside_token, "`s in tail`, not tail.endswith(s)"),
    Case("stop string of CJK characters", case_stop_multibyte, "a window of len(stop) tokens is too short"),
    Case(
        "stop string of emoji, at the edge of the window",
        case_stop_emoji_margin,
        "a character is up to four bytes, and a byte-level token can hold a single byte",
    ),
    Case(
        "an ignored EOS inside a stop string",
        case_ignored_eos_in_stop,
        "an EOS kept by ignore_eos decodes to no text: leave a margin beyond len(s.encode()) tokens",
    ),
    Case(
        "the longest stop string sets the window",
        case_longest_stop_sets_window,
        "every stop string of the list must fit in what you decode",
    ),
    Case("stop string in the prompt only", case_stop_in_prompt, "decode the output tokens, not the prompt"),
    Case("in the real engine", case_real_engine, "the scheduler calls your function after every token", engine=True),
    finish_case(reference),
]
SYMBOL = "check_finish"
SOLUTION = reference
