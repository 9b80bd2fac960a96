"""Exercise 2, abort: `base` grades `abort_request` (score line "abort"), `to_cache` its stretch
`abort_request_to_cache` (score line "abort_to_cache"); `checks` holds what both assert after an
abort (the request gone, the detokenizer told, every page and row where it belongs), `cache_checks`
what the stretch asserts about the prefix cache after one, `release_seen` what `cache.release()`
read of the request against the request as it was (a field cleared before release() read it),
`probes` the answer re-run on small scenes of its own to name a mistake, `scenes` the generated
phase."""
