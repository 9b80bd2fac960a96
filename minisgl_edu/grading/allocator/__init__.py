"""Exercise 4, the page allocator: `base` grades `PageAllocator` (score line "allocator"),
`contiguous` its stretch `ContiguousPageAllocator` (score line "allocator_contiguous"); `scenes`
holds the generated phase of both, and `runs` the stretch's words for a wrong allocate."""
