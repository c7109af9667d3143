return { direction = "apply", key = "matmul:A,B", why = "the naive product with a 16 x 16 block becomes the tiled form with BD x BD tiles" }
