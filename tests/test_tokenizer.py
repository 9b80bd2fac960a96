"""Chat template and incremental detokenizer, on a real byte-level BPE tokenizer built here.

The tokenizer is trained in a few milliseconds on a tiny corpus with a small vocabulary, so an
emoji, a CJK character or an accented letter is split across several byte-level tokens: exactly
the case where naive per-token decoding prints U+FFFD. No model file is needed.
"""

from __future__ import annotations

import random

import pytest

from minisgl_edu.tokenizer import IncrementalDetokenizer, encode_prompt

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
TEXTS = [
    "Hello, world! The KV cache stores keys and values.",
    "Café déjà vu, naïve façade, Ærøskøbing.",
    "日本語のテキストと中文文本。",
    "Emoji: 👋🏽 🚀 👨‍👩‍👧 ✅ — done.",
    "stop here END and more text after it",
]


@pytest.fixture(scope="module")
def tok():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320,
        special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    bpe.train_from_iterator(["the quick brown fox jumps over the lazy dog " * 3, "hello world " * 5], trainer)
    t = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    t.chat_template = CHAT_TEMPLATE
    return t


def stream(tok, ids, **kw):
    d = IncrementalDetokenizer(tok, **kw)
    pieces = [d.add(t) for t in ids]
    pieces.append(d.finish())
    return d, pieces


# ---------------------------------------------------------------- encode_prompt


def test_encode_prompt_string_and_ids(tok):
    ids = encode_prompt(tok, "hello world")
    assert ids == tok.encode("hello world")
    assert encode_prompt(tok, [5, 6, 7]) == [5, 6, 7]


def test_encode_prompt_applies_chat_template_with_generation_prompt(tok):
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi 👋"}]
    ids = encode_prompt(tok, msgs)
    text = tok.decode(ids)
    assert text == "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi 👋<|im_end|>\n<|im_start|>assistant\n"
    # Special tokens of the template are single ids, not spelled out byte by byte.
    assert ids.count(tok.convert_tokens_to_ids("<|im_start|>")) == 3


def test_encode_prompt_accepts_openai_content_parts(tok):
    a = encode_prompt(
        tok, [{"role": "user", "content": [{"type": "text", "text": "hel"}, {"type": "text", "text": "lo"}]}]
    )
    b = encode_prompt(tok, [{"role": "user", "content": "hello"}])
    assert a == b


@pytest.mark.parametrize("bad", [[], [{"role": "user"}, 3], [{"content": "no role"}], {"role": "user"}, None])
def test_encode_prompt_rejects_bad_shapes(tok, bad):
    with pytest.raises(ValueError):
        encode_prompt(tok, bad)


def test_encode_prompt_without_chat_template_is_a_clear_error(tok):
    saved, tok.chat_template = tok.chat_template, None
    try:
        with pytest.raises(ValueError, match="no chat template"):
            encode_prompt(tok, [{"role": "user", "content": "hi"}])
    finally:
        tok.chat_template = saved


# ---------------------------------------------------------------- IncrementalDetokenizer


@pytest.mark.parametrize("text", TEXTS)
def test_stream_equals_full_decode_and_never_emits_broken_chars(tok, text):
    ids = tok.encode(text)
    assert len(ids) > len(text) * 0.8  # the small vocab really splits characters into bytes
    d, pieces = stream(tok, ids)
    assert "".join(pieces) == text == d.text
    assert all("\ufffd" not in p for p in pieces)


def test_multi_token_characters_arrive_whole(tok):
    ids = tok.encode("👋")
    assert len(ids) == 4  # four UTF-8 bytes, four tokens
    d = IncrementalDetokenizer(tok)
    assert [d.add(t) for t in ids] == ["", "", "", "👋"]
    assert d.finish() == ""


def test_special_tokens_are_skipped_or_kept(tok):
    ids = tok.encode("hi") + [tok.convert_tokens_to_ids("<|im_end|>")]
    assert "".join(stream(tok, ids)[1]) == "hi"
    assert "".join(stream(tok, ids, skip_special_tokens=False)[1]) == "hi<|im_end|>"


def test_stop_string_is_cut_with_everything_after_it(tok):
    ids = tok.encode("stop here END and more text after it")
    d, pieces = stream(tok, ids, stop=["END"])
    assert "".join(pieces) == "stop here " == d.text
    assert d.stopped


def test_prefix_of_a_stop_string_is_held_back_until_resolved(tok):
    d = IncrementalDetokenizer(tok, stop=["<<STOP>>"])
    out = [d.add(t) for t in tok.encode("a <<ST")]
    assert "".join(out) == "a "  # "<<ST" might start the stop string: held
    out += [d.add(t) for t in tok.encode("x")]
    assert "".join(out) == "a <<STx"  # it did not: released
    assert d.finish() == ""


def test_held_back_tail_is_flushed_when_the_request_ends(tok):
    d = IncrementalDetokenizer(tok, stop=["ENDING"])
    text = "".join(d.add(t) for t in tok.encode("the END"))
    assert text == "the "
    assert d.finish() == "END"
    assert d.text == "the END"


