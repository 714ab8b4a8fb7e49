"""Scored tables and their statistics: chance correction, cluster bootstrap, paired comparisons."""
