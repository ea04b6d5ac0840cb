"""Other catalogues' problems made tpuzzle puzzles (`tpuzzle import`): checkouts read as files
(checkouts), their code run in processes of their own (probe, probe_leetgpu, probe_gpumode,
probe_check, verify), what it gave converted (convert, shapes, tolerances, files), and what the
converted references call (runtime, and layout for GPU MODE's data). Imports go
cli -> sources -> core."""
