return { direction = "apply", key = "scale:n" }
