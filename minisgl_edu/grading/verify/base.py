"""Exercise 8 — the verify step of speculative decoding: `verify_step(req, drafts, targets) -> VerifyResult`.

The scheduler calls it for every request that verified drafts in a batch (`Scheduler.verify_fn`),
then gives back the pages it names, sets `req.cached_len = kv_len` and appends its tokens. The
unit cases below build `VerifyRequest`s by hand (step.py) and compare every field with the
package's `verify_step`, naming the known mistake a wrong field shows; the engine cases
(engine.py) plug the function into the real scheduler with speculation on.
"""

from __future__ import annotations

from minisgl_edu.engine.verify import accept_greedy
from minisgl_edu.grading.core import Case
from minisgl_edu.grading.harness import tokenizer
from minisgl_edu.grading.verify.engine import case_engine_finish, case_engine_ngram, case_engine_seeded
from minisgl_edu.grading.verify.requests import _as_result, _decode, _id, _req, _w
from minisgl_edu.grading.verify.scenes import verify_case
from minisgl_edu.grading.verify.step import ALL_MISTAKES, _check
from minisgl_edu.grading.verify.true_division import naming_float_pages
from minisgl_edu.scheduler import verify_step as step_module
from minisgl_edu.scheduler.finish import check_finish
from minisgl_edu.scheduler.verify_step import verify_step as package_step

# --- the unit cases -------------------------------------------------------------------------------------


def case_bonus(fn):
    one, two, three, four, five = _w(" one", " two", " three", " four", " five")
    _check(fn, _req([one], 3), [two, three, four], [two, three, four, five], "every draft is accepted")
    _check(fn, _req([one], 0), [], [two], "no drafts: the model's token, as in a plain decode step")
    _check(fn, _req([one, two], 1), [three], [three, five], "the one draft is accepted")


def case_first_mismatch(fn):
    one, two, three, four, five, six, seven = _w(" one", " two", " three", " four", " five", " six", " seven")
    _check(fn, _req([one], 4), [two, three, four, five], [two, six, four, five, seven], "draft 1 is rejected")
    _check(fn, _req([one], 3), [two, three, four], [six, three, four, five], "draft 0 is rejected")
    _check(fn, _req([one], 4), [two, three, four, five], [two, three, four, six, seven], "the last draft is rejected")


def case_sampled_targets(fn):
    # With sampling, the engine's rule stops drawing at the first draft it rejects: fewer targets.
    one, two, three, four, six = _w(" one", " two", " three", " four", " six")
    _check(
        fn,
        _req([one], 3),
        [two, three, four],
        [two, six],
        "targets as the engine gives them for a sampled request (its rule stops at the first rejected draft)",
    )


def case_eos_in_run(fn):
    one, two, three, four = _w(" one", " two", " three", " four")
    _check(fn, _req([one], 3), [two, 2, three], [two, 2, three, four], "draft 1 is an EOS id (2) and is accepted")
    _check(fn, _req([one], 2), [two, three], [two, 0, four], "the model's own token is an EOS id (0)")
    _check(fn, _req([one], 3), [0, two, three], [0, two, three, four], "the first draft is an EOS id (0)")


def case_ignore_eos(fn):
    one, two, three, four = _w(" one", " two", " three", " four")
    _check(
        fn,
        _req([one], 3, ignore_eos=True),
        [two, 2, three],
        [two, 2, three, four],
        "ignore_eos is set: the accepted EOS does not stop it",
    )
    _check(
        fn,
        _req([one, two], 2, max_new=4, ignore_eos=True),
        [2, 0],
        [2, 0, three],
        "ignore_eos is set, and max_new_tokens allows two more tokens",
    )


def case_max_new_tokens(fn):
    a, b, c, d = _w(" red", " green", " blue", " ok")
    seven = [_id(" one")] * 7
    _check(
        fn,
        _req(seven, 2, max_new=10),
        [a, b],
        [a, b, c],
        "3 tokens are left and the scheduler drafted 2: the model's token is the last one allowed",
    )
    _check(
        fn,
        _req(seven + [d], 3, max_new=10),
        [a, b, c],
        [a, b, c, d],
        "2 tokens are left but 3 drafts came (the scheduler caps them; the step must not rely on it)",
    )
    _check(fn, _req(seven + [d, d], 0, max_new=10), [], [a], "one token is left and no drafts")
    _check(
        fn,
        _req(seven + [d, d], 2, max_new=10, stop=(" blue",)),
        [a, c],
        [a, c, b],
        "one token is left, and the stop string ' blue' completes only on the token after it",
    )


