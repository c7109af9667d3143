return { direction = "undo", key = "partial_sums", roundtrip = false,
         why = "the undo site's params keep both texts (BLOCK, MIN_BLOCKS), but the counterpart apply site run without params writes the block size alone" }
