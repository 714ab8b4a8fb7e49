"""Model providers: one module per provider behind one interface (see :mod:`.base`)."""
