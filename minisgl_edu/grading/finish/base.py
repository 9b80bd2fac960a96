"""Exercise 1 — finishing: `check_finish(req, eos_ids, decode) -> "stop" | "length" | None`.

The scheduler calls it after appending each new token (`Scheduler.finish_fn`), with `decode` the
real tokenizer's decode (`Scheduler._decode_tail`). The unit cases build requests by hand and use
that same tokenizer, because the stop-string mistakes only show on real tokens: a stop string
spans several tokens, a token can hold more than the stop string, and a CJK character takes two
or three tokens. The last case plugs the function into the real engine and compares.
"""

from __future__ import annotations

from minisgl_edu.core import SamplingParams
from minisgl_edu.grading.core import Case, Mistake
from minisgl_edu.grading.finish.diagnoses import (
    CASE_SENSITIVE,
    EOS_WITH_STOPS,
    FIRST_STOPS_ONLY,
    IGNORED_EOS_TIE,
    LENGTH_WITH_STOPS,
    NORMALIZED,
    PLACES,
    folds_case,
    ignored_eos_ties,
    length_skipped_with_stops,
    normalizes_unicode,
    stops_read,
)
from minisgl_edu.grading.finish.eos_stop_search import EOS_SKIPS_STOP_SEARCH, eos_skips_stop_search
from minisgl_edu.grading.finish.expect import _expect, _spans
from minisgl_edu.grading.finish.first_token import case_first_token
from minisgl_edu.grading.finish.scenes import finish_case
from minisgl_edu.grading.finish.tokens import EOS, PLAIN, _decode, _ids, _req
from minisgl_edu.grading.finish.window_text import WINDOW_OF_DECODED_TEXT, window_of_decoded_text
from minisgl_edu.grading.finish.windows import (
    case_ignored_eos_in_stop,
    case_longest_stop_sets_window,
    case_stop_emoji_margin,
    case_stop_multibyte,
)
from minisgl_edu.grading.harness import reference_run, run_requests
from minisgl_edu.scheduler.finish import check_finish as reference


