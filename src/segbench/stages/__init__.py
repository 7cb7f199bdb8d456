"""The stages of a run, each over records and models: the audit, inference, scoring, submission
records, the results table and page, figures and overlays, the participant's uploads."""
