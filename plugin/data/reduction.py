r"""The boundary between readers and metrics: per-problem sufficient statistics, and the one
reduction (SQL) that produces them from sample rows.

Every kpass metric and interval is a function of per-problem statistics, never of the order or
the identity of individual samples:

=========================  ==================================================================
statistic                  used by
=========================  ==================================================================
``n_samples``, ``n_correct``  pass@k, pass^k, G-Pass@k, mG-Pass@k (Chen et al. 2021 Eq. 1 and
                           its hypergeometric relatives are functions of ``(n, c)``)
``n_finished``             fin@k (a function of ``(n, f)``)
answer-class counts        cons@k: ``class_counts[:, 0]`` gold samples, ``[:, 1:]`` the wrong
                           answer classes (largest first), ``n_invalid`` samples without answer;
                           once with the answers of unfinished generations abstaining (the
                           default) and once with them voting (``cons@k[cut=vote]``)
CoT counts ``d_rule``      CoT-Pass@k (``rule`` = any, majority, all): a function of ``(n, d)``
``(c_B, f_B)`` per budget  pass@k(B), fin@k(B) (docs/spec.md section 6)
output-token sums          compute per problem (``kpass frontier``): ``sum t``, ``sum min(t, B)``
field codes                ``--by`` groups and the ``--cluster-by`` cluster of each problem
=========================  ==================================================================

An interval is a function of the per-problem values (and the clusters), so it is exact after the
reduction: the reduction loses nothing any estimator or interval uses. :class:`Needs` says which
statistics a command asks for; :class:`ProblemStatistics` holds them, one row per problem, and
stands in for a :class:`~kpass.SampleTable` in :func:`kpass.compute_report` and
:func:`kpass.compute_comparison`.

The reduction is written once, as SQL text generated here (:func:`typed_sql`,
:func:`reduction_sql`), and run by an engine (DuckDB, Apache Spark); the numpy path
(:func:`kpass.data.problems.statistics_from_table`) computes the same statistics from an in-memory table.
Validation follows one rule: *the SQL detects, numpy formats*. Each rule of the sample table
(types, nulls, ``correct`` implies ``finished``, duplicates, gaps in ``sample_index``, answer
consistency, budget placement, fields constant within a problem) is a SQL predicate here; the
engine counts its violations, and :func:`raise_violation` replays the offending rows through the
numpy readers and checks, which format the same error text as ever (file, line, field). A rule
added to the numpy readers (kpass.table) joins the engines' error text by itself; its SQL
predicate goes into :func:`typed_sql` (per row) or :func:`reduction_sql` (per problem).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from kpass.errors import DataError, UsageError

if TYPE_CHECKING:  # pragma: no cover
    from kpass.host.specs import MetricSpec
    from kpass.data.table import SampleTable

__all__ = ["COT_RULES", "DEEP_JSON_BRACKETS", "JUDGE_COLUMN", "Dialect", "Needs", "NothingLocated", "NumpyFallback", "ProblemStatistics", "Violation", "raise_violation", "reduction_sql", "typed_sql", "with_partition"]

COT_RULES = ("any", "majority", "all")
#: The task metric that judged each sample (lm-eval's ``exact_match``), set by readers: every
#: reduction carries it per problem (:attr:`Needs.carried_fields`), shown and never checked.
JUDGE_COLUMN = "judge"
#: Columns whose values are integers >= 0 (below 2**63: larger values are a data error).
INTEGER_COLUMNS = ("sample_index", "output_tokens", "answer_token")
BOOLEAN_COLUMNS = ("correct", "finished")
#: Kinds of a raw value, as every engine labels them: JSON types, Parquet/Spark column types,
#: ``string`` for CSV cells, ``text`` where the engine cannot tell a JSON string from a number.
KINDS = ("null", "bool", "int", "float", "string", "text", "other")
_INT64_BOUND = 9.223372036854775807e18  # 2**63
#: The largest integer a sample-table column may hold (the numpy readers' rule,
#: :data:`kpass.data.columns.MAX_INTEGER`: exact in a float64).
_MAX_INTEGER = 2**53 - 1
#: A JSON line with more opening brackets than this may nest more deeply than Python's parser
#: goes; the engines hand such input to the numpy readers, which say exactly what is wrong.
DEEP_JSON_BRACKETS = 500
#: None as a 0-d object array, for ``np.equal`` and ``np.where`` (their typed signatures take
#: arrays; it broadcasts exactly as a bare None).
_NULL = np.array(None, dtype=object)


class NumpyFallback(Exception):
    """The engine met input whose every rule only the numpy readers can check (a JSON line with
    duplicate keys, or nested very deeply): the caller reduces it with numpy instead."""


# ----------------------------------------------------------------------------------------------
# what a command needs


@dataclasses.dataclass(frozen=True)
class Needs:
    """The per-problem statistics a computation asks for (beyond ``n_samples``, ``n_correct``).

    Attributes
    ----------
    fields : tuple of str
        Categorical fields each problem needs one value of (``--by`` and ``--cluster-by``).
    finished : bool
        ``n_finished`` (fin@k without a budget).
    answer_classes : bool
        Answer-class counts (cons@k).
    cot : bool
        CoT counts for every rule (CoT-Pass@k).
    budgets : tuple of int
        Output-token budgets ``B`` for ``(c_B, f_B)``.
    as_run : bool
        ``(c, f)`` as run (the budget ``None`` of :func:`kpass.metrics.budget_counts`: finished
        when ``answer_token`` is known or ``finished`` is true), with its placement rule.
    tokens : bool
        Output-token sums per problem: ``sum t``, the samples without ``output_tokens``, and
        ``sum min(t, B)`` for every budget (compute at equal cost, ``kpass frontier``).
    """

    fields: tuple[str, ...] = ()
    finished: bool = False
    answer_classes: bool = False
    cot: bool = False
    budgets: tuple[int, ...] = ()
    as_run: bool = False
    tokens: bool = False

    @property
    def carried_fields(self) -> tuple[str, ...]:
        """The categorical fields a reduction carries per problem: :attr:`fields`, then the judge
        (:data:`JUDGE_COLUMN`; all null where the input has none), which tables only show."""
        return tuple(dict.fromkeys((*self.fields, JUDGE_COLUMN)))

    @classmethod
    def for_specs(cls, specs: Sequence["MetricSpec"], *, by: Sequence[str] = (),
                  cluster_by: str | None = None) -> "Needs":
        """What ``specs`` grouped by ``by`` (clustered by ``cluster_by``) need.

        Raises
        ------
        UsageError
            A metric family that reads sample-level columns (no ``statistics`` declared): it
            can only run on the numpy engine.
        """
        fields = [field for field in (*by, *(() if cluster_by is None else (cluster_by,)))
                  if field not in ("model", "task", "problem_id")]
        wanted: set[str] = set()
        budgets = set()
        finished = False
        for spec in specs:
            declared = getattr(spec.implementation, "statistics", None)
            if declared is None:
                raise UsageError(
                    f"{spec.name}: its metric family ({type(spec.implementation).__name__}) reads sample-level "
                    "columns and declares no per-problem `statistics`, so it runs only on the numpy engine; "
                    "use --engine numpy (Python: engine='numpy')")
            wanted.update(declared)
            if spec.budget is not None:
                budgets.add(int(spec.budget))
            elif "finished" in declared:
                finished = True
        return cls(fields=tuple(dict.fromkeys(fields)), finished=finished,
                   answer_classes="answer_classes" in wanted, cot="cot" in wanted,
                   budgets=tuple(sorted(budgets)))


# ----------------------------------------------------------------------------------------------
# SQL (one text for DuckDB and Spark; the few spelling differences live in Dialect)


@dataclasses.dataclass(frozen=True)
class Dialect:
    """How an engine spells what standard SQL leaves open."""

    name: str
    quote: Callable[[str], str]
    full_match: Callable[[str, str], str]
    lambda_: Callable[[str, str], str]
    list_length: str

    def ident(self, name: str) -> str:
        return self.quote(name)


DUCKDB = Dialect("duckdb", lambda name: '"' + name.replace('"', '""') + '"',
                 lambda expr, pattern: f"regexp_full_match({expr}, '{pattern}')",
                 lambda var, body: f"lambda {var}: {body}", "len")
SPARK = Dialect("spark", lambda name: "`" + name.replace("`", "``") + "`",
                lambda expr, pattern: f"({expr} RLIKE '^{pattern}$')",
                lambda var, body: f"{var} -> {body}", "size")


def with_partition(text: str, kind: str, value: str | None) -> tuple[str, str, str]:
    """``(text, kind, conflict)`` SQL, for DuckDB and Spark alike, of a raw column that may be a
    hive partition key: ``value`` (an SQL expression; None when the column is no partition key)
    fills the file's own value where it is null, and ``conflict`` is true on a row whose own value
    is not null and differs from it (the numpy readers refuse that row: docs/bad-input.md)."""
    if value is None:
        return text, kind, "FALSE"
    return (f"CASE WHEN {kind} = 'null' THEN {value} ELSE {text} END",
            f"CASE WHEN {kind} = 'null' THEN 'string' ELSE {kind} END",
            f"({kind} <> 'null' AND {text} IS DISTINCT FROM {value})")


class RawColumns:
    """The columns every engine's raw relation has, in one order (so that files of every format
    can be stacked with UNION ALL): ``kpass_order`` (rows in input order), text and kind of every
    scalar column and field asked for, the verdict list, and per-row presence flags."""

    def __init__(self, needs: Needs) -> None:
        from kpass.data.columns import REQUIRED_COLUMNS, SCHEMA_COLUMNS

        scalar = [name for name in SCHEMA_COLUMNS if name not in ("metadata", "cot_verdicts")]
        optional = [name for name in SCHEMA_COLUMNS if name not in REQUIRED_COLUMNS]
        self.columns = scalar + [f for f in needs.carried_fields if f not in scalar]
        #: columns whose presence in the input is counted (optional schema columns, fields asked for)
        self.presence = optional + [f for f in needs.carried_fields if f not in SCHEMA_COLUMNS]
        self.flags = [f"has__{number}" for number, _ in enumerate(self.presence)] + ["unknown_keys", "numpy_fallback"]
        self.names = ["kpass_order"] + [name for column in self.columns for name in (column, column + "__kind")] + [
            "cot_verdicts__list", "cot_verdicts__kind"] + self.flags

    def has(self, present: Sequence[str]) -> list[str]:
        """Presence flags of a file whose columns are known up front (CSV header, Parquet schema)."""
        return [f"{'TRUE' if c in present else 'FALSE'} AS has__{number}" for number, c in enumerate(self.presence)]


def _text(name: str, d: Dialect) -> tuple[str, str]:
    return d.ident(name), d.ident(name + "__kind")


def _bool_sql(name: str, nullable: bool, d: Dialect, native: bool = False) -> tuple[str, str]:
    """``(value, bad)`` SQL of a boolean column: true/false, 1/0, the strings kpass.table accepts.

    ``native``: the raw column is a BOOLEAN (its kind ``bool`` or ``null``), so the rule is its
    ``bool`` and ``null`` branches, without the text."""
    t, k = _text(name, d)
    if native:
        return t, ("FALSE" if nullable else f"{t} IS NULL")
    s = f"LOWER(TRIM({t}))"
    number = f"TRY_CAST({t} AS DOUBLE)"
    null_text = f"({k} IN ('string', 'text') AND {s} IN ('', 'null', 'none'))"
    value = (f"CASE WHEN {k} = 'bool' THEN {s} = 'true' WHEN {k} = 'int' THEN {s} = '1' "
             f"WHEN {k} = 'float' THEN {number} = 1 "
             f"WHEN {k} IN ('string', 'text') AND {s} IN ('true', '1', 't') THEN TRUE "
             f"WHEN {k} IN ('string', 'text') AND {s} IN ('false', '0', 'f') THEN FALSE "
             f"WHEN {k} = 'text' AND {number} IN (0, 1) THEN {number} = 1 ELSE NULL END")
    ok = (f"({k} = 'bool' OR ({k} = 'int' AND {s} IN ('0', '1')) OR ({k} = 'float' AND {number} IN (0, 1)) "
          f"OR ({k} IN ('string', 'text') AND {s} IN ('true', 'false', '1', '0', 't', 'f')) "
          f"OR ({k} = 'text' AND {number} IN (0, 1))"
          + (f" OR {k} = 'null' OR {null_text})" if nullable else ")"))
    return value, f"NOT {ok}"


def _int_sql(name: str, nullable: bool, d: Dialect, native: bool = False) -> tuple[str, str]:
    """``(value, bad)`` SQL of an integer column: 0 .. 2**53 - 1, integral floats allowed.

    ``native``: the raw column is a BIGINT (its kind ``int`` or ``null``): the ``int`` and
    ``null`` branches, without the text."""
    t, k = _text(name, d)
    if native:
        in_range = f"{t} BETWEEN 0 AND {_MAX_INTEGER}"
        return t, (f"({t} IS NOT NULL AND NOT ({in_range}))" if nullable else f"NOT ({in_range})")
    s = f"TRIM({t})"
    number = f"TRY_CAST({t} AS DOUBLE)"
    integral_float = f"({number} >= 0 AND {number} <= {_MAX_INTEGER} AND {number} % 1 = 0)"
    digits = (f"({d.full_match(s, '[0-9]+')} AND LENGTH(TRIM(LEADING '0' FROM {s})) <= 18 "
              f"AND TRY_CAST({s} AS BIGINT) <= {_MAX_INTEGER})")
    value = (f"CASE WHEN {k} = 'int' THEN TRY_CAST({t} AS BIGINT) "
             f"WHEN {k} = 'float' AND {integral_float} THEN CAST({number} AS BIGINT) "
             f"WHEN {k} IN ('string', 'text') AND {digits} THEN TRY_CAST({s} AS BIGINT) "
             f"WHEN {k} = 'text' AND {integral_float} THEN CAST({number} AS BIGINT) ELSE NULL END")
    ok = (f"(({k} = 'int' AND TRY_CAST({t} AS BIGINT) BETWEEN 0 AND {_MAX_INTEGER}) OR ({k} = 'float' AND {integral_float}) "
          f"OR ({k} IN ('string', 'text') AND {digits}) OR ({k} = 'text' AND {integral_float})"
          + (f" OR {k} = 'null' OR ({k} IN ('string', 'text') AND LOWER({s}) IN ('', 'null', 'none')))"
             if nullable else ")"))
    return value, f"NOT {ok}"


def _category_sql(name: str, required: bool, d: Dialect, native: bool = False) -> tuple[str, str]:
    """``(value, bad)`` SQL of a categorical column (any scalar as text; NaN and null are null).

    ``native``: the raw column is a STRING whose kind is ``string`` or ``null`` (NULL)."""
    t, k = _text(name, d)
    if native:
        return t, (f"{t} IS NULL" if required else "FALSE")
    value = f"CASE WHEN {k} = 'null' THEN NULL ELSE {t} END"
    return value, (f"({k} = 'null' OR {t} IS NULL)" if required else "FALSE")


def _verdict_sql(d: Dialect) -> tuple[str, str, str, str]:
    """``(yes, no, real, bad)`` SQL over ``cot_verdicts__list`` (a list of verdict texts, NULL
    elements invalid) and ``cot_verdicts__kind`` (``null``: no verdicts, ``other``: not a list)."""
    items = d.ident("cot_verdicts__list")
    k = d.ident("cot_verdicts__kind")

    def count(body: str) -> str:
        return f"CASE WHEN {items} IS NULL THEN 0 ELSE {d.list_length}(filter({items}, {d.lambda_('v', body)})) END"

    yes = count("LOWER(v) IN ('true', '1')")
    no = count("LOWER(v) IN ('false', '0')")
    real = f"CASE WHEN {items} IS NULL THEN 0 ELSE {d.list_length}({items}) END"
    unknown = count("v IS NOT NULL AND LOWER(v) NOT IN ('true', 'false', '1', '0')")
    bad = f"({k} = 'other' OR ({k} = 'list' AND {unknown} > 0))"
    return yes, no, real, bad


def typed_sql(raw: str, present: Sequence[str], fields: Sequence[str], d: Dialect, *,
              pass_through: Sequence[str] = (), native: Collection[str] = ()) -> str:
    """SELECT of the typed sample rows from ``raw``, with ``row_bad`` true where a row breaks a
    per-row rule of the sample table.

    ``raw`` has, for every column ``x`` in ``present``, the text ``x`` and its kind ``x__kind``
    (one of :data:`KINDS`); ``cot_verdicts`` comes as ``cot_verdicts__list`` (verdict texts) and
    ``cot_verdicts__kind`` (``null``, ``list`` or ``other``). Columns absent from ``present``
    become NULL. ``fields`` (extra categorical columns asked for) come out as ``f0, f1, ...``;
    ``pass_through`` columns of ``raw`` (an engine's bookkeeping: which keys a JSON line has)
    are kept as they are. ``native`` names columns that ``raw`` holds in their own SQL type
    (BOOLEAN for ``correct`` and ``finished``, BIGINT for the integer columns, STRING for the
    categorical ones; NULL where the kind is ``null``): an engine that reads typed data
    (Parquet, a DataFrame) sends them so, and the rule runs on the value without its text (the
    same rule: the branches of the value's own kind).
    """
    from kpass.data.columns import REQUIRED_COLUMNS

    select: list[str] = []
    bad: list[str] = []
    kinds = [(("model", "task", "problem_id", "answer"), _category_sql, "STRING"),
             (BOOLEAN_COLUMNS, _bool_sql, "BOOLEAN"), (INTEGER_COLUMNS, _int_sql, "BIGINT")]
    for names, rule, sql_type in kinds:
        for name in names:
            if name not in present:
                select.append(f"CAST(NULL AS {sql_type}) AS {name}")
                continue
            required = name in REQUIRED_COLUMNS
            value, wrong = rule(name, required if rule is _category_sql else not required, d, name in native)
            select.append(f"{value} AS {name}")
            bad.append(wrong)
    if "cot_verdicts" in present:
        yes, no, real, wrong = _verdict_sql(d)
        select += [f"{yes} AS cot_yes", f"{no} AS cot_no", f"{real} AS cot_real"]
        bad.append(wrong)
    else:
        select += ["0 AS cot_yes", "0 AS cot_no", "0 AS cot_real"]
    for number, field in enumerate(fields):
        value = _category_sql(field, False, d, field in native)[0] if field in present else "CAST(NULL AS STRING)"
        select.append(f"{value} AS f{number}")
    if "finished" in present:  # a correct sample has finished (docs/spec.md section 6)
        finished = _bool_sql("finished", True, d, "finished" in native)[0]
        correct = _bool_sql("correct", False, d, "correct" in native)[0]
        bad.append(f"(({correct}) AND ({finished}) IS NOT NULL AND NOT ({finished}))")
    select += [d.ident(name) for name in pass_through]
    row_bad = " OR ".join(f"COALESCE({rule}, TRUE)" for rule in bad) or "FALSE"
    return f"SELECT {', '.join(select)}, ({row_bad}) AS row_bad FROM {raw}"


def _count(condition: str) -> str:
    return f"SUM(CASE WHEN {condition} THEN 1 ELSE 0 END)"


def _position_sql() -> str:
    """Output-token position of a sample's final answer (NULL: not finished within what was
    generated), docs/spec.md section 6: ``answer_token`` when known, else ``output_tokens`` of a
    finished sample."""
    return "CASE WHEN answer_token IS NOT NULL THEN answer_token WHEN finished THEN output_tokens ELSE NULL END"


def budget_rule_sql(budget: int) -> str:
    """Samples :func:`kpass.metrics.budget_counts` cannot place within ``budget`` (its rules)."""
    return ("((answer_token IS NOT NULL AND finished = FALSE) OR (answer_token > output_tokens) "
            "OR (answer_token IS NULL AND finished IS NULL) "
            "OR (answer_token IS NULL AND finished AND output_tokens IS NULL) "
            f"OR (answer_token IS NULL AND finished = FALSE AND (output_tokens IS NULL OR output_tokens < {int(budget)})))")


def as_run_rule_sql() -> str:
    """Samples :func:`kpass.metrics.budget_counts` cannot place at budget ``None`` (as run)."""
    return ("((answer_token IS NOT NULL AND finished = FALSE) OR (answer_token > output_tokens) "
            "OR (answer_token IS NULL AND finished IS NULL))")


#: Sample indices 0 .. 64 * INDEX_WORDS - 1 are counted as bits by :func:`distinct_indices_sql`.
INDEX_WORDS = 4


def distinct_indices_sql(d: Dialect, *, wide: bool = True) -> str:
    """``n_indices`` of :func:`reduction_sql` without a DISTINCT hash table for the usual indices
    (``COUNT(DISTINCT sample_index)`` over millions of problems costs ten times the scan, runs a
    10^8-row DuckDB reduction out of memory, and makes Spark expand every row into two): index
    ``i`` in ``0 .. 64 * INDEX_WORDS - 1`` sets bit ``i % 64`` of word ``i // 64``, and its
    distinct count is the number of set bits. With ``wide``, the other indices (negative or
    larger) are counted by a DISTINCT over those rows only, so the count is exact for every
    input; without it the count is exact for the problems whose indices are all in
    ``0 .. 64 * INDEX_WORDS - 1`` (``min_index >= 0``, ``max_index`` below it), and the caller
    sends the other inputs elsewhere (the DuckDB JSONL fast path flags them ``wide_index``; the
    Spark engine reduces again with ``wide``)."""
    def bit(offset: str) -> str:
        if d.name == "duckdb":
            return f"CAST(1 AS UBIGINT) << CAST({offset} AS UBIGINT)"
        return f"shiftleft(CAST(1 AS BIGINT), CAST({offset} AS INT))"

    words = [f"COALESCE(bit_count(bit_or(CASE WHEN sample_index BETWEEN {64 * j} AND {64 * j + 63} THEN "
             f"{bit(f'sample_index - {64 * j}')} END)), 0)" for j in range(INDEX_WORDS)]
    if wide:
        words.append(f"COUNT(DISTINCT CASE WHEN sample_index < 0 OR sample_index >= {64 * INDEX_WORDS} "
                     "THEN sample_index END)")
    return " + ".join(words)


def reduction_sql(typed: str, needs: Needs, *, flags: Sequence[str] = (), first_seen: str | None = None,
                  distinct_indices: str = "COUNT(DISTINCT sample_index)") -> str:
    """The GROUP BY of ``typed`` (from :func:`typed_sql`) into one row per problem and, for
    cons@k, one row per (problem, answer), in one scan (``GROUPING SETS``).

    Rows with ``is_problem = 1`` are problems: ``model, task, problem_id, n_samples, n_correct``,
    the key checks (``min_index``, ``max_index``, ``n_indices``: the indices are ``0..n-1``
    exactly when ``min_index = 0``, ``max_index = n - 1`` and ``n_indices = n``), ``n_bad`` (rows
    breaking a per-row rule), ``any_<flag>`` for each boolean column in ``flags`` and what
    ``needs`` asks for. Rows with ``is_problem = 0`` are answer classes: ``answer, n_gold,
    n_wrong`` (see :func:`classes_sql`). With ``first_seen`` (a column ordering the rows as
    the input has them), ``first_seen`` is its minimum per problem: categories then come in
    order of first appearance, as in :class:`~kpass.SampleTable`. ``distinct_indices`` is how
    the engine counts distinct indices (default ``COUNT(DISTINCT sample_index)``).
    """
    select = [
        "model", "task", "problem_id", "COUNT(*) AS n_samples", f"{_count('correct')} AS n_correct",
        "MIN(sample_index) AS min_index", "MAX(sample_index) AS max_index",
        f"{distinct_indices} AS n_indices", f"{_count('row_bad')} AS n_bad",
    ]
    select += [f"{_count(flag)} AS any_{flag}" for flag in flags]
    if first_seen is not None:
        select.append(f"MIN({first_seen}) AS first_seen")
    if needs.finished:
        select += [f"{_count('finished')} AS n_finished", f"{_count('finished IS NULL')} AS n_finished_null"]
    if needs.answer_classes:  # n_wrong_cut: answers of unfinished generations (they abstain by default)
        select += [f"{_count('correct AND answer IS NULL')} AS n_gold_without_answer",
                   f"{_count('NOT correct AND answer IS NULL')} AS n_invalid",
                   f"{_count('NOT correct AND answer IS NOT NULL AND finished = FALSE')} AS n_cut_answers",
                   f"{_count('NOT correct AND answer IS NOT NULL AND finished IS NULL')} AS n_unknown_answers",
                   "answer", "GROUPING(answer) AS is_problem", f"{_count('correct')} AS n_gold",
                   f"{_count('NOT correct')} AS n_wrong", f"{_count('NOT correct AND finished = FALSE')} AS n_wrong_cut"]
    else:
        select.append("1 AS is_problem")
    if needs.cot:
        select += [f"{_count('correct AND cot_yes >= 1')} AS cot_any",
                   f"{_count('correct AND cot_yes > cot_no')} AS cot_majority",
                   f"{_count('correct AND cot_real >= 1 AND cot_yes = cot_real')} AS cot_all"]
    position = _position_sql()
    for number, budget in enumerate(needs.budgets):
        within = f"({position}) <= {int(budget)}"
        select += [f"{_count(within)} AS fin_b{number}", f"{_count(f'correct AND {within}')} AS cor_b{number}",
                   f"{_count(budget_rule_sql(budget))} AS bad_b{number}"]
    if needs.as_run:
        done = "(answer_token IS NOT NULL OR finished)"
        select += [f"{_count(done)} AS fin_asrun", f"{_count(f'correct AND {done}')} AS cor_asrun",
                   f"{_count(as_run_rule_sql())} AS bad_asrun"]
    if needs.tokens:
        select += ["COALESCE(SUM(output_tokens), 0) AS tokens_sum", f"{_count('output_tokens IS NULL')} AS tokens_null"]
        select += [f"COALESCE(SUM(LEAST(output_tokens, {int(budget)})), 0) AS tokens_b{number}"
                   for number, budget in enumerate(needs.budgets)]
    for number, _ in enumerate(needs.carried_fields):
        select += [f"MIN(f{number}) AS f{number}_min", f"MAX(f{number}) AS f{number}_max",
                   f"{_count(f'f{number} IS NULL')} AS f{number}_nulls"]
    group = ("GROUPING SETS ((model, task, problem_id), (model, task, problem_id, answer))"
             if needs.answer_classes else "model, task, problem_id")
    return f"SELECT {', '.join(select)} FROM ({typed}) typed GROUP BY {group}"


def problems_sql(reduced: str) -> str:
    """The problem rows of a reduction (:func:`reduction_sql`) stored as ``reduced``, numbered
    ``pid`` in (model, task, problem_id) order."""
    return (f"SELECT *, ROW_NUMBER() OVER (ORDER BY model, task, problem_id) - 1 AS pid "
            f"FROM {reduced} WHERE is_problem = 1")


def classes_sql(reduced: str, problems: str) -> str:
    """``pid, n_gold, n_wrong, n_wrong_cut`` of every non-null answer of every problem (cons@k)."""
    return (f"SELECT p.pid AS pid, c.n_gold AS n_gold, c.n_wrong AS n_wrong, c.n_wrong_cut AS n_wrong_cut "
            f"FROM {reduced} c JOIN {problems} p "
            "ON c.model = p.model AND c.task = p.task AND c.problem_id = p.problem_id "
            "WHERE c.is_problem = 0 AND c.answer IS NOT NULL")


# ----------------------------------------------------------------------------------------------
# the statistics


class Violation(Exception):
    """Raised inside kpass when an engine's statistics show a broken rule; caught where the
    computation started and turned into the numpy error by :func:`raise_violation`.

    ``keys`` holds ``(task, problem_id)`` of the offending problems; ``[]`` for a per-row rule
    (every row is converted again, none kept); ``None`` for an error about the whole input
    (everything is read again).
    """

    def __init__(self, keys: list[tuple[str, str]] | None, rule: str) -> None:
        super().__init__(rule)
        self.keys = keys
        self.rule = rule


def _codes_by_first_appearance(values: NDArray[np.object_], first_seen: NDArray[np.float64],
                                ) -> tuple[NDArray[np.int64], list[str]]:
    """Codes (``-1`` null) and categories of per-problem values, categories ordered by the first
    row that has them (``first_seen`` of each problem), as :class:`~kpass.SampleTable` orders them."""
    null = np.equal(values, _NULL) if values.size else np.zeros(0, dtype=bool)
    text = np.where(null, "", values).astype(str)
    uniques, inverse = np.unique(text[~null], return_inverse=True)
    inverse = inverse.reshape(-1)
    first = np.full(len(uniques), np.inf)
    np.minimum.at(first, inverse, first_seen[~null])
    ranked = np.argsort(first, kind="stable")
    rank = np.empty_like(ranked)
    rank[ranked] = np.arange(len(ranked))
    codes = np.full(len(values), -1, dtype=np.int64)
    codes[~null] = rank[inverse]
    return codes, uniques[ranked].tolist()


class NothingLocated(Exception):
    """The numpy readers found no row to report for a :class:`Violation` (a bug: the SQL rule
    and the numpy check disagree)."""


class ProblemStatistics:
    """Per-problem sufficient statistics of a sample log: the input of every metric.

    One row per problem (model, task, problem_id), sorted by those names. It answers what
    :func:`kpass.compute_report` and :func:`kpass.compute_comparison` ask of a
    :class:`~kpass.SampleTable` (``problem_index``, ``codes``, ``categories``, ...), with every
    "row" a problem, so the report code runs unchanged on it.

    Attributes
    ----------
    n_samples, n_correct : ndarray of int64, shape (N,)
    n_finished, n_finished_null : ndarray of int64 or None
        Finished samples and samples whose ``finished`` is null (fin@k).
    class_counts : ndarray of int64, shape (N, M), or None
        Column 0 the gold (correct) samples, columns 1.. the wrong-answer classes, largest first
        (:func:`kpass.metrics.cons_at_k`); ``n_invalid`` the samples without an answer, the
        answers of unfinished generations among them (they abstain); :meth:`answer_classes_of`
        gives both rules. ``n_cut_answers``: those answers of unfinished generations per problem.
    cot_correct : dict rule -> ndarray of int64
        Samples with a correct answer whose chain of thought passes ``rule``.
    budget_correct, budget_finished : dict B -> ndarray of int64
        ``c_B`` and ``f_B`` (docs/spec.md section 6); key ``None``: as run.
    tokens_spent : dict (B or None) -> ndarray of int64
        Output tokens per problem, ``sum t`` (key ``None``) and ``sum min(t, B)``; with
        ``tokens_null`` the samples without ``output_tokens`` (the sums skip them).
    flags : dict str -> ndarray of bool
        Problems that break a rule checked only where a metric uses them (``answers``,
        ``budget:B``, ``finished``, ``varies:FIELD``, ``null:FIELD``); using such a problem raises
        the error the numpy path gives (:func:`raise_violation`).
    judges : ndarray of object, shape (N, 2)
        The first and last judge name (:data:`JUDGE_COLUMN`, in code-point order, SQL's ``MIN``
        and ``MAX``) among each problem's samples; None where they have none.
    sources : list of str
        The files read (errors about the whole input name them).
    columns_present : tuple of str
        Columns of the input (schema and extra columns).
    extra_columns, notes : tuple of str
        As :attr:`kpass.SampleTable.extra_columns` and :attr:`kpass.SampleTable.notes`.
    engine : str
        ``"numpy"``, ``"duckdb"`` or ``"spark"``.
    """

    def __init__(self, *, keys: Mapping[str, NDArray[np.object_]], n_samples: NDArray, n_correct: NDArray,
                 fields: Mapping[str, NDArray[np.object_]] | None = None, sources: Sequence[str] = (),
                 columns_present: Sequence[str] = (), extra_columns: Sequence[str] = (), notes: Iterable[str] = (),
                 engine: str = "numpy", locate: Callable[[list[tuple[str, str]] | None], "SampleTable"] | None = None,
                 first_seen: NDArray | None = None) -> None:
        model, task, problem = (np.asarray(keys[name], dtype=object) for name in ("model", "task", "problem_id"))
        n = len(model)
        first = np.arange(n, dtype=np.float64) if first_seen is None else np.asarray(first_seen, dtype=np.float64)
        self._categories: dict[str, list[str]] = {}
        codes: dict[str, NDArray[np.int64]] = {}
        for name, values in (("model", model), ("task", task), ("problem_id", problem),
                             *((name, np.asarray(v, dtype=object)) for name, v in (fields or {}).items())):
            codes[name], self._categories[name] = _codes_by_first_appearance(values, first)
        order = np.lexsort((codes["problem_id"], codes["task"], codes["model"])) if n else np.zeros(0, np.int64)
        self._order_in = order
        self._codes = {name: values[order] for name, values in codes.items()}
        self.n_samples = np.asarray(n_samples, dtype=np.int64)[order]
        self.n_correct = np.asarray(n_correct, dtype=np.int64)[order]
        self.n_finished: NDArray[np.int64] | None = None
        self.n_finished_null: NDArray[np.int64] | None = None
        self.class_counts: NDArray[np.int64] | None = None
        self.n_invalid: NDArray[np.int64] | None = None
        self.n_cut_answers: NDArray[np.int64] | None = None
        self.n_unknown_answers: NDArray[np.int64] | None = None  # wrong answers whose `finished` is null
        self._answer_classes: dict[str, tuple[NDArray[np.int64], NDArray[np.int64]]] = {}
        self.cot_correct: dict[str, NDArray[np.int64]] = {}
        self.budget_correct: dict[int | None, NDArray[np.int64]] = {}
        self.budget_finished: dict[int | None, NDArray[np.int64]] = {}
        self.tokens_spent: dict[int | None, NDArray[np.int64]] = {}
        self.tokens_null: NDArray[np.int64] | None = None
        self.flags: dict[str, NDArray[np.bool_]] = {}
        self.judges: NDArray[np.object_] = np.full((n, 2), None, dtype=object)
        self.sources = list(sources)
        self.columns_present = tuple(columns_present)
        self.extra_columns = tuple(extra_columns)
        self.notes = tuple(dict.fromkeys(notes))
        self.engine = engine
        self._locate = locate
        n = len(self.n_samples)
        arange = np.arange(n, dtype=np.int64)
        from kpass.data.table import _ProblemIndex  # each problem is one "row" here

        self.problem_index = _ProblemIndex(arange, arange, self.n_samples, self.n_correct, self._codes["model"],
                                              self._codes["task"], self._codes["problem_id"])

    @classmethod
    def stand_in(cls, sources: Sequence[str], engine: str,
                 locate: Callable[[list[tuple[str, str]] | None], "SampleTable"]) -> "ProblemStatistics":
        """No problems, only the way back to the rows: what :func:`raise_violation` needs of an
        engine that found a rule broken before it had any statistics."""
        empty = np.zeros(0, dtype=object)
        return cls(keys={"model": empty, "task": empty, "problem_id": empty}, n_samples=np.zeros(0, np.int64),
                   n_correct=np.zeros(0, np.int64), sources=sources, engine=engine, locate=locate)

    def put(self, values: Any, *, dtype: Any = np.int64) -> NDArray:
        """A per-problem array given in the order of the constructor's ``keys``, in this order."""
        return np.asarray(values, dtype=dtype)[self._order_in]

    def set_answer_classes(self, rule: str, class_counts: NDArray[np.int64], n_invalid: NDArray[np.int64]) -> None:
        """Store the answer classes under cut-answer ``rule`` (``abstain``: also :attr:`class_counts`)."""
        self._answer_classes[rule] = (class_counts, n_invalid)
        if rule == "abstain":
            self.class_counts, self.n_invalid = class_counts, n_invalid

    def answer_classes_of(self, rule: str) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """``(class_counts, n_invalid)`` with the answers of unfinished generations abstaining
        (``"abstain"``) or voting (``"vote"``), in problem order."""
        return self._answer_classes[rule]

    # ------------------------------------------------------------------ the SampleTable face

    def __len__(self) -> int:
        return len(self.n_samples)

    def __repr__(self) -> str:
        return (f"<ProblemStatistics {len(self)} problems, {int(self.n_samples.sum())} samples, "
                f"engine={self.engine}, models={self._categories['model'][:5]}>")

    @property
    def columns(self) -> tuple[str, ...]:
        return self.columns_present

    def has_column(self, name: str) -> bool:
        return name in self.columns_present

    def is_categorical(self, name: str) -> bool:
        return name in self._categories

    def codes(self, name: str) -> NDArray[np.int64]:
        """Per-problem codes of a categorical field (``-1`` null); see :meth:`check_field`."""
        if name not in self._codes:
            raise KeyError(f"the statistics hold no field '{name}'; fields: {', '.join(self._codes)}")
        return self._codes[name]

    def categories(self, name: str) -> list[str]:
        return list(self._categories[name])

    def n_categories(self, name: str) -> int:
        return len(self._categories[name])

    def category_values(self, name: str) -> NDArray[np.object_]:
        values = np.empty(len(self._categories[name]), dtype=object)
        values[:] = self._categories[name]
        return values

    def error_location(self, row: int | None = None) -> dict[str, Any]:
        """``source=``/``line=`` for an error about the whole input. An error at a row (a problem
        here) raises :class:`Violation` instead: its line is located by reading the input again
        (:func:`raise_violation`), never guessed."""
        from kpass.data.columns import _describe_sources

        if row is not None:
            raise Violation(None, "an error at a sample")
        return {"source": _describe_sources(self.sources), "line": None}

    def location(self, row: int) -> tuple[str, int]:
        """Never known here: raises :class:`Violation`, so the line is located by reading again."""
        raise Violation(None, "an error at a sample")

    def describe_problem(self, row: int) -> str:
        return ", ".join(repr(self._categories[name][int(self._codes[name][row])])
                         for name in ("model", "task", "problem_id"))

    # ------------------------------------------------------------------ rules checked on use

    def keys_of(self, problems: NDArray[np.int64]) -> list[tuple[str, str]]:
        """``(task, problem_id)`` of problems (what :func:`raise_violation` reads again)."""
        tasks = self.category_values("task")[self._codes["task"][problems]]
        ids = self.category_values("problem_id")[self._codes["problem_id"][problems]]
        return list(dict.fromkeys(zip(tasks.tolist(), ids.tolist())))

    def check(self, flag: str, problems: NDArray[np.int64] | None = None) -> None:
        """Raise :class:`Violation` when any of ``problems`` (default: all) has ``flag`` set."""
        mask = self.flags.get(flag)
        if mask is None:
            return
        chosen = mask if problems is None else mask[problems]
        if chosen.any():
            where = np.flatnonzero(chosen) if problems is None else problems[chosen]
            raise Violation(self.keys_of(where[:1000]), flag)

    def check_rows(self, broken: NDArray[np.bool_], rule: str) -> None:
        """Raise :class:`Violation` naming ``rule`` when any problem is ``broken``."""
        if broken.any():
            raise Violation(self.keys_of(np.flatnonzero(broken)[:1000]), rule)

    def check_field(self, field: str, *, allow_null: bool) -> NDArray[np.int64]:
        """Codes of ``field`` per problem after its rules: one value per problem, non-null
        unless ``allow_null``."""
        self.check(f"varies:{field}")
        if not allow_null:
            self.check(f"null:{field}")
        return self._codes[field]

    def locate(self, keys: list[tuple[str, str]] | None) -> "SampleTable":
        """The rows of the problems ``keys`` (``None``: every row; ``[]``: none, after
        converting every row) read again by the numpy readers, which raise every per-row and
        key error with its file and line."""
        if self._locate is None:
            raise RuntimeError("these statistics cannot be traced back to their samples")
        return self._locate(keys)

    # ------------------------------------------------------------------ the numpy reduction

    def equals(self, other: "ProblemStatistics") -> bool:
        """Whether two reductions hold the same statistics (for the engine equality tests)."""
        return not self.differences(other)

    def differences(self, other: "ProblemStatistics") -> list[str]:
        """Names of the statistics that differ between ``self`` and ``other``."""
        out = []
        for name in ("model", "task", "problem_id", *[f for f in self._codes if f not in ("model", "task", "problem_id")]):
            if name not in other._codes:
                out.append(name)
                continue
            # code -1 (null) picks the None appended: a field null everywhere has no category at all
            mine = np.append(self.category_values(name), _NULL)[self._codes[name]]
            theirs = np.append(other.category_values(name), _NULL)[other._codes[name]]
            if mine.tolist() != theirs.tolist():
                out.append(name)
        for name in ("n_samples", "n_correct", "n_finished", "class_counts", "n_invalid", "n_cut_answers",
                     "n_unknown_answers", "tokens_null", "judges"):
            a, b = getattr(self, name), getattr(other, name)
            if (a is None) != (b is None) or (a is not None and not np.array_equal(a, b)):
                out.append(name)
        if self._answer_classes.keys() != other._answer_classes.keys() or any(
                not all(np.array_equal(x, y) for x, y in zip(self._answer_classes[rule], other._answer_classes[rule]))
                for rule in self._answer_classes):
            out.append("answer_classes")
        for name in ("cot_correct", "budget_correct", "budget_finished", "tokens_spent"):
            a, b = getattr(self, name), getattr(other, name)
            if a.keys() != b.keys() or any(not np.array_equal(a[key], b[key]) for key in a):
                out.append(name)
        if tuple(self.sources) != tuple(other.sources):
            out.append("sources")
        if set(self.extra_columns) != set(other.extra_columns):
            out.append("extra_columns")
        return out


def statistics_from_rows(problems: Mapping[str, NDArray], classes: Mapping[str, NDArray] | None, needs: Needs, *,
                         sources: Sequence[str], columns_present: Sequence[str], extra_columns: Sequence[str],
                         engine: str, locate: Callable[[list[tuple[str, str]] | None], "SampleTable"],
                         ) -> ProblemStatistics:
    """:class:`ProblemStatistics` from the fetched result of :func:`reduction_sql` (column name ->
    array, one entry per problem; ``classes`` one per (problem, answer)).

    Raises
    ------
    Violation
        A per-row rule (``n_bad``) or a key rule (indices not ``0..n-1``) is broken.
    """
    n = np.asarray(problems["n_samples"], dtype=np.int64)
    keys = {name: np.asarray(problems[name], dtype=object) for name in ("model", "task", "problem_id")}
    if int(np.asarray(problems["n_bad"], dtype=np.int64).sum()):
        raise Violation([], "a row breaks a rule of the sample table")
    low, high = (np.asarray(problems[name], dtype=np.int64) for name in ("min_index", "max_index"))
    distinct = np.asarray(problems["n_indices"], dtype=np.int64)
    broken = (low != 0) | (high != n - 1) | (distinct != n)
    if broken.any():
        where = np.flatnonzero(broken)[:1000]
        raise Violation(list(dict.fromkeys(zip(keys["task"][where].tolist(), keys["problem_id"][where].tolist()))),
                        "sample_index is not 0..n-1")
    fields, ends = {}, {}
    flags: dict[str, NDArray[np.bool_]] = {}
    for number, field in enumerate(needs.carried_fields):
        low_f, high_f = (np.asarray(problems[f"f{number}_{end}"], dtype=object) for end in ("min", "max"))
        nulls = np.asarray(problems[f"f{number}_nulls"], dtype=np.int64)
        flags[f"varies:{field}"] = ((nulls > 0) & (nulls < n)) | np.array(
            [a != b for a, b in zip(low_f.tolist(), high_f.tolist())], dtype=bool)
        flags[f"null:{field}"] = nulls == n
        fields[field] = np.where(nulls == n, _NULL, low_f)
        ends[field] = np.stack([fields[field], np.where(nulls == n, _NULL, high_f)], axis=1)
    stats = ProblemStatistics(keys=keys, n_samples=n, n_correct=problems["n_correct"], fields=fields, sources=sources,
                              columns_present=columns_present, extra_columns=extra_columns, engine=engine,
                              locate=locate, first_seen=problems.get("first_seen"))
    for name, mask in flags.items():
        stats.flags[name] = stats.put(mask, dtype=bool)
    stats.judges = stats.put(ends[JUDGE_COLUMN], dtype=object)
    if needs.finished:
        stats.n_finished = stats.put(problems["n_finished"])
        stats.n_finished_null = stats.put(problems["n_finished_null"])
        stats.flags["finished"] = stats.n_finished_null > 0
    if needs.cot:
        for rule in COT_RULES:
            stats.cot_correct[rule] = stats.put(problems[f"cot_{rule}"])
    for number, budget in enumerate(needs.budgets):
        stats.budget_finished[budget] = stats.put(problems[f"fin_b{number}"])
        stats.budget_correct[budget] = stats.put(problems[f"cor_b{number}"])
        stats.flags[f"budget:{budget}"] = stats.put(problems[f"bad_b{number}"]) > 0
    if needs.as_run:
        stats.budget_finished[None] = stats.put(problems["fin_asrun"])
        stats.budget_correct[None] = stats.put(problems["cor_asrun"])
        stats.flags["budget:None"] = stats.put(problems["bad_asrun"]) > 0
    if needs.tokens:
        stats.tokens_null = stats.put(problems["tokens_null"])
        for key, column in ((None, "tokens_sum"), *((b, f"tokens_b{i}") for i, b in enumerate(needs.budgets))):
            stats.tokens_spent[key] = stats.put(problems[column])
    if needs.answer_classes:
        _put_classes(stats, problems, classes or {})
    return stats


def _put_classes(stats: ProblemStatistics, problems: Mapping[str, NDArray], classes: Mapping[str, NDArray]) -> None:
    """Answer-class counts per problem (gold first, wrong classes largest first) and the
    ``answers`` flag (a gold sample without answer, or a wrong answer equal to a gold one);
    ``classes["pid"]`` is the position of the class's problem in ``problems``."""
    n_problems = len(stats)
    position = np.empty(n_problems, dtype=np.int64)
    position[stats._order_in] = np.arange(n_problems)  # fetched problem -> sorted position
    owner = position[np.asarray(classes.get("pid", []), dtype=np.int64)]
    gold = np.asarray(classes.get("n_gold", []), dtype=np.int64)
    wrong = np.asarray(classes.get("n_wrong", []), dtype=np.int64)
    clash = np.zeros(n_problems, dtype=bool)
    clash[owner[(gold > 0) & (wrong > 0)]] = True
    clash |= stats.put(problems["n_gold_without_answer"]) > 0
    stats.flags["answers"] = clash
    cut = np.asarray(classes.get("n_wrong_cut", []), dtype=np.int64)
    invalid = stats.put(problems["n_invalid"])
    stats.n_cut_answers = stats.put(problems["n_cut_answers"])
    stats.n_unknown_answers = stats.put(problems["n_unknown_answers"])
    abstained = invalid + stats.n_cut_answers
    for rule, sizes, n_invalid in (("vote", wrong, invalid), ("abstain", wrong - cut, abstained)):
        stats.set_answer_classes(rule, _class_matrix(owner, sizes, stats.n_correct), n_invalid)  # abstaining: no class


def _class_matrix(owner: NDArray[np.int64], sizes: NDArray[np.int64], gold: NDArray[np.int64]) -> NDArray[np.int64]:
    """Column 0 ``gold``, columns 1.. the classes of each problem (``owner``) with ``sizes > 0``,
    largest first, zero-padded (the layout :func:`kpass.metrics.class_counts_from_codes` gives)."""
    keep = sizes > 0
    owner, sizes = owner[keep], sizes[keep]
    order = np.lexsort((-sizes, owner))
    owner, sizes = owner[order], sizes[order]
    column = np.arange(owner.size) - np.searchsorted(owner, owner, side="left") + 1
    width = int(column.max()) + 1 if column.size else 1
    counts = np.zeros((len(gold), width), dtype=np.int64)
    counts[:, 0] = gold  # the gold class: samples judged correct
    counts[owner, column] = sizes
    return counts


# ----------------------------------------------------------------------------------------------
# the one place an engine's detection becomes the error text


def raise_violation(violation: Violation, statistics: ProblemStatistics,
                    compute: Callable[["SampleTable"], Any]) -> None:
    """Raise the :class:`~kpass.DataError` the numpy path gives for a rule an engine found broken.

    The engine found *that* a rule is broken (and, for rules about problems, *which* problems);
    the offending rows are read again by the numpy readers (:meth:`ProblemStatistics.locate`),
    which raise per-row and key errors with file, line and field, and ``compute`` (the numpy
    version of the computation that was running) raises the rest with the same text as ever.

    Raises
    ------
    DataError
        Always (the engine's rule and numpy's check disagree only through a bug, reported as such).
    """
    try:
        table = statistics.locate(violation.keys)
        compute(table)
    except NothingLocated:
        pass
    raise DataError(f"internal error: the {statistics.engine} engine found a broken rule ({violation.rule}) that the "
                    "numpy checks do not confirm; please report this. Meanwhile use --engine numpy",
                    **statistics.error_location())
