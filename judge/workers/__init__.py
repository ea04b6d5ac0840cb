"""The processes that run submission code: the zygote and its forks, the channel to a worker,
the worker itself and what runs inside it (the recorder, the replay player, the interpreter's
ledger), and its confinement. Imports nothing of judge.judging or judge.insight."""
