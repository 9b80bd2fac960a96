from cells import code, md

CELLS = [
    md(r"""
# 03 · The tokenizer and the chat template

**Goal:** see what the tokenizer worker does to a request: how chat messages become one text, how
text becomes token ids, and which prompts are turned away before the scheduler ever sees them.
**Expected time:** 20 minutes (the cells run in a few seconds).

Where we are on the path: the API server has sent a `TokenizeMsg(uid, text, sampling_params)`.
The tokenizer worker (`tokenizer/server.py`) answers with a `UserMsg(uid, input_ids, ...)`.
After this hop nothing downstream sees text again until the detokenizer.
"""),
    code(r"""
import os
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from minisgl_edu.models import load_tokenizer, resolve_model

tok = load_tokenizer(resolve_model("smollm2-135m"))
print("vocabulary:", len(tok), "tokens | end of sequence:", tok.eos_token, tok.eos_token_id)
"""),
    md(r"""
## Text → token ids

SmolLM2 uses byte-level BPE, like GPT-2, Llama 3 and Qwen: frequent character sequences get one
id, rare ones are split into pieces, and any byte can be written as a token, so no text is ever
"unknown". `Ġ` in a piece stands for a leading space.
"""),
    code(r"""
ids = tok.encode("KV cache makes decoding fast.")
print(ids)
print(tok.convert_ids_to_tokens(ids))
print(repr(tok.decode(ids)))
"""),
    md(r"""
Words the tokenizer saw rarely during training cost more tokens, and so does text in scripts
that were rare in its training data. Every token is one position in the KV cache and one step of
work, so the token count, not the character count, is what the engine pays for.
"""),
    code(r"""
for text in ["cache", "caching", "tokenization", "Écris une phrase.", "用一句话介绍北京。", "🙂"]:
    ids = tok.encode(text)
    print(f"{text!r:<24} {len(text):>3} chars -> {len(ids):>2} tokens {ids}")
"""),
    md(r"""
The emoji is one character but several tokens: its UTF-8 bytes are split over tokens, and one of
those tokens alone does not decode to a whole character. Chapter 07 deals with that on the way
back.
"""),
    code(r"""
emoji_ids = tok.encode("🙂")
print([tok.decode([i]) for i in emoji_ids], "->", tok.decode(emoji_ids))
"""),
    md(r"""
## Chat messages → one text: the chat template

A chat model was trained on conversations written in a fixed format with special tokens around
each turn. The tokenizer files carry that format as a Jinja template; `apply_chat_template` fills
it in. `add_generation_prompt=True` ends the text with the opening of an assistant turn, so the
model's next tokens are the answer.
"""),
    code(r"""
messages = [{"role": "user", "content": "What is KV Cache?"}]
text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
print(text)
"""),
    md(r"""
The template added a default system message: the model was trained with it, and answers
differently without it. With our own system message:
"""),
    code(r"""
print(tok.apply_chat_template([{"role": "system", "content": "Answer in one word."}] + messages,
                              tokenize=False, add_generation_prompt=True))
"""),
    md(r"""
## `encode_prompt`: the function the worker calls

`tokenizer/template.py` has `encode_prompt(tokenizer, prompt)`, used by the tokenizer worker and
by the offline `LLM`. A prompt comes in one of three shapes: a string (`/v1/completions`), chat
messages (`/v1/chat/completions`), or token ids (already tokenized by the client).

One detail matters: the rendered chat text already contains the special tokens the model expects
(`<|im_start|>` ...), so it is encoded **without** adding more (`add_special_tokens=False`). Some
tokenizers (Llama 3's, for one) put a beginning-of-text token in front of whatever they encode,
and their chat template writes one too: encoded with the defaults, the prompt would start with
two, which is not what the model was trained on. SmolLM2's tokenizer adds nothing by itself, so
for this model both ways give the same ids (the cell checks it). mini-sglang has no
`encode_prompt`: its `TokenizeManager.tokenize` renders the template and calls
`tokenizer.encode(prompt)` with the tokenizer's defaults.
"""),
    code(r"""
from minisgl_edu.tokenizer import encode_prompt

chat_ids = encode_prompt(tok, messages)
print(len(chat_ids), "ids; ends with", tok.convert_ids_to_tokens(chat_ids[-4:]))
print("special tokens in it:", [t for t in tok.convert_ids_to_tokens(chat_ids) if t.startswith("<|")])
print("string prompt:", encode_prompt(tok, "The capital of France is"))
print("token-id prompt passes through:", encode_prompt(tok, [504, 3575, 282]) == [504, 3575, 282])
print("same ids as tok.encode(text) with its defaults:", chat_ids == tok.encode(text))
"""),
    md(r"""
## The worker: `TokenizeMsg` in, `UserMsg` out

`TokenizeWorker.handle` looks at each message's type: a `TokenizeMsg` goes through
`TokenizeManager.tokenize` (template, encode, checks) and becomes a `UserMsg` for the scheduler;
an `AbortMsg` becomes an `AbortBackendMsg`. A prompt that can never run (longer than the context,
empty, token ids outside the vocabulary) is answered at once with an error `UserReply`: the
scheduler never sees it. We call the worker directly with two list "queues":
"""),
    code(r"""
from minisgl_edu import SamplingParams
from minisgl_edu.message import TokenizeMsg
from minisgl_edu.tokenizer.server import TokenizeManager, TokenizeWorker


class ListQueue(list):
    put = list.append


to_scheduler, to_frontend = ListQueue(), ListQueue()
worker = TokenizeWorker(None, to_frontend, to_scheduler,
                        TokenizeManager(tok, max_seq_len=64, vocab_size=len(tok)), None)
worker.handle([TokenizeMsg(uid=0, text=messages, sampling_params=SamplingParams(max_tokens=8)),
               TokenizeMsg(uid=1, text="word " * 100, sampling_params=SamplingParams())])


def show(msg):
    msgs = getattr(msg, "data", [msg])  # a Batch...Msg carries several
    for m in msgs:
        fields = {k: (f"[{len(v)} ids]" if k == "input_ids" else v) for k, v in vars(m).items()
                  if k in ("uid", "input_ids", "finished", "finish_reason")}
        print(f"  {type(m).__name__:<9}", fields, "(with an error message)" if getattr(m, "error", None) else "")


print("to the scheduler:")
for m in to_scheduler:
    show(m)
print("to the API server:")
for m in to_frontend:
    show(m)
"""),
    md(r"""
uid 0 became a `UserMsg` with the ids of the chat prompt; the API server also got an empty
`UserReply` that tells it the prompt length (for the `usage` field of the response). uid 1 has
more tokens than this (deliberately tiny) context of 64, so it was rejected with an error reply
that the API server turns into an HTTP 400.

This check is one place where this engine differs from mini-sglang on purpose. mini-sglang's
tokenizer does not look at the length: its scheduler does (`Scheduler._process_one_msg`), drops a
prompt that does not fit with a warning in the log, and lowers `max_tokens` of one that fits to
what is left of the context. Here the tokenizer worker turns the prompt away with a message the
client sees, and the scheduler checks again when the request arrives (`Scheduler._validate`,
because its KV cache can hold less than the model's context) and clamps the output length
(`req.max_new_tokens` in `Scheduler.add_request`).

## Summary

* The chat template turns messages into the exact text format the model was trained on, ending
  with the start of the assistant's turn; `encode_prompt` encodes it without extra special tokens.
* Token count is what costs: characters in rare scripts and emoji take several tokens.
* The tokenizer worker sends `UserMsg`s on, and turns away prompts that could never run.

## Exercises

1. Count the tokens of the same sentence in English, French and Chinese. Which costs the most KV
   cache? Why?
2. The cell above found `tok.encode(text)` equal to `encode_prompt(tok, messages)` for SmolLM2.
   Print `tok.encode("hi")` and `tok.bos_token`: why are the two id lists equal? What would differ with a
   tokenizer that puts a beginning-of-text token in front of everything it encodes?
3. Send `TokenizeMsg(uid=2, text=[], ...)` through the worker above. What comes back, and to whom?
4. Chapter 07 and `exercises/03_detokenizer.ipynb` go the other way: from ids back to text.
   Decode the emoji's ids one at a time again: what would a client see if we streamed those?
"""),
]