def case_eos(fn):
    assert _decode([PLAIN]) == " ok", "setup: token 10907 should be ' ok'"
    _expect(fn, _req([PLAIN, PLAIN, 2]), "stop", "the newest token 2 is in eos_ids {0, 2} (a set: every id counts)")
    _expect(fn, _req([PLAIN, PLAIN, 0]), "stop", "the newest token 0 is in eos_ids {0, 2} (a set: every id counts)")
    _expect(
        fn,
        _req([PLAIN, PLAIN, 2], stop=["xyz"]),
        "stop",
        "the newest token 2 is in eos_ids {0, 2}, and the request has the stop string 'xyz', which the text does "
        "not hold: without stop strings your check returned 'stop' for this same output",
        hint=EOS_WITH_STOPS,
    )
    _expect(
        fn,
        _req([2, PLAIN, PLAIN]),
        None,
        "only the newest token counts (an old EOS would have stopped it then)",
        hint="test req.output_ids[-1] only, not every output token",
    )
    _expect(fn, _req([PLAIN, PLAIN, PLAIN]), None, "no EOS, no stop string, room left")
    assert _decode([1]) == "" and 1 not in EOS, "setup: token 1 should be <|im_start|>, a special token, not EOS"
    _expect(
        fn,
        _req([PLAIN, PLAIN, 1]),
        None,
        "the newest token 1 is <|im_start|>, a special token: decode gives '' for it, yet it is not in eos_ids "
        "{0, 2}, so the request goes on",
        hint="only the ids of eos_ids end the request, whatever text a token decodes to",
    )


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
    if length_skipped_with_stops(fn):  # the same output, with a stop string the text does not hold
        raise Mistake(
            "3 of max 3 tokens, with the stop string 'xyz', which the text ' ok ok ok' does not hold: your "
            "check_finish returned None, expected 'length'; without stop strings it returned 'length'. A request "
            "with stop strings never reaches your length test",
            LENGTH_WITH_STOPS,
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
    try:
        _expect(
            fn,
            _req([PLAIN, 2], max_new=2, ignore_eos=True),
            "length",
            "ignore_eos still ends at max_new_tokens",
            hint="the length limit holds whatever ignore_eos says",
        )
    except Mistake as e:
        if ignored_eos_ties(fn):  # 'stop' only where the ignored EOS is the last allowed token
            e.args = (
                f"{e}; with ignore_eos your check goes on at an EOS before the limit, yet answers 'stop' when the "
                "last allowed token is an EOS: its 'stop wins the tie' test forgets ignore_eos",
            )
            e.hint = IGNORED_EOS_TIE
        raise
    ids = _ids("one two three")
    # Blame ignore_eos only when the answer finds this stop string without it: one that misses it
    # either way searches the wrong text, which the stop-string cases name.
    if _safe_call(fn, _req(ids, stop=["two three"])) != "stop":
        return
    _expect(
        fn,
        _req(ids, ignore_eos=True, stop=["two three"]),
        "stop",
        "ignore_eos turns off only the EOS test: stop strings still stop",
    )
    out = _ids("one two") + [PLAIN]
    assert _decode(out) == "one two ok", "setup: 'one two' and ' ok' should decode to 'one two ok'"
    try:
        _expect(
            fn,
            _req(out, ignore_eos=True, stop=["two ok"]),
            "stop",
            "eos_ids is {1, 10907} here (another model's end ids) and ignore_eos is set: token 10907 is ' ok', "
            "ordinary text for this tokenizer, so it stays in the output with its text, and 'one two ok' holds the "
            "stop string 'two ok'",
            eos_ids={1, PLAIN},
            hint="under ignore_eos an end id stays in the output: the text is what decode gives for the output ids "
            "as they are",
        )
    except Mistake as e:
        if eos_skips_stop_search(fn):  # asked first: an answer that drops end ids from the text fails it
            e.args = (f"{e}; your check finds 'two ok' there when ' ok' is no end id (eos_ids {{1}})",)
            e.hint = EOS_SKIPS_STOP_SEARCH
        raise


def _safe_call(fn, req):
    """What the answer returns for `req`, or None when it raises there (a probe, not a case)."""
    try:
        return fn(req, set(EOS), _decode)
    except Exception:
        return None


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
    try:
        _expect(
            fn,
            _req(ids, stop=["xyz", "abc", "uvw", "qrs", stop]),
            "stop",
            f"the output holds the 5th stop string of the list, {stop!r}: every string in sampling_params.stop "
            "counts, however many there are",
            hint="loop over every string of sampling_params.stop",
        )
    except Mistake as e:
        read = stops_read(fn, _req(ids, stop=[stop]), EOS)
        if read:  # found at each of the first `read` places of a longer list, and never after them
            e.args = (
                f"{e}; your check finds {stop!r} at each of the first {read} places of a list of {PLACES} stop "
                f"strings, never after them: it reads only the first {read}",
            )
            e.hint = FIRST_STOPS_ONLY
        raise
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
    # the same characters in another Unicode form are other text: 'e' + U+0301 is not the code point 'é'
    try:
        _expect(
            fn,
            _req(_ids(" cafe\u0301 ok"), stop=["caf\u00e9"]),
            None,
            "the output ' cafe\\u0301 ok' writes é as 'e' + U+0301 (a combining accent), the stop string 'café' as "
            "one code point, U+00E9: they print alike but are other text, so this output does not hold the stop string",
        )
    except Mistake as e:
        if normalizes_unicode(fn):
            e.args = (f"{e}; for the output ' cafe ok', with no accent, your check goes on: it normalizes the text",)
            e.hint = NORMALIZED
        raise


def case_stop_inside_token(fn):
    text, stop = "one two three", "two th"
    ids = _ids(text)
    assert not _decode(ids).endswith(stop) and stop in _decode(ids), "setup: the stop string must end inside a token"
    try:
        _expect(
            fn,
            _req(ids, stop=[stop]),
            "stop",
            f"the newest token ' three' completes the stop string {stop!r} and goes on past it: look for the "
            "stop string anywhere in the decoded tail, not only at its end",
        )
    except Mistake as e:
        if not e.hint and window_of_decoded_text(fn):  # ' three' alone has the 6 characters of 'two th'
            e.hint = WINDOW_OF_DECODED_TEXT
        raise
    # stop strings with whitespace match only as given: '\n\n' is two newlines, ' four' needs its space
    _expect(fn, _req(_ids("one two"), stop=["\n\n"]), None, "the output 'one two' holds no '\\n\\n' (two newlines)")
    _expect(
        fn,
        _req(_ids("fourteen two"), stop=[" four"]),
        None,
        "the output 'fourteen two' holds 'four' but not the stop string ' four', whose space is part of it",
    )
    _expect(fn, _req(_ids("one\n\ntwo"), stop=["\n\n"]), "stop", "the output 'one\\n\\ntwo' holds '\\n\\n'")


def case_stop_in_prompt(fn):
    _expect(
        fn,
        _req(_ids(" Sure"), prompt="Say STOP when done.", stop=["STOP"]),
        None,
        "'STOP' is only in the prompt: a stop string ends the *generated* text, decode req.output_ids only",
    )
    _expect(
        fn,
        _req(_ids(" Sure. STOP"), prompt="Say STOP when done.", stop=["STOP"]),
        "stop",
        "'STOP' is in the prompt, and the output ' Sure. STOP' produces it too: a stop string the output produces "
        "ends the request, whatever the prompt holds",
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
    Case("the first output token", case_first_token, "the scheduler checks every new token, the first one too"),
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
