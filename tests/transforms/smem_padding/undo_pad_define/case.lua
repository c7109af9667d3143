return { direction = "undo", key = "flip:t", roundtrip = false,
         why = "undo drops `+ PAD`; apply writes the padding back as `+ 1`" }
