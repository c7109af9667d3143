return { direction = "apply", key = "define:BLOCK", params = { value = 1024 }, roundtrip = false,
         why = "the inverse halves BLOCK to 512 (MIN_BLOCKS 2), not back to v7's 256" }
