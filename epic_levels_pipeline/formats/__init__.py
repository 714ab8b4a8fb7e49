"""Stage 3, formats: one question asked in every answer format, and the reply parsers of those formats.

``items`` renders a question as yes/no, multiple-choice, statements, open, option-judgement and
open-with-reason items (with chance); ``parsing`` reads replies back into answers.
"""
