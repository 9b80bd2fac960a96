"""bench/speculative.py's table: each server with drafts against the same server without."""

from __future__ import annotations

from minisgl_edu.bench.speculative import SpecRow, format_table, parse_args, speedups


def row(server: str, workload: str, tok_s: float) -> SpecRow:
    return SpecRow(server, workload, 8, 0, 800, tok_s, 10.0)


def test_speedups_compare_each_server_with_itself_without_drafts():
    rows = [
        row("minisgl_edu", "edits", 50.0),
        row("minisgl_edu ngram", "edits", 100.0),
        row("minisgl_edu", "questions", 40.0),
        row("minisgl_edu ngram", "questions", 38.0),
        row("llama.cpp", "edits", 80.0),
        row("llama.cpp ngram-simple", "edits", 120.0),
    ]
    assert speedups(rows) == {
        ("minisgl_edu ngram", "edits"): 2.0,
        ("minisgl_edu ngram", "questions"): 0.95,
        ("llama.cpp ngram-simple", "edits"): 1.5,
    }
    table = format_table(rows).splitlines()
    assert table[0].startswith("| server | workload |") and len(table) == 2 + len(rows)
    assert table[3] == "| minisgl_edu ngram | edits | 8 | 800 | 100.0 | 10.0 | 2.00 |"
    assert table[2].endswith("| 10.0 |  |")  # no speed-up for a server without drafts


def test_defaults_are_one_stream_of_eight_requests_with_llama_cpp_drafts_like_ours():
    args = parse_args([])
    assert (args.num_prompts, args.output_len, args.llama_server) == (8, 256, None)
    assert args.llama_spec_args[:2] == ["--spec-type", "ngram-simple"]
