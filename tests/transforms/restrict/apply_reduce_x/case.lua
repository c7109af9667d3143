return { direction = "apply", key = "scale:x", alias = {} }
