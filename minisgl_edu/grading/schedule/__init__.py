"""Exercise 5, scheduling: `base` grades `schedule_next_batch` (score line "schedule"), `lpm` its
stretch `schedule_next_batch_lpm` (score line "schedule_lpm"); `checks` holds the one decision's
checks both use (`decide`: a batch the engine can run, rows and pages that add up)."""
