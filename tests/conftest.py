"""Shared test configuration.

Hypothesis runs with a deterministic profile in CI (``CI`` set) and by default, so that a
failure is reproducible from the same checkout; ``HYPOTHESIS_PROFILE=explore`` searches more,
``HYPOTHESIS_PROFILE=quick`` (``make check``) less.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "deterministic",
    derandomize=True,
    database=None,
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile("explore", max_examples=2000, deadline=None)
# make check's everyday loop: the same properties on fewer examples (make test keeps 200)
settings.register_profile("quick", parent=settings.get_profile("deterministic"), max_examples=25)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def spark_session():
    """One local SparkSession for the whole test session (``local[2]``, 2 shuffle partitions,
    UI off, quiet logs): starting the JVM costs tens of seconds. Needs pyspark and Java 17
    (``scripts/setup-test-deps.sh`` installs Java where it is missing); never skipped."""
    from kpass.data.spark_engine import local_session

    session = local_session(2, shuffle_partitions=2)
    yield session
    session.stop()


def _runs_spark(item: pytest.Item) -> bool:
    params = getattr(getattr(item, "callspec", None), "params", {})
    return ("spark_session" in getattr(item, "fixturenames", ()) or "spark" in item.name.lower()
            or any(isinstance(value, str) and value == "spark" for value in params.values()))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test on the Spark engine is slow (a JVM: tens of seconds; ``make check`` measured them as
    the slowest of the rest): ``make test`` runs them, ``make check`` leaves them out."""
    for item in items:
        if _runs_spark(item):
            item.add_marker(pytest.mark.slow)
