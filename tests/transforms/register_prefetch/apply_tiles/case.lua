return { direction = "apply", key = "tiles:load_tile" }
