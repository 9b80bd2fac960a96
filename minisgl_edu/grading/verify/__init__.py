"""Exercise 8, the verify step of speculative decoding (score line "verify"): `base` holds the
unit cases and the score line, `engine` the cases on the real scheduler, `step` what both share
(hand-made requests, the step with known mistakes, the explanation of a wrong result)."""
