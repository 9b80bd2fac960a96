"""Exercise 1, finishing: `base` grades `check_finish` (score line "finish"), `min_tokens` its
stretch `check_finish_min_tokens` (score line "finish_min_tokens")."""
