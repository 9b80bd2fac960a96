"""Generated scenes for exercise 8: one request's verify step, as `Speculator.verified` hands it to
`verify_step` after a verify forward pass.

Where this sits in the course: the generated phase (grading/explore.py) of `verify`, run after the
hand-made steps of base.py. A scene is a request in the middle of its answer: text cut into the
default model's real tokens (CJK characters and emoji of several tokens each, EOS ids placed
anywhere), its output so far, 1 to 8 drafts that follow the model's answer until a seeded place
where one is wrong (or none is), and the targets the engine gives back (after a wrong draft they
may equal the drafts, or stop there as a sampled request's do). Around it: `max_new_tokens` before,
inside or after the run (the scheduler caps the drafts, the step must not rely on it), EOS ids
and `ignore_eos`, stop strings cut from the answer's own text (ending in this step's tokens) or
not in it at all, several of different lengths, page sizes of 1 to 16 positions, a prompt whose
first pages may belong to the prefix cache. Every scene is one the engine can produce: the request
had drafts, and its output so far has not finished it (no end id in it unless `ignore_eos`, no
stop string in its text: either would have ended it on an earlier token).

What is compared, in this order: each field of the VerifyResult; then that the request, the
drafts and the targets were left as they were (the scheduler reads them after the call).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Any, Optional

from hypothesis import assume
from hypothesis import strategies as st

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.explore import Difference, generated, unchanged
from minisgl_edu.grading.harness import tokenizer
from minisgl_edu.grading.verify.after_finish import AFTER_FINISH, model_token_after_the_finish
from minisgl_edu.grading.verify.char_tail import char_tail_hint
from minisgl_edu.grading.verify.every_stop import makes_every_stop
from minisgl_edu.grading.verify.ignored_eos import DROPPED, drops_it_here
from minisgl_edu.grading.verify.late_checks import late_hint
from minisgl_edu.grading.verify.mistakes import ACCEPT_MISTAKES, ALL_MISTAKES, HINTS, MISTAKES
from minisgl_edu.grading.verify.no_break import goes_on_after_the_finish
from minisgl_edu.grading.verify.pages import _pages_on_a_longer_row, confirmed, page_class, page_mistake, pages_story
from minisgl_edu.grading.verify.plain import _step, answers_with
from minisgl_edu.grading.verify.prompt_length import prompt_length_hint
from minisgl_edu.grading.verify.repeated import PLACE_BY_VALUE_HINT, finds_places_by_value, run_repeats
from minisgl_edu.grading.verify.requests import FIELDS, _as_result, _call, _decode, _id, _req
from minisgl_edu.grading.verify.skipped import skipped_check
from minisgl_edu.grading.verify.step import (
    CAPPED,
    LENGTH_NOT_FIRST,
    caps_the_drafts,
    decodes_in_pieces,
    first_field,
    kv_story,
    length_one_early,
    length_one_past,
    model_token_unchecked,
    whole_run_probed,
)
from minisgl_edu.grading.verify.stop_match import match_hint
from minisgl_edu.grading.verify.stripped import stripped_hint
from minisgl_edu.grading.verify.true_division import float_pages_hint
from minisgl_edu.grading.verify.window import window_class
from minisgl_edu.kvcache.manager import pages_for
from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

# Pieces of an answer whose tokens make stop strings hard: several tokens per character, a
# character split across tokens, words of one token each.
PIECES = [
    " one two three",
    " four five",
    " 我爱北京",
    "天安门",
    " 🦀🦀!!",
    " 🚀🚀🚀 now",
    " naïve café",
    " ok",
    " END",
    "\n\n",
]
ELSEWHERE = ["!", "zz", " END", "🚀🚀🚀", "xyz", " four five six seven"]  # stop strings perhaps not in the text
MORE = " six seven eight nine ten eleven twelve thirteen fourteen fifteen"  # k + 1 tokens after any output


@dataclass
class VerifyScene:
    prompt_len: int
    output: list[int]
    drafts: list[int]
    targets: list[int]
    max_new_tokens: int
    eos_ids: list[int]
    ignore_eos: bool
    stop: list[str]
    page_size: int
    pages: list[int]
    prefix_len: int


@functools.lru_cache(maxsize=None)
def _ids(text: str) -> tuple[int, ...]:
    return tuple(tokenizer().encode(text))


def _cut(text: str, new_from: int, a: int, b: int) -> str:
    """A stretch of `text` that ends past `new_from` (in the text of this step's tokens): one that
    ended before would already be in the output's text, and the request would have finished."""
    hi = new_from + 1 + b % max(len(text) - new_from, 1)
    return text[a % hi : hi]


# Strategies built once: a strategy made inside each draw is validated again every time.
_PIECES = st.lists(st.sampled_from(PIECES), min_size=1, max_size=4)
_EOS_TOKEN = st.sampled_from([0, 2])
_WRONG = st.sampled_from([582, 827, 10907, 2])  # ' one', ' two', ' ok', an EOS id
_AFTER = st.sampled_from(["drafts", "other", "sampled"])
_ELSEWHERE = st.sampled_from(ELSEWHERE)
_POSITION = st.integers(0, 80)
_MAX_NEW = st.sampled_from([50, 1, 2, 3, 5, 8, 10])
_EOS_IDS = st.sampled_from(["model", "one", "none", "answer"])
_PAGE_SIZE = st.sampled_from([4, 1, 2, 8, 16])
_PREFIX = st.sampled_from(["none", "pages", "prompt"])


@st.composite
def verify_scenes(draw: Any) -> VerifyScene:
    answer = list(_ids("".join(draw(_PIECES))))
    for _ in range(draw(st.integers(0, 2))):  # an end token somewhere in the answer
        answer.insert(draw(st.integers(0, len(answer))), draw(_EOS_TOKEN))
    answer += _ids(MORE)
    have = draw(st.integers(1, len(answer) - 9))  # tokens of output so far; the newest is the last
    k = draw(st.integers(1, 8))  # the speculator hands over only the requests that had drafts
    follows = answer[have : have + k + 1]  # what the model says after the newest token
    wrong = draw(st.integers(0, k))  # the first wrong draft; k: every draft is right
    drafts = list(follows[:k])
    if wrong < k:
        other = draw(_WRONG)
        drafts[wrong] = other if other != follows[wrong] else follows[wrong] + 1
    after = draw(_AFTER)  # the targets after a wrong draft: the drafts again, others, or none (sampled)
    targets = follows[: wrong + 1]
    if wrong < k and after != "sampled":
        targets += drafts[wrong + 1 :] + [follows[k]] if after == "drafts" else [10907] * (k - wrong)
    text, before = _decode(answer[: have + k + 1]), _decode(answer[:have])
    stop = []
    for _ in range(draw(st.integers(0, 3))):  # cut from the answer's text, or perhaps not in it
        cut = _cut(text, len(before), draw(_POSITION), draw(_POSITION))
        stop.append(cut if draw(st.booleans()) else draw(_ELSEWHERE))
    page_size = draw(_PAGE_SIZE)
    prompt_len = draw(st.integers(1, 40))
    held = pages_for(prompt_len + have + k, page_size)  # the scheduler reserved the newest's and the drafts' pages
    eos_ids = {"model": [0, 2], "one": [2], "none": [], "answer": [answer[have]]}[draw(_EOS_IDS)]
    prefix = {"none": 0, "pages": prompt_len // page_size * page_size, "prompt": prompt_len}[draw(_PREFIX)]
    ignore_eos = draw(st.booleans())
    # Only a request that has not finished reaches a verify step: no end id in its output unless
    # ignore_eos, and no stop string in its text (those would have ended it on an earlier token).
    assume(ignore_eos or not set(eos_ids) & set(answer[:have]))
    return VerifyScene(
        prompt_len=prompt_len,
        output=answer[:have],
        drafts=drafts,
        targets=targets,
        max_new_tokens=have + draw(_MAX_NEW),
        eos_ids=eos_ids,
        ignore_eos=ignore_eos,
        stop=[s for s in stop if s and s not in before],
        page_size=page_size,
        pages=[(37 * i + 11) % 101 for i in range(held)],
        prefix_len=prefix,
    )


def _request(scene: VerifyScene) -> VerifyRequest:
    return VerifyRequest(
        prompt_len=scene.prompt_len,
        output_ids=list(scene.output),
        max_new_tokens=scene.max_new_tokens,
        eos_ids=set(scene.eos_ids),
        ignore_eos=scene.ignore_eos,
        stop=list(scene.stop),
        decode=_decode,
        pages=list(scene.pages),
        page_size=scene.page_size,
        prefix_len=scene.prefix_len,
    )


def play(fn: Any, scene: VerifyScene) -> dict:
    req, drafts, targets = _request(scene), list(scene.drafts), list(scene.targets)
    try:
        out = fn(req, drafts, targets)
    except TypeError as e:  # a float page count is named (true_division.py); any other crash as it is
        if hint := float_pages_hint(e, fn, _request(scene), list(scene.drafts), list(scene.targets)):
            raise Mistake(f"your code raised TypeError: {e}", hint) from e
        raise
    try:
        result = _as_result(out, list(scene.drafts), list(scene.targets))
    except Mistake:  # a wrong type that names its mistake (accepted given as the drafts' list)
        raise
    except AssertionError as e:
        raise Mistake(str(e), "return VerifyResult(accepted, tokens, finish_reason, kv_len, free_pages)") from None
    seen = {f: getattr(result, f) for f in FIELDS}
    return seen | {
        "req.output_ids": unchanged(scene.output, req.output_ids),
        "req.stop": unchanged(scene.stop, req.stop),
        "req.eos_ids": unchanged(set(scene.eos_ids), req.eos_ids),
        "req.pages": unchanged(scene.pages, req.pages),
        "drafts": unchanged(scene.drafts, drafts),
        "targets": unchanged(scene.targets, targets),
    }


def _words(ids: list[int]) -> str:
    return "[" + ", ".join(f"{t} {_decode([t])!r}" for t in ids) + "]"


def show(scene: VerifyScene) -> str:
    out = scene.output
    lines = [
        f"  output so far ({len(out)} tokens{', its last 12' if len(out) > 12 else ''}): {_words(out[-12:])}",
        f"  drafts {_words(scene.drafts)}",
        f"  targets {_words(scene.targets)}",
        f"  max_new_tokens {scene.max_new_tokens}, eos_ids {scene.eos_ids}, ignore_eos {scene.ignore_eos}, "
        f"stop {scene.stop!r}",
        f"  prompt_len {scene.prompt_len}, prefix_len {scene.prefix_len}, page_size {scene.page_size}, "
        f"pages {scene.pages}",
    ]
    return "\n".join(lines)


# --- hints that read the difference ---------------------------------------------------------------------


def named_mistake(scene: VerifyScene, diff: Difference, mistakes: list[str] = ALL_MISTAKES) -> Optional[str]:
    """The first known mistake (step.py) whose result differs from the package's first in this
    field, with the value the answer gave; None when none does."""
    req, want = _request(scene), _step(_request(scene), scene.drafts, scene.targets)
    for m in mistakes:
        r = _step(req, list(scene.drafts), list(scene.targets), m)
        if first_field(r, want) == diff.field and getattr(r, diff.field) == diff.got:
            return m
    return None


def finish_story(scene: VerifyScene, want: VerifyResult) -> str:
    """Why the package's step ends the run where it does, or why it goes on. These are facts, not a
    guess at the mistake: on a shrunk scene a narrow mistake (a tail too short for one stop string)
    gives the same result as a broad one (no tail at all), but the facts show which rule it breaks."""
    req = _request(scene)
    output = req.output_ids + want.tokens
    j, token = len(want.tokens) - 1, want.tokens[-1]
    if want.finish_reason is None:
        return (
            "no new token finishes the request: "
            + (
                "ignore_eos is set, so an end id does not"
                if req.ignore_eos
                else f"none is in req.eos_ids {sorted(req.eos_ids)}"
            )
            + f", no stop string of {req.stop} shows in the text, and {len(output)} tokens stay below "
            f"max_new_tokens {req.max_new_tokens}"
        )
    facts = []
    eos = token in req.eos_ids and not req.ignore_eos
    if eos:
        facts.append(f"new token {j} ({token}) is in req.eos_ids {sorted(req.eos_ids)}, the served model's end ids")
    shown = [x for x in req.stop if x in req.decode(output)]
    if shown and not eos:
        x = shown[0]
        n = next(n for n in range(1, len(output) + 1) if x in req.decode(output[-n:]))
        facts.append(f"new token {j} completes the stop string {x!r}, which spans the last {n} tokens")
        if n > len(want.tokens):
            facts.append(f"{n - len(want.tokens)} of them from before this step: decode a tail of the whole output")
        elif n > 1:
            facts.append("decode them together, not token by token")
        window = max(len(y.encode("utf-8")) for y in req.stop) + 4
        if len(req.stop) > 1 and n > min(len(y.encode("utf-8")) for y in req.stop) + 4:
            facts.append(f"the longest stop string of the list sizes the tail ({window} tokens), not the shortest")
        if n > max(len(y) for y in req.stop) + 4:
            chars = max(len(y) for y in req.stop) + 4
            facts.append(f"count the tail in bytes, not characters ({chars} tokens would not hold it)")
        empty = [t for t in output[-n:] if not req.decode([t])]
        if empty and n > max(len(y.encode("utf-8")) for y in req.stop):
            facts.append(
                f"{len(empty)} of them decode to no text (end ids kept by ignore_eos): the tail needs a margin "
                "beyond len(s.encode()) tokens"
            )
        if not req.decode(output[-n:]).endswith(x):
            facts.append("the text goes on after it inside that token: look for it anywhere in the tail, not endswith")
        if req.ignore_eos:
            facts.append(
                "ignore_eos turns off the EOS test only: stop strings and max_new_tokens still end the request"
            )
    if len(output) >= req.max_new_tokens:
        facts.append(f"with it the output has {len(output)} tokens, max_new_tokens {req.max_new_tokens}")
        if want.finish_reason == "length" and j == want.accepted:
            facts.append("it is the model's own token, which counts toward max_new_tokens like the accepted drafts")
        if want.finish_reason == "stop":
            facts.append("'stop' wins over 'length'")
    return f"'{want.finish_reason}': " + "; ".join(facts) + "; nothing after that token counts"


def _cut_hint(scene: VerifyScene, diff: Difference, answer: Optional[list] = None) -> str:
    """tokens or finish_reason: a place looked up by value in a run that repeats a token, an ignored end
    id left out, a run that went on past its finish, one cut by tokens that come after the finish
    check's token (the answer tried once more), an acceptance mistake by name, or the finish check's
    facts."""
    want = _step(_request(scene), scene.drafts, scene.targets)
    got = diff.got if isinstance(diff.got, list) else []
    if answer and run_repeats(_request(scene), scene.drafts, scene.targets, want.accepted):
        if finds_places_by_value(answer[0]):  # the run repeats a token and the answer looks places up by value
            return PLACE_BY_VALUE_HINT
    # checks one token late (late_checks.py) or a stop string test other than `in` (stop_match.py): each
    # looks like a length test off by one, a stripped tail or a window too short on some scenes
    # (a tail cut in characters, char_tail.py, and a length test that counts the prompt, prompt_length.py, too)
    probes = (late_hint, match_hint, char_tail_hint, prompt_length_hint)
    probed = next((h for p in probes if (h := p(answer[0], *_inputs(scene)))), None) if answer else None
    if probed:
        return probed
    late = want.finish_reason == "length" and (len(got) == len(want.tokens) + 1 or diff.got is None)
    if late and answer and length_one_past(answer[0]):
        return f"{MISTAKES['length_one_past']} ({HINTS['length_one_past']})"
    early = _step(_request(scene), scene.drafts, scene.targets, "length_one_early") != want
    if early and answer and length_one_early(answer[0]):
        return f"{MISTAKES['length_one_early']} ({HINTS['length_one_early']})"
    chars_first = bool(scene.stop) and len(max(scene.stop, key=len).encode()) < max(len(x.encode()) for x in scene.stop)
    if want.finish_reason == "stop" and chars_first and answer and window_of_most_characters(answer[0]):
        return f"{MISTAKES['stop_window_most_chars']} ({HINTS['stop_window_most_chars']})"
    if scene.ignore_eos and answer and drops_it_here(answer[0], _request(scene), scene.drafts, scene.targets):
        return f"{MISTAKES[DROPPED]} ({HINTS[DROPPED]})"
    tail = _tail_class(scene, want, answer[0]) if answer and want.finish_reason == "stop" else None
    if tail:
        return tail
    # a stop string missed where whitespace at an end of the tail completes it: the tail was stripped
    stripped = stripped_hint(answer[0], _request(scene), scene.drafts, scene.targets) if answer else None
    if stripped and want.finish_reason == "stop":
        return stripped
    named = _probed_cut(scene, want, answer[0]) if answer and want.finish_reason == "stop" else None
    if named:
        return f"{MISTAKES[named]} ({HINTS[named]})"
    if (
        want.finish_reason
        and answer
        and goes_on_after_the_finish(answer[0], _request(scene), scene.drafts, scene.targets)
    ):
        return f"{MISTAKES['no_break']} ({HINTS['no_break']})"
    if (
        want.finish_reason
        and answer
        and model_token_after_the_finish(answer[0], _request(scene), scene.drafts, scene.targets)
    ):
        return f"{MISTAKES[AFTER_FINISH]} ({HINTS[AFTER_FINISH]})"
    skipped = _skipped(scene, want, answer[0]) if answer and want.finish_reason else ""
    if skipped:
        return skipped
    if want.finish_reason and len(got) > len(want.tokens) and got[: len(want.tokens)] == want.tokens:
        return finish_story(scene, want) + ", but the run went on past it: check each new token as if it came alone"
    if answer and _sees_the_whole_run(answer[0], scene):
        return f"{MISTAKES['whole_run']} ({HINTS['whole_run']})"
    if want.finish_reason == "length" and diff.got == "stop":
        return finish_story(scene, want) + f"; {LENGTH_NOT_FIRST}"
    m = named_mistake(scene, diff, ACCEPT_MISTAKES)
    return f"{MISTAKES[m]} ({HINTS[m]})" if m else finish_story(scene, want)


def _inputs(scene: VerifyScene) -> tuple:
    return _request(scene), list(scene.drafts), list(scene.targets)


def _tail_class(scene: VerifyScene, want: VerifyResult, fn) -> Optional[str]:
    """window.py's message when the answer's stop-string tail does not follow this request's own stop
    strings (and its result here is the one that tail gives); None when not, or when it raises."""
    req = _request(scene)
    try:
        got = _call(fn, req, list(scene.drafts), list(scene.targets))
    except Exception:
        return None
    return window_class(fn, req, list(scene.drafts), list(scene.targets), got)


def _skipped(scene: VerifyScene, want: VerifyResult, fn) -> str:
    """skipped.py's message when the answer missed the finish because another check let the
    finishing token pass ("" when not, or when the answer raises on the scene)."""
    req = _request(scene)
    try:
        got = _call(fn, req, list(scene.drafts), list(scene.targets))
    except Exception:
        return ""
    return skipped_check(fn, req, list(scene.drafts), list(scene.targets), want, got)


def _probed_cut(scene: VerifyScene, want: VerifyResult, fn) -> Optional[str]:
    """A 'stop' the answer missed, named by the class the answer shows on the steps that tell it:
    the model's own token (here the finishing one) not checked, or a stop string's text decoded in
    pieces (output tail and new tokens apart), or every stop string of the list required (all())."""
    req = _request(scene)
    try:
        got = _call(fn, req, list(scene.drafts), list(scene.targets))
    except Exception:
        got = None
    if got is not None and makes_every_stop(fn, req, list(scene.drafts), list(scene.targets), got):
        return "stop_all"
    if len(want.tokens) == want.accepted + 1 and model_token_unchecked(fn):
        return "finish_not_on_model_token"
    by_eos = want.tokens[-1] in scene.eos_ids and not scene.ignore_eos
    if scene.stop and not by_eos and decodes_in_pieces(fn):
        return "stop_in_pieces"
    return None


def window_of_most_characters(fn) -> bool:
    """The answer finds '🚀🚀🚀' (9 tokens, 12 bytes) beside '!' in either order, and misses it beside
    ' END' (more characters, fewer bytes) in either order: its tail follows the stop string with the
    most characters."""
    ids = tokenizer().encode("go 🚀🚀🚀 now")
    req = functools.partial(_req, ids[:4], 7)

    def finds(stop: tuple[str, ...]) -> bool:
        got = _call(fn, req(stop=stop), ids[4:], ids[4:] + [_id(" one")])
        return got.finish_reason == "stop" and len(got.tokens) == 6

    try:
        found = finds(("!", "🚀🚀🚀")) and finds(("🚀🚀🚀", "!"))
        return found and not finds((" END", "🚀🚀🚀")) and not finds(("🚀🚀🚀", " END"))
    except Exception:
        return False


def _sees_the_whole_run(fn, scene: VerifyScene) -> bool:
    """The answer's whole result on the scene is the step whose finish checks see the whole run, and
    on a step that tells that mistake from a length tested only after the loop (a length reached on
    the run's last token, or a stop string completed inside the run) it is that step's too."""
    return answers_with(fn, _request(scene), scene.drafts, scene.targets, "whole_run") and whole_run_probed(fn)


def accepted_hint(scene: VerifyScene, diff: Difference, answer: Optional[list] = None) -> str:
    if isinstance(diff.got, int) and diff.got < diff.expected:
        want = _step(_request(scene), scene.drafts, scene.targets)
        if want.finish_reason and diff.got == len(want.tokens) - 1:
            if answer and caps_the_drafts(answer[0]):
                return CAPPED
            return "accepted counts the drafts the model agreed with, before any cut by a finish"
    m = named_mistake(scene, diff, ACCEPT_MISTAKES)
    return (
        f"{MISTAKES[m]} ({HINTS[m]})" if m else "accepted: drafts[j] == targets[j] from j = 0 on, to the first mismatch"
    )


def kv_hint(scene: VerifyScene, diff: Difference, answer: Optional[list] = None) -> str:
    req = _request(scene)
    want = _step(req, scene.drafts, scene.targets)
    return kv_story(req, scene.drafts, want, diff.got, answer[0] if answer else None)[1]


def pages_hint(scene: VerifyScene, diff: Difference, answer: Optional[list] = None) -> str:
    req = _request(scene)
    want = _step(req, scene.drafts, scene.targets)
    story, hint = pages_story(req, want, diff.got)
    fn = answer[0] if answer else None
    named = page_class(fn, req, scene.drafts, scene.targets, want, diff.got) if isinstance(diff.got, list) else None
    if named:
        return f"{story}: {named}"
    m = page_mistake(req, scene.drafts, scene.targets, diff.got) if isinstance(diff.got, list) else None
    if isinstance(diff.got, list):
        m = confirmed(m, answer[0] if answer else None, req, scene.drafts, scene.targets, diff.got)
    if m is None and answer and isinstance(diff.got, list):
        m = _pages_on_a_longer_row(answer[0], req, scene.drafts, scene.targets, ALL_MISTAKES)
    # the story says "no page was given back" itself
    return f"{story}: {MISTAKES[m]}" if m and m != "pages_none" else f"{story} ({hint})"


VERIFY_HINTS = {
    "accepted": accepted_hint,
    "tokens": _cut_hint,
    "finish_reason": _cut_hint,
    "kv_len": kv_hint,
    "free_pages": pages_hint,
    "req.output_ids": "leave req.output_ids as it is: the scheduler appends your tokens itself (_add_token)",
    "req.stop": (
        "leave req.stop as it is: you changed the request's stop list in place (the scene shows it as it was "
        "given); the stop strings are the client's, read again at every step"
    ),
    "req.eos_ids": "leave req.eos_ids as it is: the scheduler's parts share that one set",
    "req.pages": "leave req.pages as it is: return free_pages, and the scheduler trims the row itself",
    "drafts": "leave drafts as they are: build new lists",
    "targets": "leave targets as they are: build new lists",
}


def verify_case(reference: Any, examples: int = 250) -> Any:
    answer: list = []  # the answer being graded, once its search starts: some hints try it once more
    hints = dict(
        VERIFY_HINTS,
        accepted=lambda scene, diff: accepted_hint(scene, diff, answer),
        tokens=lambda scene, diff: _cut_hint(scene, diff, answer),
        finish_reason=lambda scene, diff: _cut_hint(scene, diff, answer),
        kv_len=lambda scene, diff: kv_hint(scene, diff, answer),
        free_pages=lambda scene, diff: pages_hint(scene, diff, answer),
    )
    case = generated(
        f"generated: {examples} verify steps against the package's",
        verify_scenes(),
        play,
        show,
        reference,
        hints,
        examples,
        hint="every field equals the package's step on the same input, and the inputs stay as they were",
    )
    search = case.run

    def run(impl: Any) -> None:
        answer[:] = [impl]
        search(impl)

    return replace(case, run=run)
