return { direction = "apply", key = "matmul:sum:1d", roundtrip = false,
         why = "the 16 x 16 tiled product becomes v3's 64 x 64 x 8 tiles with 8 outputs a thread; undo writes the T = 32 tiled form, so BD 16 comes back as TILE 32" }