def case_stop_within_run(fn):
    one, two, three, four, five, nl = _w(" one", " two", " three", " four", " five", "\n")
    _check(
        fn,
        _req([one], 3, stop=("two three",)),
        [two, three, four],
        [two, three, four, five],
        "the stop string 'two three' spans accepted drafts 0 and 1",
    )
    _check(
        fn,
        _req([one], 3, stop=("xyz", "three four")),
        [two, three, four],
        [two, three, four, five],
        "the second stop string spans accepted drafts 1 and 2",
    )
    _check(
        fn,
        _req([one], 3, stop=("one two",)),
        [nl, two, three],
        [nl, two, three, four],
        "' one', a newline and ' two' read like the stop string 'one two', but a newline is not its space: "
        "no stop string shows",
    )
    _check(
        fn,
        _req([one], 3, stop=("\n",)),
        [two, nl, three],
        [two, nl, three, four],
        "the stop string '\\n' (a newline, a common stop string) is completed by accepted draft 1, the last "
        "character of the decoded text",
    )
    x, space, digit, plus, two_digit = tokenizer().encode("x 1+2")  # one token a byte
    _check(
        fn,
        _req([x, space], 4, stop=("1+2",)),
        [digit, plus, two_digit, one],
        [digit, plus, two_digit, one, two],
        "the stop string '1+2' (plain text that holds a '+') spans accepted drafts 0 to 2",
    )
    # the stop string ends with the leading space of a long token: it is in the text of the last tokens,
    # but not in the last characters of the text (a tail cut in characters, char_tail.py, misses it)
    wide = _id(" international")
    _check(
        fn,
        _req([one, one], 4, stop=("two three ",)),
        [two, three, wide, four],
        [two, three, wide, four, five],
        "the stop string 'two three ' ends with the leading space of accepted draft 2, ' international', whose "
        "text runs on 13 characters past it",
    )
    # a stop string is matched as the client wrote it: ' end' in the text is not 'END' (letter_case.py)
    the, end, of, it = _w(" the", " end", " of", " it")
    _check(
        fn,
        _req([the], 3, stop=("END",)),
        [end, of, it],
        [end, of, it, two],
        "the text ' the end of it' holds 'end' but not the stop string 'END' (letter case counts): no stop "
        "string shows",
    )


def case_stop_from_output(fn):
    one, two, three, four, five = _w(" one", " two", " three", " four", " five")
    _check(
        fn,
        _req([one, two], 2, stop=("two three",)),
        [three, four],
        [three, four, five],
        "the stop string 'two three' begins in the output before this step and ends in its first token",
    )
    go, now = tokenizer().encode("go now")
    _check(
        fn,
        _req([go], 2, stop=("go now",)),
        [now, three],
        [now, three, four],
        "the stop string 'go now' begins with the output's only token, at the very start of the decoded text, "
        "and ends in draft 0",
    )


def _likeliest_first(mistake: str, leave_out: tuple[str, ...] = ()) -> list[str]:
    """The mistakes a case's diagnosis tries, in order: the one this case is built to show first,
    then every other one but `leave_out` (mistakes an earlier scene of the case has already ruled out)."""
    return [mistake] + [m for m in ALL_MISTAKES if m != mistake and m not in leave_out]


def case_stop_multibyte(fn):
    ids = tokenizer().encode("go 🚀🚀🚀 now")  # 'go', 9 byte tokens for the three rockets, ' now'
    assert len(ids) == 11 and "🚀🚀🚀" in _decode(ids[1:10]) and "🚀🚀🚀" not in _decode(ids[2:10]), (
        "setup: the three rockets should span 9 tokens"
    )
    _check(
        fn,
        _req(ids[:4], 7, stop=("🚀🚀🚀",)),
        ids[4:],
        ids[4:] + [_id(" one")],
        "the stop string '🚀🚀🚀' (3 characters, 12 bytes) begins in the output and ends in draft 5: it spans 9 tokens",
        _likeliest_first("stop_window_chars"),
    )
    _longest_in_bytes(fn, ids)


