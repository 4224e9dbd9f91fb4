"""Routes with silent hops are read as the complete route they fit, hop for hop."""

from __future__ import annotations

from measurements.route_match import fits, hop_pattern, read_as


def pattern(*hops: str) -> tuple[frozenset[str], ...]:
    return tuple(frozenset(hop.split("|")) if hop != "*" else frozenset() for hop in hops)


def test_the_pattern_is_the_answering_addresses_per_ttl() -> None:
    hops = [
        {"ttl": 1, "probes": [{"address": "198.18.0.1"}, {"address": "198.18.0.9"}, {"address": None}]},
        {"ttl": 2, "probes": []},
        {"ttl": 3},
        "not a hop",
    ]
    assert hop_pattern(hops) == pattern("198.18.0.1|198.18.0.9", "*", "*", "*")


def test_a_silent_hop_fits_any_address_but_the_others_must_agree() -> None:
    complete = pattern("a", "b|b2", "c")
    assert fits(pattern("a", "*", "c"), complete)
    assert fits(pattern("*", "b2", "c"), complete)
    assert not fits(pattern("a", "*", "x"), complete)
    assert not fits(pattern("a", "*"), complete)  # a route of another length is another route


def test_read_as_the_most_seen_complete_route_that_fits() -> None:
    patterns = {
        "one": pattern("a1", "b", "c"),
        "two": pattern("a2", "b", "c"),
        "first-silent": pattern("*", "b", "c"),
        "elsewhere": pattern("x", "*", "c"),
        "nothing": pattern("*", "*", "*"),
        "empty": (),
    }
    mapping = read_as(patterns, {"one": 3, "two": 9})
    assert mapping == {
        "one": "one",
        "two": "two",
        "first-silent": "two",  # either member could have been it: the more common one is taken
        "elsewhere": "elsewhere",  # fits no complete route: a route of its own
        "nothing": "nothing",
        "empty": "empty",
    }
