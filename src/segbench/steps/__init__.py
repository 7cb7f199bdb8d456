"""The harness's steps, one module each. The CLI subcommands, the one-shot command and hence the
workflow's rules call these, so no step is written twice. Each module imports only what its step
uses: the workflow derives a rule's code dependencies from the imports of the step it runs
(segbench.workflow.codedeps), so this package's __init__ stays empty of imports."""