def _longest_in_bytes(fn, ids: list[int]) -> None:
    """The same step beside a stop string of fewer bytes: '!' (1 byte), then ' END', more characters
    than '🚀🚀🚀' (4 to 3) but fewer bytes (4 to 12). The tail of the stop string with the most bytes
    holds the rockets' 9 tokens; one of '!' or ' END', plus 4, does not."""
    for stop in (("!", "🚀🚀🚀"), ("🚀🚀🚀", "!")):
        _check(
            fn,
            _req(ids[:4], 7, stop=stop),
            ids[4:],
            ids[4:] + [_id(" one")],
            f"stop {list(stop)}: '🚀🚀🚀' (12 bytes) ends in draft 5 and spans 9 tokens: the tail must hold the "
            "stop string with the most bytes, whichever comes first in the list",
            _likeliest_first("stop_window_shorter", leave_out=("stop_window_chars",)),
        )
    for stop in ((" END", "🚀🚀🚀"), ("🚀🚀🚀", " END")):
        _check(
            fn,
            _req(ids[:4], 7, stop=stop),
            ids[4:],
            ids[4:] + [_id(" one")],
            f"stop {list(stop)}: '🚀🚀🚀' ends in draft 5 and spans 9 tokens; ' END' has more characters (4 to 3) "
            "but fewer bytes (4 to 12): the tail must hold the stop string with the most bytes",
            _likeliest_first("stop_window_most_chars", leave_out=("stop_window_chars", "stop_window_shorter")),
        )


def case_ignored_eos_in_stop(fn):
    one, two, three, four = _w(" one", " two", " three", " four")
    _check(
        fn,
        _req([one, two], 3, ignore_eos=True, stop=("two three",)),
        [2, three, four],
        [2, three, four, one],
        "ignore_eos is set, and the stop string 'two three' begins in the output and ends in draft 1, with the "
        "accepted end id 2 between its words (it decodes to no text)",
        _likeliest_first("ignore_eos_stops_off"),
    )
    ids = tokenizer().encode("go 🚀 now")  # 'go', three byte tokens for the rocket, ' now'
    out, drafts = ids[:2] + [2], [ids[2], 0, ids[3], ids[4]]  # an ignored end id on each side of a byte
    assert len(ids) == 5 and _decode(out + drafts) == "go 🚀 now" and "🚀" not in _decode(out + drafts[:2]), (
        "setup: the rocket should be three byte tokens"
    )
    _check(
        fn,
        _req(out, 4, ignore_eos=True, stop=("🚀",)),
        drafts,
        drafts + [one],
        "ignore_eos is set, and the stop string '🚀' (4 bytes) begins in the output and ends in draft 2 with two "
        "end ids among its tokens: they stay in the output and decode to no text, so it spans 5 tokens",
        _likeliest_first("stop_window_bytes"),
    )
    ids = tokenizer().encode("x 1+2")  # one token a byte: 'x', ' ', '1', '+', '2'
    out, drafts = ids[:3], [2, 0, ids[3], 2, ids[4], one]  # three ignored end ids inside '1+2'
    assert len(ids) == 5 and _decode(out + drafts[:5]) == "x 1+2" and "1+2" not in _decode(out + drafts[:4]), (
        "setup: '1+2' should be one token a byte"
    )
    _check(
        fn,
        _req(out, len(drafts), ignore_eos=True, stop=("1+2",)),
        drafts,
        drafts + [two],
        "ignore_eos is set, and the stop string '1+2' (3 bytes, one token each) begins in the output and ends in "
        "draft 4 with three end ids among its tokens (the most exercise 1 allows): it spans 6 tokens, its 3 bytes "
        "plus 3",
        # an answer with no margin at all failed on the rocket above, and would look the same here
        _likeliest_first("stop_window_margin", leave_out=("stop_window_bytes",)),
    )


