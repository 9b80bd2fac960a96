"""Exercise 8's known mistakes: what each one says (`MISTAKES`, shown in a failure's message) and
the hint that goes with it (`HINTS`), grouped by the part of the step they belong to. The step in
step.py (`_step`) makes each of them on purpose, and a failure names the one whose result matches
the student's."""

from __future__ import annotations

MISTAKES = {
    "no_bonus": "when every draft is accepted, the model's token at the last position (targets[k]) still comes "
    "(the 'bonus'): a verify step gives the accepted drafts plus one token of the model's",
    "rejected_draft_kept": "the rejected draft was kept: at the first mismatch the model's own token there "
    "(targets[n]) replaces it",
    "model_token_missing": "the model's own token is missing: after the n accepted drafts comes targets[n], "
    "always (so a step gives at least one token)",
    "model_token_next": "the model's token was taken one position too far: after n accepted drafts it is "
    "targets[n] (targets[j] is the model's token after the newest token and drafts 0..j-1)",
    "model_token_last": "the model's token was taken as the last target, targets[-1]: that is its token after "
    "all the drafts, right only when every draft is accepted; after n accepted drafts it is targets[n]",
    "past_mismatch": "drafts after the first mismatch were accepted: once a draft is rejected, the positions "
    "after it were computed on a token the request never gets, so the run ends at the first mismatch",
    "bonus_accepted": "accepted counted the model's own token: with every draft accepted it is k = len(drafts), "
    "not k + 1; the token the model adds after them (targets[k]) goes into tokens, but it is not a draft",
    "finish_on_last_only": "a token inside the run finishes the request, but the run went on past it: check "
    "each new token as if it had come in a step of its own, and stop at the first that finishes",
    "no_break": "the first finish reason was kept, but the loop did not stop there: the tokens after the one that "
    "finishes the request were still appended (no break once the reason is set). The request ends on that token: "
    "nothing after it is kept, so leave the loop (break) right after appending it",
    "model_token_after_finish": "an accepted draft finishes the request, yet the model's own token was appended "
    "after it (targets[n] added to every step): the request ends on the finishing token, and the model's token "
    "comes after the end, so it is not kept. Only when no draft finishes the request does the run end with it",
    "finishing_token_dropped": "the token that finishes the request was dropped: the loop checked the finish "
    "before appending the token and left without it. The token that finishes (an EOS, the token that completes a "
    "stop string, the one that reaches max_new_tokens) is part of the answer, as without drafts: append it, then "
    "stop",
    "ignore_eos_ignored": "an EOS stopped a request that has ignore_eos set: with ignore_eos only stop "
    "strings and max_new_tokens end it",
    "ignored_eos_dropped": "an end id that ignore_eos lets pass was left out of tokens: ignore_eos only keeps it "
    "from ending the request. It is still the model's output (one token at a time, greedy decoding gives it too, "
    "and the tokens after it were computed with it in place), so append it like any other token: it stays in the "
    "output and counts toward max_new_tokens, kv_len and the pages",
    "ignore_eos_stops_off": "no stop string was looked for because ignore_eos is set: ignore_eos turns off the "
    "EOS test only, and stop strings and max_new_tokens still end the request",
    "length_overshoot": "the run went past max_new_tokens: count every new token, and stop at the last one allowed",
    "length_one_past": "the length test let the output go one token past max_new_tokens (len(output) > "
    "max_new_tokens): the max_new_tokens-th new token is the last allowed, so 'length' comes once the output "
    "reaches it (>=, not >)",
    "length_one_early": "the length test fired one token early (len(output) >= max_new_tokens - 1): the output "
    "may reach max_new_tokens, so the max_new_tokens-th new token still comes, and 'length' comes with it",
    "whole_run": "the finish checks saw tokens that come after the one being checked: the output was built from "
    "the whole run (output_ids + every accepted token) before the loop, so the length test counted, and the stop "
    "strings were looked for in, tokens that come later. Build it inside the loop from the tokens so far",
    "length_not_on_model_token": "the model's own token (the last of the run) was not checked against "
    "max_new_tokens: it is an output token like the accepted drafts",
    "finish_not_on_model_token": "the model's own token (the last of the run) was not checked for EOS / stop "
    "strings like the accepted drafts: it is an output token like them, so an end id it is, or a stop string it "
    "completes, ends the request on it ('stop'), as in a plain decode step",
    "length_first": "'length' was reported for a token that also ends the answer (an EOS or a stop string): "
    "'stop' wins, as in the finish check of exercise 1",
    "stop_per_token": "each token was decoded on its own: a stop string that spans two tokens only shows in "
    "the text of several tokens decoded together (decode a tail of the output with the new tokens)",
    "stop_new_only": "only this step's tokens were decoded: a stop string can begin in the output before "
    "this step and end in it; decode a tail of the whole output, old and new tokens together",
    "stop_in_pieces": "the text was decoded in pieces (the output's tail and the new tokens separately) and the "
    "strings joined: a character whose bytes are split between the pieces (an emoji or a CJK character is several "
    "byte tokens) decodes to replacement characters in each piece, so a stop string across the join is missed. "
    "Decode the ids together: req.decode(a tail of output_ids + the new tokens so far)",
    "stop_window_chars": "the tail you decoded was too short to hold the stop string: its length was counted "
    "in characters, but an emoji or a CJK character is 3 or 4 bytes in UTF-8 and the byte-level tokenizer "
    "can spend a token on each byte. Count the window in bytes (len(s.encode())) plus a margin, as the "
    "engine's check_finish does",
    "stop_window_bytes": "the tail you decoded was exactly len(s.encode()) tokens, with no margin: with ignore_eos "
    "an end id stays in the output and decodes to no text (req.decode skips special tokens), so a stop string with "
    "ignored end ids among its tokens spans more tokens than it has bytes. Add a margin of a few tokens (+4)",
    "stop_window_margin": "the tail you decoded was len(s.encode()) tokens plus a margin too small for three "
    "ignored end ids: with ignore_eos an end id stays in the output and decodes to no text, and up to three of "
    "them may sit among a stop string's tokens (exercise 1's rules), so a stop string of b bytes can span b + 3 "
    "tokens. Make the margin at least 3 tokens (the engine's check_finish uses +4)",
    "stop_window_most_chars": "the tail you decoded was sized by the stop string with the most characters "
    "(max(stop, key=len)), not the one with the most bytes: a CJK or emoji stop string with fewer characters can "
    "have more bytes ('🚀🚀🚀': 3 characters, 12 bytes) and span more tokens than that tail holds",
    "stop_window_shorter": "the tail you decoded was sized by a stop string shorter in bytes than the longest of "
    "the list (the first, the last or the shortest): every stop string of the list must fit in it",
    "stop_all": "the request finished on a stop string only when the tail held every stop string of the list "
    "(all(...) where any(...) is due): one stop string is enough, so a token that completes any one of req.stop "
    "finishes the request ('stop'), whatever the others",
    "kv_no_drafts": "kv_len left out the accepted drafts: their K/V was computed in this pass at their own "
    "positions and is valid, so kv_len counts every token the request now has but its newest, the accepted "
    "drafts included",
    "kv_counts_rejected": "kv_len counted the positions of the rejected drafts: their K/V is dead. kv_len "
    "goes to req.cached_len, and the prefix cache takes that many tokens when the request finishes, so "
    "unverified K/V would be cached under the wrong tokens",
    "kv_counts_newest": "kv_len counted the newest token: its K/V is computed in the next step, so valid "
    "positions stop one before it (counting it would let the prefix cache take a token without its K/V)",
    "kv_no_prompt": "kv_len left out the prompt: positions count from the prompt's first token",
    "kv_uncut": "kv_len counted tokens after the finish: only the tokens the request keeps count",
    "pages_none": "no page was given back: the pages past the request's new length hold only rejected "
    "drafts and go back to the free list now",
    "pages_round_down": "a page that still holds valid positions was given back: keep every page that holds "
    "a position below the new length (round up: pages_for(total, page_size))",
    "pages_round_up": "one page too many was kept: positions 0..total-1 that end exactly at a page's end fill "
    "their last page, and no page past it is needed; round up only a partial page (pages_for(total, page_size)), "
    "never total // page_size + 1",
    "pages_newest": "the page where the newest token's K/V goes in the next step was given back: keep the "
    "pages of positions 0..total-1, the newest token's included",
    "pages_no_prompt": "pages were counted from the start of the output: positions and pages count from the "
    "prompt's first token, so this gave back pages of the prompt (and of the prefix cache)",
    "pages_uncut": "pages were kept for tokens after the finish: only the tokens the request keeps need pages",
    "pages_per_rejected_draft": "pages were counted from the number of rejected drafts: a page can hold "
    "valid positions and rejected ones at once; give back only the pages past the new length",
    "pages_minus_zero": "nothing was to be given back here, yet every page of the row was: req.pages[-drop:] "
    "with drop == 0 is req.pages[-0:], that is req.pages[0:], the whole row (-0 is 0). Slice from the number of "
    "pages kept, req.pages[keep:], which is empty when every page stays",
    "pages_of_four": "pages were counted as 4 positions each: use req.page_size, the engine's page size (another "
    "engine has pages of 1, 8 or 16 positions)",
}
_BONUS = "accept draft j while drafts[j] == targets[j]; then append targets[n]: the model's own token, also when n == k"
_FIRST_MISMATCH = "stop comparing at the first draft that differs: targets[n] replaces it"
_LENGTH = "len(output_ids) + new tokens reaches max_new_tokens: 'length', and nothing after it"
_KV = "prompt_len + len(output_ids) + len(tokens) - 1: every token but the newest"
_PAGES = "keep pages_for(total, page_size) pages, where total = prompt_len + len(output_ids) + len(tokens)"
_KEPT = "total counts only the tokens the request keeps"
HINTS = {  # the hint for each mistake of MISTAKES
    "no_bonus": _BONUS,
    "rejected_draft_kept": _FIRST_MISMATCH,
    "model_token_missing": _BONUS,
    "model_token_next": "after n accepted drafts the model's own token is targets[n]",
    "model_token_last": "the model's own token is targets[n], n the drafts accepted, not targets[-1]",
    "past_mismatch": _FIRST_MISMATCH,
    "bonus_accepted": "accepted counts drafts only, at most len(drafts): the model's own token is never one",
    "finish_on_last_only": "check each new token as if it came alone",
    "no_break": "break out of the loop once a token finishes the request: no token after it is kept",
    "model_token_after_finish": "do not append the model's token after the token that finishes the request: "
    "tokens ends on that token",
    "finishing_token_dropped": "keep the token that finishes the request: append it to tokens, then stop the loop",
    "ignore_eos_ignored": "with ignore_eos only stop strings and max_new_tokens end the request",
    "ignored_eos_dropped": "keep the ignored end id in tokens: ignore_eos only stops it from ending the request, "
    "append it like any other token",
    "ignore_eos_stops_off": "ignore_eos turns off the EOS test only: stop strings still end the request",
    "length_overshoot": _LENGTH,
    "length_one_past": "'length' once len(output_ids) + the new tokens so far >= max_new_tokens (not >): the "
    "max_new_tokens-th token is the last",
    "length_one_early": "'length' once len(output_ids) + the new tokens so far >= max_new_tokens, not max_new_tokens "
    "- 1: the max_new_tokens-th token still comes",
    "whole_run": "check each new token on output_ids + the new tokens up to it, not on the whole run",
    "length_not_on_model_token": "the model's own token counts toward max_new_tokens, like the accepted drafts",
    "finish_not_on_model_token": "the model's own token (the last of the run) was not checked for EOS / stop strings "
    "like the accepted drafts: check it as you check them",
    "length_first": "EOS and stop strings first, then the length",
    "stop_per_token": "decode a tail of output_ids + the new tokens so far, not each token alone",
    "stop_new_only": "decode a tail of output_ids + the new tokens so far, not this step's tokens alone: a stop "
    "string can begin in the output before this step",
    "stop_in_pieces": "the text was decoded in pieces (output tail and new tokens separately) and joined: decode "
    "the ids together, a character may span the join",
    "stop_window_chars": "the decoded tail must be long enough for the longest stop string, whatever its characters",
    "stop_window_bytes": "an ignored end id adds a token but no text: decode len(s.encode()) tokens plus a margin",
    "stop_window_margin": "your margin is too small for three ignored end ids: decode at least len(s.encode()) + 3 "
    "tokens",
    "stop_window_most_chars": "pick the longest stop string by bytes, not by characters: size the tail by "
    "max(len(s.encode()) for s in stop) + 4, not by the bytes of max(stop, key=len)",
    "stop_window_shorter": "the longest stop string of the list sizes the tail: decode max(len(s.encode()) for s in "
    "stop) + 4 tokens, whatever string the list holds first or last",
    "stop_all": "any stop string of the list that the decoded tail holds finishes the request: any(s in text for "
    "s in stop), not all(...)",
    "kv_no_drafts": _KV,
    "kv_counts_rejected": _KV,
    "kv_counts_newest": _KV,
    "kv_no_prompt": "kv_len = prompt_len + len(req.output_ids) + len(tokens) - 1: the prompt's tokens hold K/V too",
    "kv_uncut": _KEPT,
    "pages_none": _PAGES,
    "pages_round_down": _PAGES,
    "pages_round_up": "pages_for(total, page_size) is -(-total // page_size): a page more only for a partial one",
    "pages_newest": "the newest token's K/V is written next step at position total - 1: keep its page",
    "pages_no_prompt": "positions count from the prompt's first token; the first prefix_len // page_size pages "
    "are the cache's",
    "pages_uncut": _KEPT,
    "pages_per_rejected_draft": _PAGES,
    "pages_minus_zero": "req.pages[-0:] is the whole row, not an empty list: take req.pages[keep:]",
    "pages_of_four": _PAGES,
}
ACCEPT_MISTAKES = [
    "no_bonus",
    "rejected_draft_kept",
    "model_token_missing",
    "model_token_next",
    "model_token_last",
    "past_mismatch",
    "bonus_accepted",
]
FINISH_MISTAKES = [
    "finish_on_last_only",
    "finishing_token_dropped",
    "ignore_eos_ignored",
    "ignored_eos_dropped",
    "ignore_eos_stops_off",
    "length_overshoot",
    "length_one_past",
    "length_one_early",
    "length_not_on_model_token",
    "length_first",
    "stop_per_token",
    "stop_new_only",
    "stop_window_chars",
    "stop_window_bytes",
    "stop_window_margin",
    "stop_window_most_chars",
    "stop_window_shorter",
    "stop_all",
    "whole_run",
    "finish_not_on_model_token",
    "stop_in_pieces",
    "no_break",
    "model_token_after_finish",
]
KV_MISTAKES = ["kv_counts_rejected", "kv_counts_newest", "kv_no_prompt", "kv_uncut", "kv_no_drafts"]
PAGE_MISTAKES = [
    "pages_none",
    "pages_round_down",
    "pages_round_up",
    "pages_newest",
    "pages_no_prompt",
    "pages_uncut",
    "pages_per_rejected_draft",
    "pages_of_four",
    "pages_minus_zero",
]
ALL_MISTAKES = ACCEPT_MISTAKES + FINISH_MISTAKES + KV_MISTAKES + PAGE_MISTAKES