def test_stop_string_split_across_many_chunks_and_characters(tok):
    # The stop string is itself made of multi-byte characters spread over many tokens.
    ids = tok.encode("日本語🚀停止🚀 more")
    d, pieces = stream(tok, ids, stop=["🚀停止"])
    assert d.text == "日本語"
    assert all("\ufffd" not in p and "🚀" not in p for p in pieces)


def test_earliest_of_several_stop_strings_wins(tok):
    d, _ = stream(tok, tok.encode("one two three four"), stop=["four", "two"])
    assert d.text == "one "


def test_cut_mid_character_flushes_what_is_there(tok):
    ids = tok.encode("ok 👋")[:-1]  # max_tokens stopped inside the emoji
    d, pieces = stream(tok, ids)
    assert pieces[:-1] and "".join(pieces[:-1]) == "ok "  # add() never emits the broken char
    assert d.text == tok.decode(ids)


def test_random_texts_match_full_decode(tok):
    rng = random.Random(0)
    alphabet = list("abc xyz,.") + list("éßø日本語中文") + ["👋", "🚀", "✅"]
    for _ in range(50):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30)))
        stop = rng.choice(["", "z", "日本", "👋x", "c c"])
        d, pieces = stream(tok, tok.encode(text), stop=[stop])
        expected = text.split(stop)[0] if stop else text
        assert d.text == expected, (text, stop)
        assert all("\ufffd" not in p for p in pieces)


# ---------------------------------------------------------------- the worker's managers (no processes)

from minisgl_edu.core import SamplingParams  # noqa: E402
from minisgl_edu.message import (  # noqa: E402
    AbortBackendMsg,
    AbortMsg,
    BatchBackendMsg,
    DetokenizeMsg,
    ExitMsg,
    SchedulerStatsMsg,
    TokenizeMsg,
    UserMsg,
    UserReply,
)
from minisgl_edu.tokenizer.server import DetokenizeManager, TokenizeManager, TokenizeWorker  # noqa: E402


class ListQueue:
    def __init__(self):
        self.items = []

    def put(self, msg):
        self.items.append(msg)


def make_worker(tok, max_seq_len=64):
    front, back = ListQueue(), ListQueue()
    worker = TokenizeWorker(None, front, back, TokenizeManager(tok, max_seq_len, len(tok)), DetokenizeManager(tok))
    return worker, front, back


def test_detokenizer_map_is_empty_after_finish_and_abort(tok):
    m = DetokenizeManager(tok)
    a, b = tok.encode("日本"), tok.encode("👋 hi")
    replies = [m.detokenize(DetokenizeMsg(uid=1, next_token=t, finished=False)) for t in a]
    replies += [m.detokenize(DetokenizeMsg(uid=2, next_token=t, finished=False)) for t in b]
    assert set(m.decode_map) == {1, 2}
    last = m.detokenize(DetokenizeMsg(uid=1, next_token=tok.encode("!")[0], finished=True, finish_reason="length"))
    aborted = m.detokenize(DetokenizeMsg(uid=2, next_token=-1, finished=True, finish_reason="abort"))
    assert m.decode_map == {}
    text1 = "".join(r.incremental_output for r in replies if r and r.uid == 1) + last.incremental_output
    assert text1 == "日本!" and last.finished and last.num_output_tokens == len(a) + 1
    assert aborted.finished and aborted.finish_reason == "abort" and aborted.num_output_tokens == len(b)
    # Replies with nothing to show are not sent at all (half a character).
    assert replies[0] is None


def test_detokenizer_applies_the_stop_strings_of_the_message(tok):
    m = DetokenizeManager(tok)
    ids = tok.encode("one two three")
    out = [
        m.detokenize(
            DetokenizeMsg(
                uid=7,
                next_token=t,
                finished=i == len(ids) - 1,
                finish_reason="stop" if i == len(ids) - 1 else None,
                stop=["two"],
            )
        )
        for i, t in enumerate(ids)
    ]
    assert "".join(r.incremental_output for r in out if r) == "one "
    assert m.decode_map == {}


def test_tokenize_worker_sends_user_msg_and_prompt_length(tok):
    worker, front, back = make_worker(tok)
    params = SamplingParams(max_tokens=3)
    assert worker.handle(
        [
            TokenizeMsg(uid=1, text="hello", sampling_params=params),
            TokenizeMsg(uid=2, text=[{"role": "user", "content": "hi"}], sampling_params=params),
        ]
    )
    (batch,) = back.items
    assert isinstance(batch, BatchBackendMsg) and [type(m) for m in batch.data] == [UserMsg, UserMsg]
    assert batch.data[0].input_ids == tok.encode("hello")
    infos = front.items[0].data
    assert [(r.uid, r.finished, r.num_prompt_tokens) for r in infos] == [
        (1, False, len(tok.encode("hello"))),
        (2, False, len(batch.data[1].input_ids)),
    ]


