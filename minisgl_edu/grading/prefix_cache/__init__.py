"""Exercise 6, the radix prefix cache: `base` grades `RadixCache` (score line "prefix_cache"),
`lfu` its stretch `LFURadixCache` (score line "prefix_cache_lfu", against `lfu_reference`); `tree`
holds what both hand-written phases share (small trees, the cache manager, the engine run) and
`scenes` the generated phase of both."""
