"""Tools that show a learner inside a kernel: Nsight Compute profiles and their metrics, and
the traced accesses that --visualize draws. Built on judge.workers and judge.judging."""
