return { direction = "apply", key = "scale2d:c,r", why = "the store's unit-stride index c follows threadIdx.y: x and y swap, with the launch" }
