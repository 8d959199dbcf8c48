"""The process-local caches forget the least recently used entries beyond their capacity."""

from infra.lru import LRU


def test_lru_keeps_the_most_recently_used() -> None:
    cache: LRU[str, int] = LRU(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "a" is now the most recent
    cache.put("c", 3)
    assert cache.get("b") is None and cache.get("a") == 1 and cache.get("c") == 3
    cache.pop("a")
    assert cache.get("a") is None and len(cache) == 1
