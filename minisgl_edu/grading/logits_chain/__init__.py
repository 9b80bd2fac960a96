"""Exercise 7, the logits chain: `base` grades `process_logits` (score line "logits_chain"),
`min_p` its stretch, the same function with a min_p link (score line "logits_chain_min_p");
`chain` holds what both share (the hand-made batches, the chain with known mistakes)."""