def case_stop_beats_length(fn):
    one, two, three, four = _w(" one", " two", " three", " four")
    _check(
        fn,
        _req([one] * 3, 1, max_new=5, stop=("two three",)),
        [two],
        [two, three],
        "the last allowed token also completes a stop string",
    )
    _check(fn, _req([one] * 3, 1, max_new=5), [four], [four, 2], "the last allowed token is also an EOS id")


def case_kv_len(fn):
    one, two, three, four, five, six = _w(" one", " two", " three", " four", " five", " six")
    out = [one, two, three]
    _check(fn, _req(out, 4), [four, five, six, one], [four, two, six, one, two], "1 of 4 drafts accepted")
    _check(fn, _req(out, 4), [four, five, six, one], [four, five, six, one, two], "all 4 drafts accepted")
    _check(fn, _req(out, 3, prompt_len=21), [four, five, six], [one, five, six, two], "no draft accepted")


def case_rejected_pages(fn):
    one, two, three, four, five, six, seven = _w(" one", " two", " three", " four", " five", " six", " seven")
    # Prompt 10 + output 3: drafts at 13..15, and the row ends at position 15. The last draft is
    # rejected, and the request's 16 tokens fill the row: nothing goes back.
    _check(fn, _req([one, two, three], 3), [four, five, six], [four, five, seven, one], "2 of 3 drafts accepted")
    # Prompt 10 + output 1: the newest token sits at position 10, the 6 drafts at 11..16, on pages
    # 2, 3 and 4 of the row (pages for positions 0..19 are reserved).
    drafts = [three, four, five, six, seven, one]
    for n in (0, 1, 2, 4, 5, 6):
        # drafts 0..n-1 agree, draft n does not (the targets after it happen to equal the drafts)
        targets = drafts[:n] + [two] + drafts[n + 1 :] + [two] if n < 6 else drafts + [two]
        _check(fn, _req([one], 6), drafts, targets, f"{n} of 6 drafts accepted")


def case_newest_tokens_page(fn):
    one, two, three, four, five = _w(" one", " two", " three", " four", " five")
    # prompt 11 + output 3 (positions 0..13); 3 drafts at 14..16. With 2 accepted the request has
    # 17 tokens: its newest is at position 16, the first of page 4, where its K/V goes next step.
    _check(
        fn,
        _req([one, two, three], 3, prompt_len=11),
        [four, five, one],
        [four, five, two, three],
        "the newest token's position is the first of a page",
    )
    _check(
        fn,
        _req([one, two, three], 3, prompt_len=11),
        [four, one, one],
        [four, five, two, three],
        "the newest token's position is the last of a page",
    )
    # The same first step with pages of 8 (the engine's page size may be any): a page count right only
    # for pages of 4 shows here. The newest token, at position 16, is the first of page 2.
    _check(
        fn,
        _req([one, two, three], 3, prompt_len=11, page_size=8),
        [four, five, one],
        [four, five, two, three],
        "pages of 8 positions: the newest token's position, 16, is the first of a page",
    )


def case_prefix_pages(fn):
    one, two, three, four, five = _w(" one", " two", " three", " four", " five")
    # A prompt of 24 tokens whose first 16 (4 pages) came from the prefix cache, and one output token.
    _check(
        fn,
        _req([one], 4, prompt_len=24, prefix_len=16),
        [two, three, four, five],
        [one, three, four, five, two],
        "the request's first 4 pages belong to the prefix cache",
    )


def case_finish_pages(fn):
    one, two, three, four, five, six = _w(" one", " two", " three", " four", " five", " six")
    # prompt 13 + output 2; 6 drafts at 15..20. EOS at draft 0: the request has 16 tokens.
    _check(
        fn,
        _req([one, two], 6, prompt_len=13),
        [2, three, four, five, six, one],
        [2, three, four, five, six, one, two],
        "an accepted EOS ends the request at draft 0: kv_len and pages of the cut run",
    )


