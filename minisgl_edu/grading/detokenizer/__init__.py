"""Exercise 3, detokenizer: `base` grades `IncrementalDetokenizer` (score line "detokenizer"),
`include_stop` its stretch `StopKeepingDetokenizer` (score line "detokenizer_include_stop")."""
