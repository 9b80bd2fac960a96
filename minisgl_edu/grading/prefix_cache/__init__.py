"""Exercise 6, the radix prefix cache: `base` grades `RadixCache` (score line "prefix_cache"),
`lfu` its stretch `LFURadixCache` (score line "prefix_cache_lfu"); `tree` holds what both share
(small trees read through the public methods, the cache manager with few pages, the engine run)."""
