"""Boolean tomography over paths' agents and routers (alerts.localise)."""

from __future__ import annotations

from alerts.localise import MAX_SUSPECTS, Suspect, cleared, suspects


def path(*elements: str) -> frozenset[str]:
    return frozenset(elements)


def test_the_shared_hop_no_healthy_path_crosses_explains_the_degraded_paths() -> None:
    degraded = {
        "a1->b1": path("agent a1", "agent b1", "hop 10.0.0.1", "hop 10.0.9.9"),
        "a2->b2": path("agent a2", "agent b2", "hop 10.0.0.2", "hop 10.0.9.9"),
        "a3->b3": path("agent a3", "agent b3", "hop 10.0.9.9"),
    }
    healthy = {"a1->c": path("agent a1", "agent c", "hop 10.0.0.1"), "a4->c": path("agent a4", "agent c")}
    found = suspects(degraded, healthy)
    assert found == [Suspect("hop 10.0.9.9", ("a1->b1", "a2->b2", "a3->b3"), ())]
    assert found[0].explains
    assert found[0].sentence() == "hop 10.0.9.9 is on all 3 degraded paths and on no path that measured normally"


def test_an_agent_whose_other_paths_measured_normally_is_named_with_that_evidence() -> None:
    degraded = {"ta->tb": path("agent ta", "agent tb"), "ta->tc": path("agent ta", "agent tc")}
    healthy = {"ta->td": path("agent ta", "agent td"), "te->ta": path("agent te", "agent ta")}
    (found,) = suspects(degraded, healthy)
    assert not found.explains and found.healthy == ("ta->td", "te->ta")
    assert found.sentence() == (
        "agent ta is on both degraded paths, but also on 2 that measured normally (ta->td, te->ta)"
    )
    assert cleared("agent ta", healthy.values()) and not cleared("agent tb", healthy.values())


def test_a_hop_is_named_before_an_agent_that_explains_as_well() -> None:
    degraded = {"x->y": path("agent x", "agent y", "hop 1.1.1.1"), "x->z": path("agent x", "agent z", "hop 1.1.1.1")}
    found = suspects(degraded, {})
    assert [s.element for s in found] == ["hop 1.1.1.1", "agent x"]


def test_one_path_or_nothing_shared_names_nothing() -> None:
    assert suspects({"a->b": path("agent a", "agent b")}, {}) == []
    assert suspects({"a->b": path("agent a", "agent b"), "c->d": path("agent c", "agent d")}, {}) == []
    assert suspects({}, {}) == []


def test_at_most_a_few_suspects_and_the_longest_list_is_cut_in_the_sentence() -> None:
    shared = [f"hop 10.0.0.{i}" for i in range(6)]
    degraded = {"a->b": path("agent a", "agent b", *shared), "c->d": path("agent c", "agent d", *shared)}
    healthy = {f"h{i}": path(shared[0]) for i in range(5)}
    found = suspects(degraded, healthy)
    assert len(found) == MAX_SUSPECTS and [s.element for s in found] == shared[1:4]
    crowded = Suspect("hop 10.0.0.0", ("a->b", "c->d"), tuple(sorted(healthy)))
    assert crowded.sentence().endswith("also on 5 that measured normally (h0, h1, h2 and 2 more)")
