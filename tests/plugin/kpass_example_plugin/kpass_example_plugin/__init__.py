"""A worked example of a kpass plugin (installed and run by tests/plugin/test_example_plugin.py).

It adds
- the metric family ``pass-wr@k``: pass@k *with replacement*, ``1 - (1 - c/n)^k``, the plug-in
  estimate that needs only one sample per problem (and is biased low; kpass's ``pass@k`` is the
  unbiased one), and
- a reader for tab-separated sample tables (``.tsv``).
"""

import csv

import numpy as np

import kpass


class PassWithReplacement(kpass.MetricFamily):
    symbol = "pass-wr@"               # what users type: pass-wr@8 (case-insensitive)
    aliases = ("passwr@",)
    example = "pass-wr@1,8"
    description = "1 - (1 - c/n)^k: pass@k with replacement (plug-in, biased low)"

    def min_samples(self, spec):
        return 1                      # any n >= 1 works; kpass excludes problems with n < this

    def compute(self, problems, spec):
        # vectorized over problems: one value per problem, averaged by kpass with an interval
        return kpass.biased_plugin_pass_at_k(problems.n_samples, problems.n_correct, spec.k)


class TsvReader:
    suffixes = (".tsv",)
    description = "kpass sample table, tab-separated"

    def can_read(self, path):
        return str(path).endswith(".tsv")

    def read(self, path):
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle, delimiter="\t"))
        if not rows:
            raise kpass.DataError("the file is empty: no samples", source=str(path), line=1)
        header, body = rows[0], rows[1:]
        columns = {name: np.array([row[i] for row in body], dtype=object) for i, name in enumerate(header)}
        return kpass.SampleTable.from_columns(columns, source=str(path), lines=range(2, len(body) + 2))


@kpass.hookimpl
def register_metrics(register):
    register("pass-wr@k", PassWithReplacement())


@kpass.hookimpl
def register_readers(register):
    register("tsv", TsvReader())
