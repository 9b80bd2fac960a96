from cells import code, md

CELLS = [
    md(r"""
# 07 · Detokenization and streaming back

**Goal:** see why turning tokens back into text one at a time is harder than
`tokenizer.decode([token])`, how the incremental detokenizer solves it (and hides stop strings),
and how its `UserReply`s become the SSE chunks a client reads.
**Expected time:** 25 minutes (the cells run in about 15 seconds).

Where we are on the path: the scheduler sends one `DetokenizeMsg(uid, next_token, finished)` per
new token. The detokenizer worker (`tokenizer/server.py`, `DetokenizeManager`) keeps one
`IncrementalDetokenizer` (`tokenizer/detokenizer.py`) per uid and sends the new text as a
`UserReply(uid, incremental_output, finished)` to the API server. Exercise 3 asks you to write
that class without reading `tokenizer/detokenizer.py`: this chapter shows what it does, not its
code; leave the file until you have done the exercise.
"""),
    code(r"""
import os
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from minisgl_edu.models import load_tokenizer, resolve_model
from minisgl_edu.tokenizer import IncrementalDetokenizer

tok = load_tokenizer(resolve_model("smollm2-135m"))
"""),
    md(r"""
## Decoding one token at a time goes wrong

Take a short text with an accented word, an emoji and two Chinese characters, and decode its
tokens one by one, as a naive streaming server would:
"""),
    code(r"""
text = "Café 🙂 北京!"
ids = tok.encode(text)
for i in ids:
    print(f"{i:>6} {tok.convert_ids_to_tokens(i)!r:<12} decode alone -> {tok.decode([i])!r}")
print("joined:", repr("".join(tok.decode([i]) for i in ids)), "| whole:", repr(tok.decode(ids)))
"""),
    md(r"""
Byte-level BPE splits a character's UTF-8 bytes over several tokens; a token alone decodes to
`'\ufffd'` (�, the replacement character) for a half character. A client would see garbage.

## The incremental detokenizer

`IncrementalDetokenizer.add(token)` decodes a short window of recent tokens and compares it with
the same window without the newest token. It returns new text only when the window does not end
in `'\ufffd'`, i.e. when the last character is complete; otherwise it returns `''` and waits.
`finish()` flushes whatever is left at the end.

mini-sglang has no such class: its `DetokenizeManager.detokenize` keeps the same kind of offsets
per uid (`DecodeStatus`) and decodes a whole batch of uids with one `batch_decode`. When the
newest piece ends in `'\ufffd'` it does not simply wait: `find_printable_text` releases the part
of that piece up to its last space (or all but its last character, when a CJK character comes
just before it). It drops the final EOS
token, has no stop strings and no flush at the end. This detokenizer waits for whole characters,
holds back a possible stop string, flushes in `finish()`, and decodes with
`skip_special_tokens=True`.
"""),
    code(r"""
d = IncrementalDetokenizer(tok)
for i in ids:
    print(f"{i:>6} -> {d.add(i)!r}")
print("finish ->", repr(d.finish()), "| total:", repr(d.text), "| equal to decode:", d.text == tok.decode(ids))
"""),
    md(r"""
## Stop strings never reach the client

With `stop=["END"]`, the text `"... E"` might be the start of `END`. The detokenizer holds such a
tail back until the next tokens decide: either it was not a stop string (and is released), or it
was (and it and everything after it is dropped). The scheduler also stops generating when it
sees the stop string (its finish check, exercise 1), so the two together give OpenAI's behaviour. (Stop
strings are this engine's addition; mini-sglang's API accepts a `stop` field and ignores it.)
"""),
    code(r"""
ids2 = tok.encode("Step one, then step two. THE END. More text.")
d = IncrementalDetokenizer(tok, stop=["END"])
pieces = [(tok.convert_ids_to_tokens(i), d.add(i)) for i in ids2]
print(pieces)
print("finish ->", repr(d.finish()), "| client saw:", repr(d.text))
"""),
    md(r"""
After the token ` THE` the detokenizer released only ` TH`: the final `E` could have been the
start of `END`. The next token settled it: that `E` was not part of the stop string and came out,
while `END` and everything after it never did.

## The detokenizer worker: `DetokenizeMsg` in, `UserReply` out

`DetokenizeManager.detokenize` keeps a decoder per uid, creates it on the uid's first message and
drops it on the last (`finished=True`), so its map does not grow. A message that yields no
text yet produces no reply at all (nothing to send).
"""),
    code(r"""
from minisgl_edu.message import DetokenizeMsg
from minisgl_edu.tokenizer.server import DetokenizeManager

dm = DetokenizeManager(tok)
ids3 = tok.encode(" 北京 ok")
for n, t in enumerate(ids3):
    last = n == len(ids3) - 1
    reply = dm.detokenize(DetokenizeMsg(uid=7, next_token=t, finished=last, finish_reason="stop" if last else None))
    print(t, "->", None if reply is None else (reply.uid, reply.incremental_output, reply.finished))
print("decoders left:", len(dm.decode_map))
"""),
    md(r"""
## Streaming from the runtime

`LocalServer.stream` yields each `UserReply`'s text as the API server's `listen` receives it. In
the HTTP server, `stream_chunks` (`server/generate.py`) wraps each one in an SSE line
`data: {"choices": [{"delta": {"content": ...}}], ...}`; after the reply with `finished=True` it
sends a chunk with the `finish_reason` (`"stop"` or `"length"`) and then `data: [DONE]`.
mini-sglang's counterpart is `FrontendManager.stream_chat_completions`, whose last chunk always
says `"stop"`.
"""),
    code(r"""
from minisgl_edu import SamplingParams
from minisgl_edu.runtime import LocalServer

srv = LocalServer("smollm2-135m", device="cpu")
chunks = list(srv.stream([{"role": "user", "content": "Repeat exactly: 北京欢迎你 🙂"}],
                         SamplingParams(max_tokens=20)))
print(chunks)
res = srv.result(0)
print("tokens:", len(res.token_ids), "| chunks:", len(chunks), "| text:", repr(res.text))
"""),
    md(r"""
Fewer chunks than tokens: where a token ended in the middle of a character, the detokenizer sent
nothing for it. The trace shows the `UserReply`s with their text:
"""),
    code(r"""
for e in srv.trace(0):
    if e.event == "UserReply sent" and e.component == "detokenizer":
        print(repr(e.data["text"]), "finished" if e.data["finished"] else "")
"""),
    md(r"""
## Summary

* One token alone can be half a character: decode a window, release text only when it ends in a
  whole character, flush at the end.
* Text that could start a stop string is held back; a stop string and what follows are never sent.
* `DetokenizeMsg` → `DetokenizeManager` → `UserReply` → `listen` → SSE chunk → `data: [DONE]`.

## Exercises

1. Feed the detokenizer the ids of `"🙂🙂🙂"` and print what each `add` returns.
2. Why does the decoded window start one chunk back rather than at the newest token? Try
   decoding `" world"`'s token alone and after `"hello"`.
3. With `stop=["\n\n"]`, when is a single `"\n"` released?
4. `exercises/03_detokenizer.ipynb`: write `add` and `finish` yourself; the grader feeds them
   emoji, CJK and stop strings.
"""),
]
