"""The engines' bounded memo: never more than its limit, starting afresh when full."""

from engines.cache import remember


def test_a_full_cache_starts_afresh_with_the_new_entry() -> None:
    cache: dict[int, str] = {}
    for k in range(3):
        assert remember(cache, 3, k, str(k)) == str(k)
    assert cache == {0: "0", 1: "1", 2: "2"}
    assert remember(cache, 3, 3, "3") == "3"
    assert cache == {3: "3"}


def test_a_known_key_is_stored_again_until_the_cache_is_full() -> None:
    cache = {1: "a"}
    remember(cache, 2, 1, "b")
    assert cache == {1: "b"}
