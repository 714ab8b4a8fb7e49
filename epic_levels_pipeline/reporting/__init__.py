"""Stage 6, reporting: the human report (Markdown and HTML with plots) from the warehouse tables."""
