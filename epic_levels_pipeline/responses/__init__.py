"""Stage 4, responses: conditions, offline responders, model calls (runner, cache, media) and providers.

``offline`` holds the conditions and the reference responders, ``runner`` turns items into response rows,
``calls`` runs calls with limits and retries, ``cache`` stores them, ``media`` cuts clip media, and
``providers/`` holds one module per model provider behind :class:`providers.Provider`.
"""