@pytest.mark.parametrize(
    "prompt,error",
    [
        ("hello " * 100, "maximum context length"),
        ([1, 2, 10_000], "outside the vocabulary"),
        ([{"role": "user", "content": 5}], "content"),
    ],
)
def test_tokenize_worker_rejects_without_the_scheduler(tok, prompt, error):
    worker, front, back = make_worker(tok)
    worker.handle([TokenizeMsg(uid=9, text=prompt, sampling_params=SamplingParams())])
    assert back.items == []
    (reply,) = front.items
    assert isinstance(reply, UserReply) and reply.finished and error in reply.error


def test_tokenize_worker_forwards_abort_and_stats_and_stops_on_exit(tok):
    worker, front, back = make_worker(tok)
    assert worker.handle([AbortMsg(uid=3), SchedulerStatsMsg(stats={"kv_pages_free": 1})])
    assert back.items == [AbortBackendMsg(uid=3)]
    assert front.items == [SchedulerStatsMsg(stats={"kv_pages_free": 1})]
    assert worker.handle([ExitMsg()]) is False


def test_a_burst_is_encoded_together_with_the_answers_of_one_by_one(tok):
    from minisgl_edu.tokenizer.template import encode_prompts

    prompts = [
        TEXTS[1],
        [{"role": "user", "content": TEXTS[3]}],
        [5, 6, 7],
        [{"role": "user", "content": 5}],  # refused: its ValueError in its place
        TEXTS[2],
        [{"role": "system", "content": "be brief"}, {"role": "user", "content": TEXTS[0]}],
    ]
    together = encode_prompts(tok, prompts)
    assert isinstance(together[3], ValueError) and "content" in str(together[3])
    for prompt, ids in zip(prompts[:3] + prompts[4:], together[:3] + together[4:]):
        assert ids == encode_prompt(tok, prompt)
    assert together[0] == tok.encode(TEXTS[1]) and together[2] == [5, 6, 7]


def test_tokenize_worker_keeps_the_order_of_a_burst_and_fails_a_bad_prompt_alone(tok):
    worker, front, back = make_worker(tok)
    params = SamplingParams(max_tokens=3)
    worker.handle(
        [
            TokenizeMsg(uid=1, text="one", sampling_params=params),
            AbortMsg(uid=1),  # after its request, in the same burst: it must reach the scheduler second
            TokenizeMsg(uid=2, text=[{"role": "user", "content": 5}], sampling_params=params),
            TokenizeMsg(uid=3, text="three", sampling_params=params),
        ]
    )
    (batch,) = back.items
    assert [(type(m).__name__, m.uid) for m in batch.data] == [("UserMsg", 1), ("AbortBackendMsg", 1), ("UserMsg", 3)]
    assert batch.data[2].input_ids == tok.encode("three")
    replies = {r.uid: r for r in front.items[0].data}
    assert replies[2].error and replies[2].finished and not replies[1].error and not replies[3].error


# ---------------------------------------------------------------- the default model's own tokenizer


@pytest.fixture(scope="module")
def smollm2_tok(default_model_dir):
    from minisgl_edu.models import load_tokenizer

    return load_tokenizer(default_model_dir)


@pytest.mark.slow
@pytest.mark.parametrize("text", TEXTS + ["Ünïcödé ✓ 你好，世界 🎉🎉 ok"])
def test_default_tokenizer_streams_exact_text(smollm2_tok, text):
    ids = smollm2_tok.encode(text, add_special_tokens=False)
    d, pieces = stream(smollm2_tok, ids)
    assert d.text == smollm2_tok.decode(ids, skip_special_tokens=True) == text
    assert all("\ufffd" not in p for p in pieces)


@pytest.mark.slow
def test_default_chat_template_ends_with_the_assistant_turn(smollm2_tok):
    ids = encode_prompt(smollm2_tok, [{"role": "user", "content": "Hi"}])
    text = smollm2_tok.decode(ids)
    assert text.endswith("<|im_start|>assistant\n") and "<|im_start|>user\nHi<|im_end|>" in text
    # The rendered template already starts with <|im_start|>; encoding it must not prepend another.
    im_start = smollm2_tok.convert_tokens_to_ids("<|im_start|>")
    assert ids[0] == im_start and ids[1] != im_start


# ---------------------------------------------------------------- the scheduler's stop-string check


@pytest.mark.parametrize("stop", ["END", "北京天安门", "🚀🚀🚀", "🇫🇷🇩🇪", "👩‍💻"])
def test_check_finish_sees_a_stop_string_of_any_characters(tok, stop):
    """On a byte-level tokenizer a stop string of b UTF-8 bytes can span b tokens (this one has
    a token per byte for every emoji): the finish check stops on the very token that completes it,
    never before, however many tokens its characters take."""
    from minisgl_edu.core import Req
    from minisgl_edu.scheduler.finish import check_finish

    ids = tok.encode(f"a {stop} b")
    decode = lambda xs: tok.decode(xs, skip_special_tokens=True)  # noqa: E731
    completes = next(i for i in range(1, len(ids) + 1) if stop in decode(ids[:i]))
    req = Req(uid=0, input_ids=[1], sampling_params=SamplingParams(max_tokens=100, stop=[stop]))
    req.max_new_tokens = 100
    for i in range(1, len(ids) + 1):
        req.output_ids = ids[:i]
        assert check_finish(req, set(), decode) == ("stop" if i >= completes else None), (i, completes)
