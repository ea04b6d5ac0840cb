"""Other catalogues' problems made tpuzzle puzzles (`tpuzzle import`): checkouts read as files
(checkouts), their code run in processes of their own (probe, probe_leetgpu, probe_gpumode,
verify), what it gave converted (convert, shapes, files), and what the converted references call
(runtime). Imports go cli -> sources -> core."""
