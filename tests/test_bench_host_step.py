"""bench/host_step: the stand-in forward pass leaves a scheduler that decodes every request each
step, to the end, with every page back (the benchmark itself asserts the batch shape)."""

from __future__ import annotations

from minisgl_edu.bench import host_step


def test_host_step_runs_decode_batches_of_every_request(capsys):
    host_step.measure(batch=5, steps=3, profile=False)
    assert "decode batch 5, 3 steps" in capsys.readouterr().out


def test_decoding_scheduler_finishes_and_returns_every_page():
    s = host_step.decoding_scheduler(batch=3, steps=4)
    assert len(s.running) == 3 and not s.waiting
    s.run_until_idle()
    assert not s.reqs and s.cache.num_available == s.cache.num_pages
    s.cache.check()
