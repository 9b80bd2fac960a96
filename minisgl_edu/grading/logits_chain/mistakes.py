"""Exercise 7's known mistakes: what each one does to a row, and the hint that says how to fix it.

`_chain` in chain.py recomputes a batch with one of these mistakes made on purpose; when the
student's row equals it, the failure shows that mistake's text (MISTAKES) and its hint (HINTS).
Which of them a case tries is said in chain.py (PENALTY_MISTAKES, ..., next to `_chain`).
"""

MISTAKES = {
    "rep_output_only": "the repetition penalty left the prompt's tokens alone: it counts every token seen "
    "so far, in the prompt and in the output",
    "rep_prompt_only": "the repetition penalty left the output's tokens alone: it counts every token seen "
    "so far, in the output as well as the prompt (the tokens the model keeps repeating are the ones it holds back)",
    "rep_waits_for_output": "no repetition penalty was applied while the output is still empty: it counts "
    "the prompt's tokens from the very first step, before any token was generated",
    "rep_subtract": "the repetition penalty was subtracted: it is a factor, not an amount (divide a positive "
    "logit by it, multiply a negative one)",
    "rep_subtract_excess": "the repetition penalty was subtracted: it is a factor, not an amount (divide a "
    "positive logit by it, multiply a negative one)",
    "rep_neg_divided": "a negative logit was divided by the repetition penalty, which moves it toward 0 and "
    "makes the token more likely: divide positive logits, multiply negative ones",
    "rep_neg_kept": "the repetition penalty left the seen tokens' negative logits as they were: it changes every "
    "seen token's logit, whatever its sign, and a negative one is multiplied by it (with a penalty above 1 the "
    "token becomes less likely still, below 1 more likely)",
    "rep_inverted": "the repetition penalty was applied in the wrong direction: positive logits were multiplied "
    "by it and negative ones divided, so a penalty above 1 makes the seen tokens MORE likely (as 1 / penalty would)",
    "rep_per_occurrence": "the repetition penalty was applied once per occurrence: it applies once to every "
    "token that was seen, however often",
    "freq_pres_prompt": "the frequency or presence penalty counted the prompt's tokens: those two count the "
    "output only (the repetition penalty is the one that also counts the prompt)",
    "freq_pres_pooled": "the frequency or presence penalty counted the output tokens of every row of the batch: "
    "a row counts only its own request's req.output_ids, never the tokens other rows generated",
    "freq_pres_added": "the frequency and presence penalties were added to the logit, like the bias: they are "
    "subtracted, so that a positive penalty makes a token the output already holds LESS likely (added, it makes "
    "the model repeat itself more)",
    "freq_once": "the frequency penalty was subtracted once per token, as if it were the presence penalty: "
    "subtract frequency_penalty times the token's count in the output",
    "freq_normalised": "the frequency penalty was scaled by the token's share of the output, count / "
    "len(req.output_ids), not by its count: a token seen 3 times costs 3 * frequency_penalty, however long the "
    "output is",
    "pres_per_occurrence": "the presence penalty was subtracted once per occurrence: subtract it once for "
    "every token that occurs in the output at all",
    "pres_needs_freq": "the presence penalty was left out of a row whose frequency_penalty is 0: presence is a "
    "penalty of its own, subtracted once for every token that occurs in the output, whatever frequency_penalty is",
    "freq_before_rep": "frequency and presence were applied before the repetition penalty: the chain scales "
    "first (repetition), then subtracts (frequency, presence)",
    "bias_replaces": "logit_bias replaced the logit: the bias is added to it",
    "bias_first": "logit_bias was added before the penalties, so the repetition penalty scaled the bias too: "
    "the bias comes after the penalties",
    "bias_on_model_logit": "logit_bias was added to the model's logit, not to the logit the penalties left: a "
    "biased token that was also penalised lost its penalty",
    "mask_not_greedy": "the grammar's mask was not applied to this greedy row: the sampler takes the argmax of "
    "what you return, so it would pick a token the grammar forbids. Mask every row that has a grammar, "
    "greedy ones too",
    "mask_skipped": "the grammar's mask was not applied: every token the grammar forbids must come out as -inf",
    "mask_mirrored": "the grammar's bitmask was read mirrored: tokens it allows came out -inf and tokens it forbids "
    "were kept. In the k-th 32-bit word of the bitmask, token 32 * k + j is bit j counted from the low end",
    "mask_bytes_mirrored": "the grammar's bitmask was read with the bits of each byte mirrored: within every 8 "
    "tokens the allowed ones came out in reverse order (token 8 * b + j read from bit 7 - j of byte b), as numpy's "
    "unpackbits gives them by default, highest bit first. In the k-th 32-bit word of the bitmask, token 32 * k + j "
    "is bit j counted from the low end",
    "mask_transposed": "the grammar's bitmask was unpacked across its words in the wrong order: token t was read "
    "from bit t // words of word t % words, so on a vocabulary of more than 32 tokens (several 32-bit words) the "
    "mask lands on other tokens. Bit j of word k stands for token 32 * k + j",
    "mask_row_zero": "this row was masked with row 0 of the batch's bitmask, not its own row: it got request 0's "
    "mask (every token allowed where request 0 has no grammar). fill_mask(bitmask, i) writes the mask of "
    "request i into row i of the bitmask, so that is the row to unpack for it",
    "min_p_absolute": "min_p dropped the tokens whose probability is below min_p itself: the threshold is "
    "relative, min_p times the probability of the most likely token",
    "min_p_no_temperature": "min_p used the probabilities at temperature 1: use softmax(logits / temperature), "
    "the distribution the sampler draws from",
    "min_p_first": "min_p was decided on the logits you were given, before the other links: it is the last "
    "link, on the logits after the penalties, the bias and the mask",
    "min_p_before_mask": "min_p was decided before the grammar mask: its threshold came from a token the "
    "grammar forbids, so tokens it allows were dropped; min_p is the last link, after the mask",
    "min_p_top_first": "min_p's threshold came from the top probability of the logits you were given: after "
    "the penalties and the bias the most likely token can be another one; take max(p) of the row after the "
    "other links, the distribution the sampler draws from",
    "min_p_batch_top": "min_p's threshold came from the top probability of the whole batch: each row has its "
    "own threshold, min_p times the probability of that row's most likely token, whatever the other rows hold",
    "min_p_kept_scaled": "the tokens min_p kept came back divided by the temperature: min_p decides on the "
    "probabilities at the row's temperature, but the kept tokens keep their logits (the sampler divides by the "
    "temperature itself, so it would draw at temperature squared)",
    "min_p_max_unscaled": "min_p's cut compared the logits divided by the temperature with the top logit NOT "
    "divided by it (logit / temperature < max(logit) + ln(min_p)): the two sides are on different scales, so at a "
    "temperature below 1 too many tokens stay and above 1 too many go, the top one too",
    "min_p_log10": "min_p's threshold on the logits used log10(min_p), not ln(min_p): p >= min_p * max(p) becomes "
    "logit / temperature >= max + ln(min_p) with the natural log, the inverse of the softmax's exp; log10(min_p) is "
    "2.3 times closer to 0, so the cut sits too near the top and tokens above min_p * max(p) were dropped",
    "temperature_in_chain": "this row came back divided by its temperature: the sampler applies the temperature "
    "(then top-k and top-p) after your function returns, so the row would be divided twice",
    "min_p_boundary": "a token whose probability equals min_p times the top probability was dropped: only "
    "the tokens strictly below that threshold go (keep p >= min_p * max(p))",
    "min_p_by_temperature": "min_p was applied to a row that has a temperature but is greedy all the same "
    "(top_k 1: sampling_params.is_greedy): the sampler takes its argmax, so min_p leaves it alone. Decide "
    "greedy rows as the sampler does, with is_greedy, not with the temperature",
}
REPETITION = (
    "once per distinct token id in req.input_ids + req.output_ids: logit / p when positive, logit * p otherwise"
)
FREQUENCY = "count req.output_ids only: logit - count * frequency_penalty - (count > 0) * presence_penalty"
MASK = "req.grammar.fill_mask(bitmask, row), then -inf for every forbidden token, whatever the temperature"
OWN_VALUES = "row i uses reqs[i].sampling_params and nothing else"
MASK_IN_PLACE = (
    "only the grammar's mask changed the tensor you were given: the mask must go on a copy too. Copy "
    "(logits.clone()) in every batch that any link touches, one where only grammars apply included"
)
MIN_P_SHORTCUT = (
    "the whole batch came back as the model gave it, yet min_p applies to a row that samples: min_p is a link "
    "too, so the shortcut that returns the logits untouched when no penalty, bias or grammar applies must look "
    "at min_p as well (a row that samples with min_p > 0 needs the chain)"
)
GREEDY_BY_IS_GREEDY = "min_p only on rows that sample (not sampling_params.is_greedy), whatever their temperature"
HINTS = {  # the hint for each mistake of MISTAKES
    "rep_output_only": REPETITION,
    "rep_prompt_only": "the tokens generated so far count too: the repetition penalty scales every token of "
    "req.output_ids as well as of req.input_ids (once per token, however often)",
    "rep_waits_for_output": "the repetition penalty applies from the very first step: while req.output_ids is "
    "still [], it already scales every token of req.input_ids",
    "rep_subtract": REPETITION,
    "rep_subtract_excess": REPETITION,
    "rep_neg_divided": REPETITION,
    "rep_neg_kept": "negative logits are penalised too: a seen token's logit is multiplied by the penalty when "
    "it is not positive (logit * p) and divided when positive, never left as it is",
    "rep_inverted": "the repetition penalty is applied the other way round: divide a positive logit by it and "
    "multiply a negative one, so that a penalty above 1 moves every seen token's logit down",
    "rep_per_occurrence": "once per distinct token id, however often it occurs: scale each id of "
    "set(req.input_ids + req.output_ids) once, not every entry of the list",
    "freq_pres_prompt": FREQUENCY,
    "freq_pres_added": "the sign of the frequency and presence penalties: subtract them (logit - count * "
    "frequency_penalty - (count > 0) * presence_penalty); only logit_bias is added",
    "freq_once": FREQUENCY,
    "freq_pres_pooled": "count each row's own req.output_ids, not the outputs of the other rows of the batch",
    "freq_normalised": "subtract frequency_penalty times the token's raw count in req.output_ids, not count / "
    "len(req.output_ids)",
    "pres_per_occurrence": FREQUENCY,
    "pres_needs_freq": "test presence_penalty on its own: it applies when frequency_penalty is 0 too, so not "
    "inside `if frequency_penalty != 0`",
    "freq_before_rep": "the repetition penalty scales the model's logit; then subtract",
    "bias_replaces": "logit += bias for every (token, bias) in sampling_params.logit_bias",
    "bias_first": "the order is repetition, frequency and presence, logit_bias, grammar mask",
    "bias_on_model_logit": "add the bias to the row the penalties left (row[token] += bias), not to the "
    "model's logits[i, token]: that undoes the penalties on a biased token",
    "mask_not_greedy": MASK,
    "mask_skipped": MASK,
    "mask_mirrored": "token 32 * k + j is allowed when (bitmask[k] >> j) & 1: bit 0 is the lowest bit, so shift "
    "by j, not by 31 - j",
    "mask_bytes_mirrored": "bit j of 32-bit word k is token 32k + j, lowest bit first, in every byte too: "
    "np.unpackbits(..., bitorder='little') on the bytes, or (bitmask[k] >> j) & 1",
    "mask_transposed": "unpack the bitmask as [words, 32], bits[k, j] = (bitmask[k] >> j) & 1, then flatten: "
    "word k's bits stay together as tokens 32k..32k+31 (bitmask[:, None] >> arange(32), not "
    "bitmask[None, :] >> arange(32)[:, None])",
    "mask_row_zero": "unpack row i of the bitmask for request i, the row its fill_mask(bitmask, i) wrote "
    "(bitmask[i], not bitmask[0])",
    "min_p_absolute": "keep a token when p >= min_p * max(p); -inf for the others",
    "min_p_no_temperature": "p = softmax(logits / temperature), the distribution the sampler draws from",
    "min_p_first": "min_p is the last link: decide on the logits after the bias and the mask",
    "min_p_before_mask": "min_p comes after the grammar mask: p and max(p) over the tokens the grammar allows",
    "min_p_top_first": "p and max(p) both from the row after the penalties, the bias and the mask",
    "min_p_batch_top": "the threshold is min_p times this row's top probability, not the batch's (over a "
    "[rows, vocab] tensor: probs.max(dim=-1, keepdim=True), not probs.max())",
    "min_p_boundary": "keep p >= min_p * max(p): a token exactly at the threshold stays",
    "min_p_kept_scaled": "divide a copy by the temperature to get p (scaled = row / temperature), never the row "
    "itself (row /= temperature): the logits you return are the chain's, unscaled",
    "min_p_by_temperature": GREEDY_BY_IS_GREEDY,
    "min_p_max_unscaled": "both sides at the row's temperature: scaled = row / temperature, then drop the tokens "
    "with scaled < scaled.max() + math.log(min_p) (the max of the scaled row, not of the row)",
    "min_p_log10": "on the logits the cut is max(logit / temperature) + math.log(min_p), the natural log, not math.log10",
    "temperature_in_chain": "temperature is the sampler's, not a link of the chain: return the logits after the "
    "penalties, the bias and the mask, undivided",
}
