"""The KV cache: paged pool, page allocator, page table, and the prefix caches."""

from minisgl_edu.kvcache.allocator import OutOfPages, PageAllocator
from minisgl_edu.kvcache.manager import CacheManager, PageMapSnapshot, pages_for
from minisgl_edu.kvcache.naive_cache import NaiveCache
from minisgl_edu.kvcache.page_table import PageTable
from minisgl_edu.kvcache.pool import KVPool
from minisgl_edu.kvcache.radix_cache import RadixCache

__all__ = [
    "CacheManager",
    "KVPool",
    "NaiveCache",
    "OutOfPages",
    "PageAllocator",
    "PageMapSnapshot",
    "PageTable",
    "RadixCache",
    "pages_for",
]
