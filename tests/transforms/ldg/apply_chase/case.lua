return { direction = "apply", key = "chase:next",
         why = "a read nested in a read of the same parameter: both are wrapped, the edits touch disjoint bytes" }
