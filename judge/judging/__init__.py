"""Judging one submission or a batch: the plan of cases, the truths, the checks, the timer's
replay, the findings, the runner that assembles a report, and the local judge server. Built on
judge.workers."""