def case_inputs_unchanged(fn):
    one, two, three, four, five = _w(" one", " two", " three", " four", " five")
    req = _req([one, two], 3)
    drafts, targets = [three, four, five], [three, four, one, two]
    before = (list(req.output_ids), list(req.pages), list(drafts), list(targets))
    with naming_float_pages(fn, req, drafts, targets):  # a float page count crashes here too: its hint
        _as_result(fn(req, drafts, targets))
    after = (req.output_ids, req.pages, drafts, targets)
    for name, b, a in zip(("req.output_ids", "req.pages", "drafts", "targets"), before, after):
        assert a == b, (
            f"your verify_step changed {name} (from {b} to {a}). Return the new tokens and the pages to give "
            "back: the scheduler appends the tokens and frees the pages itself, so leave what you were given "
            "as it was"
        )


CASES = [
    Case(
        "every draft accepted: the model's token comes too",
        case_bonus,
        "accept draft j while drafts[j] == targets[j]; then append targets[n]: the model's own token, also when n == k",
    ),
    Case(
        "the first mismatch ends the run",
        case_first_mismatch,
        "stop comparing at the first draft that differs: targets[n] replaces it",
    ),
    Case(
        "targets of a sampled request",
        case_sampled_targets,
        "never read targets past the first mismatch: with sampling there may be none",
    ),
    Case("an EOS inside the run cuts it", case_eos_in_run, "check each new token as if it came alone"),
    Case("ignore_eos", case_ignore_eos, "with ignore_eos only stop strings and max_new_tokens end the request"),
    Case(
        "max_new_tokens counts every new token",
        case_max_new_tokens,
        "len(output_ids) + new tokens reaches max_new_tokens: 'length', and nothing after it",
    ),
    Case(
        "a stop string across accepted tokens",
        case_stop_within_run,
        "decode a tail of output_ids + the new tokens so far, not each token alone",
    ),
    Case(
        "a stop string that begins before this step",
        case_stop_from_output,
        "decode a tail of output_ids + the new tokens so far, not this step's tokens alone: a stop string can "
        "begin in the output before this step",
    ),
    Case(
        "a stop string of multi-byte characters",
        case_stop_multibyte,
        "the decoded tail must be long enough for the longest stop string, whatever its characters",
    ),
    Case(
        "an ignored EOS inside a stop string",
        case_ignored_eos_in_stop,
        "an ignored end id adds a token but no text: decode len(s.encode()) tokens plus a margin",
    ),
    Case("'stop' beats 'length'", case_stop_beats_length, "EOS and stop strings first, then the length"),
    Case(
        "kv_len: the valid K/V positions",
        case_kv_len,
        "prompt_len + len(output_ids) + len(tokens) - 1: every token but the newest",
    ),
    Case(
        "pages holding only rejected drafts go back",
        case_rejected_pages,
        "keep pages_for(total, page_size) pages, where total = prompt_len + len(output_ids) + len(tokens)",
    ),
    Case(
        "the newest token's page stays",
        case_newest_tokens_page,
        "the newest token's K/V is written next step at position total - 1: keep its page",
    ),
    Case(
        "never a page of the prefix cache",
        case_prefix_pages,
        "positions count from the prompt's first token; the first prefix_len // page_size pages are the cache's",
    ),
    Case(
        "a finish: kv_len and pages of the cut run",
        case_finish_pages,
        "total counts only the tokens the request keeps",
    ),
    Case(
        "the inputs are left as they were",
        case_inputs_unchanged,
        "build new lists; the scheduler appends the tokens and frees the pages itself",
    ),
    Case(
        "in the real engine, with n-gram drafts",
        case_engine_ngram,
        "the scheduler applies your result: pages back, cached_len = kv_len, tokens appended",
        engine=True,
    ),
    Case(
        "in the real engine, drafts rejected at every place",
        case_engine_seeded,
        "0 to 8 drafts accepted, rejected ones on one or two pages, then the prompts again on the prefix cache",
        engine=True,
    ),
    Case(
        "in the real engine, EOS, stop strings and max_tokens inside a run",
        case_engine_finish,
        "the request ends on the token that finishes it, as without drafts",
        engine=True,
    ),
    verify_case(package_step),
]
SYMBOL = "verify_step"
SOLUTION = package_step
# The package's pieces the step is made of: the greedy acceptance rule and the finish check (the
# verify step's module is the SOLUTION's; its dataclasses are the exercise's types, fine to use).
REFERENCES = [accept_greedy, check_finish, step_module._finish_reason]
