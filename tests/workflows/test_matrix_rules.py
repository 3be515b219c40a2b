"""The runner's matrix expansion against the examples of GitHub's documentation, "Using a matrix for your jobs"
(docs.github.com/en/actions/using-jobs/using-a-matrix-for-your-jobs, section by section as named in each test).
The expected legs are the ones that page lists for each example, in its order; none comes from the runner.
"""

from __future__ import annotations

from typing import Any

from tests.workflows.runner import expand_matrix


def _split(matrix: dict[str, Any]) -> tuple[dict[str, Any], list[Any], list[Any]]:
    axes = {k: v for k, v in matrix.items() if k not in ("include", "exclude")}
    return axes, matrix.get("include", []), matrix.get("exclude", [])


def test_product_order_first_variable_first() -> None:
    """'Using a matrix strategy': version [10, 12, 14] x os [ubuntu-latest, windows-latest] runs six jobs, created
    in the order {version: 10, os: ubuntu-latest}, {version: 10, os: windows-latest}, {version: 12, ...}, ..."""
    legs = expand_matrix(*_split({"version": [10, 12, 14], "os": ["ubuntu-latest", "windows-latest"]}))
    assert legs == [{"version": v, "os": o} for v in (10, 12, 14) for o in ("ubuntu-latest", "windows-latest")]


def test_include_expands_and_adds_fruit_animal_example() -> None:
    """'Expanding or adding matrix configurations': the fruit/animal matrix with five include entries results in
    six jobs, listed there in this order."""
    matrix = {"fruit": ["apple", "pear"], "animal": ["cat", "dog"],
              "include": [{"color": "green"}, {"color": "pink", "animal": "cat"}, {"fruit": "apple", "shape": "circle"},
                          {"fruit": "banana"}, {"fruit": "banana", "animal": "cat"}]}
    assert expand_matrix(*_split(matrix)) == [
        {"fruit": "apple", "animal": "cat", "color": "pink", "shape": "circle"},
        {"fruit": "apple", "animal": "dog", "color": "green", "shape": "circle"},
        {"fruit": "pear", "animal": "cat", "color": "pink"},
        {"fruit": "pear", "animal": "dog", "color": "green"},
        {"fruit": "banana"},
        {"fruit": "banana", "animal": "cat"},
    ]


def test_include_extends_the_matching_combination_only() -> None:
    """'Example: Expanding configurations': os [windows-latest, ubuntu-latest] x node [14, 16] with an include
    {os: windows-latest, node: 16, npm: 6}: four jobs, the windows-latest/16 one also gets npm 6."""
    matrix = {"os": ["windows-latest", "ubuntu-latest"], "node": [14, 16],
              "include": [{"os": "windows-latest", "node": 16, "npm": 6}]}
    assert expand_matrix(*_split(matrix)) == [
        {"os": "windows-latest", "node": 14}, {"os": "windows-latest", "node": 16, "npm": 6},
        {"os": "ubuntu-latest", "node": 14}, {"os": "ubuntu-latest", "node": 16}]


def test_include_only_matrix_runs_one_job_per_entry() -> None:
    """'Example: Adding configurations' / include only: "If you don't specify any matrix variables, all
    configurations under include will run" -- the site/datacenter example runs two jobs. This is the form
    `xzbuild matrix github` writes; the runner used to merge every entry after the first into the first leg."""
    include = [{"site": "production", "datacenter": "site-a"}, {"site": "staging", "datacenter": "site-b"}]
    assert expand_matrix({}, include, []) == include
    shards = [{"job": f"idf6.0.2-{n}of3", "variants": f"v{n}"} for n in (1, 2, 3)]
    assert expand_matrix({}, shards, []) == shards


def test_exclude_partial_match_nine_jobs() -> None:
    """'Excluding matrix configurations': os [macos-latest, windows-latest] x version [12, 14, 16] x environment
    [staging, production], excluding {macos-latest, 12, production} and {windows-latest, 16}: nine jobs (an
    excluded configuration only has to be a partial match)."""
    matrix = {"os": ["macos-latest", "windows-latest"], "version": [12, 14, 16],
              "environment": ["staging", "production"],
              "exclude": [{"os": "macos-latest", "version": 12, "environment": "production"},
                          {"os": "windows-latest", "version": 16}]}
    legs = expand_matrix(*_split(matrix))
    assert len(legs) == 9
    assert {"os": "macos-latest", "version": 12, "environment": "production"} not in legs
    assert not [leg for leg in legs if leg["os"] == "windows-latest" and leg["version"] == 16]


def test_include_after_exclude_adds_back() -> None:
    """'Excluding matrix configurations': "All include combinations are processed after exclude. This allows you
    to use include to add back combinations that were previously excluded." """
    matrix = {"os": ["a", "b"], "exclude": [{"os": "b"}], "include": [{"os": "b"}]}
    assert expand_matrix(*_split(matrix)) == [{"os": "a"}, {"os": "b"}]
