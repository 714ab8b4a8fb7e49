"""Stage 2, question bank: evidence levels, the clip's evidence view, subtypes with their solvers and
distractors, the bank builder and its checks.

``levels`` says what evidence a question needs, ``clip_view`` is the per-clip view every solver reads,
``subtypes`` generates drafts per dataset, ``solvers`` derive keys from annotations alone, ``distractors``
builds candidate pools, ``build`` turns drafts into verified questions, ``checks`` audits them.
"""
