return { direction = "apply", key = "blur_rows", params = { min_blocks = "2" },
         why = "a 32 x 8 block: no #define holds 256, so the bound is the number; min_blocks from the params" }
